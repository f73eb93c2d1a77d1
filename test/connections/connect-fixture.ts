// A server with one connection, `tracker`, whose tool `tracker_issues` takes the caller's tracker token; an in-memory
// vault; and a fake authorization flow whose "authorization server" is a tiny page on 127.0.0.1 that redirects back
// to the callback with a code (or an error), so a browser's whole journey runs. Tests steer it through `as`.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';
import { connectionsServer } from '../../examples/connections.js';
import { DevTokens, parseDevTokens } from '../../src/auth/index.js';
import {
  type AuthorizationFlow,
  type ConnectionEvent,
  type ConnectionOwner,
  ConnectionRefused,
  type ConnectionSummary,
  type HeldTokens,
  type PendingAuthorization,
  type TokenGrant,
  type TokenVault,
} from '../../src/connections/index.js';
import type { RoundEvent } from '../../src/server/index.js';
import { generateKeySpec } from '../../src/state/index.js';
import { MemoryStore } from '../../src/stores/index.js';
import { PEOPLE } from '../controls/fixture.js';
import { freePort } from '../helpers/free-port.js';
import { mcp } from '../helpers/mcp-http.js';

// biome-ignore lint/suspicious/noExplicitAny: replies are read as loose JSON, checked by the expectations
type Loose = any;

const holds = (grant: TokenGrant | undefined, tokens: HeldTokens) =>
  grant?.accessToken === tokens.accessToken && grant.refreshToken === tokens.refreshToken;

/** The vault's contract in memory (the real one is storeVault): grants by (issuer, subject, connection). */
export class MemoryVault implements TokenVault {
  readonly grants = new Map<string, TokenGrant & ConnectionSummary>();
  puts = 0;
  constructor(private readonly now: () => number) {}
  private key = (o: ConnectionOwner, c: string) => JSON.stringify([o.issuer, o.subject, c]);
  async get(owner: ConnectionOwner, connection: string) {
    return this.grants.get(this.key(owner, connection));
  }
  async put(owner: ConnectionOwner, connection: string, grant: TokenGrant, replacing?: HeldTokens) {
    const before = this.grants.get(this.key(owner, connection));
    if (replacing && !holds(before, replacing)) return false;
    this.puts++;
    this.grants.set(this.key(owner, connection), {
      ...grant,
      connection,
      connectedAt: before?.connectedAt ?? this.now(),
      ...(before ? { refreshedAt: this.now() } : {}),
    });
    return true;
  }
  async remove(owner: ConnectionOwner, connection: string, holding?: HeldTokens) {
    const key = this.key(owner, connection);
    if (holding && !holds(this.grants.get(key), holding)) return false;
    return this.grants.delete(key);
  }
  async list(owner: ConnectionOwner) {
    return [...this.grants.entries()]
      .filter(([k]) => k.startsWith(JSON.stringify([owner.issuer, owner.subject]).slice(0, -1)))
      .map(([, g]) => ({
        connection: g.connection,
        issuer: g.issuer,
        scopes: g.scopes,
        connectedAt: g.connectedAt,
        ...(g.expiresAt === undefined ? {} : { expiresAt: g.expiresAt }),
      }));
  }
  async counts() {
    const counts: Record<string, number> = {};
    for (const g of this.grants.values()) counts[g.connection] = (counts[g.connection] ?? 0) + 1;
    return counts;
  }
}

/** The fake third party: what it answers next, and what it saw. */
export interface FakeAs {
  origin: string;
  /** The next /authorize answers with this OAuth error instead of a code. */
  deny?: string;
  /** The next start fails: discovery found the authorization server out of reach. */
  startFails?: boolean;
  /** The next refresh fails with this reason. */
  refreshFails?: ConnectionRefused['reason'];
  started: number;
  refreshes: number;
  revoked: string[];
  /** The last redirect back to the callback it sent (a replay test sends it again). */
  lastCallback?: string;
  /** The last authorization request started: what the server must keep sealed. */
  lastPending?: PendingAuthorization;
}

function fakeFlow(as: FakeAs, now: () => number): AuthorizationFlow & { codes: Map<string, string> } {
  const codes = new Map<string, string>();
  let n = 0;
  const grant = (): TokenGrant => {
    n++;
    return {
      accessToken: `tracker-at-${n}`,
      refreshToken: `tracker-rt-${n}`,
      expiresAt: now() + 3_600_000,
      scopes: ['issues:read'],
      issuer: as.origin,
    };
  };
  return {
    // The authorization endpoint's half of the fake: a code the finish below accepts once.
    codes,
    async start(redirectUri) {
      if (as.startFails) {
        as.startFails = undefined;
        throw new ConnectionRefused('unavailable', 'the authorization server could not be reached');
      }
      as.started++;
      const state = randomBytes(16).toString('base64url');
      const pending: PendingAuthorization = {
        state,
        codeVerifier: randomBytes(32).toString('base64url'),
        redirectUri,
        issuer: as.origin,
      };
      as.lastPending = pending;
      const url = new URL(`${as.origin}/authorize`);
      url.searchParams.set('state', state);
      url.searchParams.set('redirect_uri', redirectUri);
      return { url, pending };
    },
    async finish(callback, pending) {
      if (callback.searchParams.get('state') !== pending.state)
        throw new ConnectionRefused('mismatch', 'the state does not match');
      const error = callback.searchParams.get('error');
      if (error) throw new ConnectionRefused('denied', `the authorization server answered ${error}`);
      const code = callback.searchParams.get('code') ?? '';
      if (codes.get(code) !== pending.state) throw new ConnectionRefused('invalid_grant', 'unknown code');
      codes.delete(code);
      return grant();
    },
    async refresh() {
      as.refreshes++;
      const fails = as.refreshFails;
      if (fails) {
        as.refreshFails = undefined;
        throw new ConnectionRefused(fails, `refresh refused: ${fails}`);
      }
      return grant();
    },
    async revoke(g) {
      as.revoked.push(g.accessToken);
    },
  };
}

export async function connectServer(o: { pendingWaitMs?: number } = {}) {
  const clock = { now: Date.now() };
  const now = () => clock.now;
  const as: FakeAs = { origin: '', started: 0, refreshes: 0, revoked: [] };
  const flow = fakeFlow(as, now);
  // The "authorization server": every /authorize is allowed (or denied) at once, back to the redirect URI.
  const asServer = createServer((req, res) => {
    const url = new URL(req.url ?? '/', as.origin);
    const back = new URL(url.searchParams.get('redirect_uri') ?? '');
    const state = url.searchParams.get('state') ?? '';
    back.searchParams.set('state', state);
    if (as.deny) {
      back.searchParams.set('error', as.deny);
      as.deny = undefined;
    } else {
      const code = randomBytes(12).toString('base64url');
      flow.codes.set(code, state);
      back.searchParams.set('code', code);
    }
    as.lastCallback = back.href;
    res.writeHead(302, { location: back.href });
    res.end();
  });
  await new Promise<void>((resolve) => asServer.listen(0, '127.0.0.1', resolve));
  as.origin = `http://127.0.0.1:${(asServer.address() as AddressInfo).port}`;

  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const store = new MemoryStore({ now });
  const vault = new MemoryVault(now);
  const tokens = new DevTokens(parseDevTokens(PEOPLE));
  const events: ConnectionEvent[] = [];
  const listeners: Array<(e: ConnectionEvent) => void> = [];
  const rounds: RoundEvent[] = [];
  const stateKeys = generateKeySpec();
  const { server, connections } = connectionsServer({
    tokens,
    store,
    vault,
    flowFor: () => flow,
    // The fake tracker says which token it was called with (a real one would answer the person's issues).
    readIssues: async (token) => `issues read with ${token}`,
    resource: `${origin}/mcp`,
    stateKeys,
    observers: [{ observe: (e) => void rounds.push(e) }],
    pendingWaitMs: o.pendingWaitMs ?? 0,
    now,
    onEvent: (e) => {
      events.push(e);
      for (const l of listeners) l(e);
    },
  });
  // What the server's 2025 clients were told is done (the bridge's notifications/elicitation/complete).
  const done: string[] = [];
  const told = server.urlElicitationDone.bind(server);
  server.urlElicitationDone = (url) => {
    done.push(url);
    told(url);
  };
  const endpoint = await server.http({ port }).listen();
  onTestFinished(async () => {
    await endpoint.close();
    await store.close();
    await new Promise((resolve) => asServer.close(resolve));
  });
  return {
    origin,
    mcpUrl: endpoint.url,
    as,
    clock,
    vault,
    store,
    events,
    rounds,
    done,
    connections,
    call: (token: string, round: Record<string, unknown> = {}, name = 'tracker_issues') =>
      mcp(
        endpoint.url,
        'tools/call',
        { name, arguments: {}, ...round },
        { headers: { authorization: `Bearer ${token}` } },
      ).then((r) => r.response.result as Loose),
    /** Resolves at the first connection event that `match` accepts (from now on). */
    next: (match: (e: ConnectionEvent) => boolean) =>
      new Promise<ConnectionEvent>((resolve) => listeners.push((e) => match(e) && resolve(e))),
  };
}

export type ConnectFixture = Awaited<ReturnType<typeof connectServer>>;

/** The whole journey from Node, as a browser would make it: the link, the third party, the callback. */
export async function connectFromNode(
  link: string,
  cookie: string,
): Promise<{ status: number; html: string }> {
  const page = await fetch(link, { headers: { cookie }, redirect: 'manual' });
  if (page.status !== 303) return { status: page.status, html: await page.text() };
  const atAs = await fetch(page.headers.get('location')!, { redirect: 'manual' });
  const callback = await fetch(atAs.headers.get('location')!, { headers: { cookie }, redirect: 'manual' });
  return { status: callback.status, html: await callback.text() };
}
