// "Connect your account" with every part real: a third party's authorization server (oidc-provider), an upstream MCP
// server that takes only its JWTs, two gateway instances sharing a Redis store and one keyring, the real Connections
// with its vault and OAuth flow, and headless Chromium for the person. Alice is asked on instance A, connects in her
// browser, and her retried call runs on instance B. Bob is asked separately. Her token never reaches the client,
// the logs or the audit trail (each instance writes one, JSONL, read back byte for byte).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail, JsonlAuditReader, JsonlAuditSink } from '../../src/audit/index.js';
import {
  BearerAuth,
  DEV_TOKEN_ISSUER,
  DevTokens,
  JwtVerifier,
  parseDevTokens,
} from '../../src/auth/index.js';
import { Connections, storeVault } from '../../src/connections/index.js';
import { connectionConfigs, Gateway, PinBook, parseGatewayConfig } from '../../src/gateway/index.js';
import type { HttpEndpoint } from '../../src/server/index.js';
import { McpServer, text } from '../../src/server/index.js';
import { Keyring } from '../../src/state/index.js';
import { RedisStore } from '../../src/stores/index.js';
import { launchChromium } from '../helpers/chromium.js';
import { freePort } from '../helpers/free-port.js';
import { mcp } from '../helpers/mcp-http.js';
import { signedInBrowser } from '../helpers/page-sessions.js';
import { TestRedis } from '../helpers/redis-server.js';
import { startThirdPartyAs, type ThirdPartyAs } from '../helpers/third-party-as.js';

// biome-ignore lint/suspicious/noExplicitAny: replies are read as loose JSON, checked by the expectations
type Loose = any;

const KEYS = `k1:${Buffer.alloc(32, 7).toString('base64url')}`;
const PEOPLE = {
  'alice-token': { sub: 'alice', roles: ['staff'] },
  'bob-token': { sub: 'bob', roles: ['staff'] },
};

let redis: TestRedis;
let as: ThirdPartyAs;
let upstream: HttpEndpoint;
let browser: Browser;
const gateways: Array<{ url: string; origin: string; close(): Promise<void> }> = [];
/** Every line any part logged: a token must never be among them. */
const logged: string[] = [];
/** The bearer tokens the upstream received, by the subject it saw. */
const upstreamSaw = new Map<string, string>();
/** Each instance's audit trail (a JSONL file), its connections, and a clock B can be moved forward on. */
const auditDir = mkdtempSync(join(tmpdir(), 'mrtr-connect-e2e-'));
const trails: string[] = [];
const connectionsOn: Connections[] = [];
const clockB = { aheadMs: 0 };
/** Each connection event's write to its trail (durable once resolved). */
const recorded: Promise<void>[] = [];
/** The authorization code the callback carried (it must never reach the trail either). */
let authorizationCode = '';
const logger = {
  info: (...a: unknown[]) => logged.push(JSON.stringify(a)),
  warn: (...a: unknown[]) => logged.push(JSON.stringify(a)),
  error: (...a: unknown[]) => logged.push(JSON.stringify(a)),
};

beforeAll(async () => {
  redis = await TestRedis.start();
  const [upstreamPort, portA, portB] = [await freePort(), await freePort(), await freePort()];
  const resource = `http://127.0.0.1:${upstreamPort}/mcp`;
  as = await startThirdPartyAs({
    resource,
    redirectUris: [portA, portB].map((p) => `http://127.0.0.1:${p}/mrtr/connect/callback/tracker`),
  });
  const verifier = new JwtVerifier({ issuer: as.issuer, audience: resource });
  upstream = await new McpServer({
    name: 'tracker',
    version: '1.0.0',
    auth: new BearerAuth({ verifier, resource }),
    logger,
  })
    .tool({ name: 'whoami', description: 'Who the tracker sees' }, (_a, ctx) =>
      text(`tracker sees ${ctx.principal?.subject}`),
    )
    .listen({ host: '127.0.0.1', port: upstreamPort });
  upstream.server.prependListener('request', (req) => {
    const token = req.headers.authorization?.replace(/^Bearer /, '');
    if (token) void as.verify(token).then((who) => upstreamSaw.set(who.subject, token));
  });

  const config = parseGatewayConfig(
    `upstreams:
  - name: tracker
    url: ${resource}
    credentials:
      type: oauth
      issuer: ${as.issuer}
      clientId: ${as.client.id}
      clientSecret: { env: TRACKER_SECRET }
      scopes: [tickets:read, tickets:write]
rules:
  - tools: ["tracker/*"]
    roles: [staff]
`,
    'e2e.yaml',
  );
  const keyring = Keyring.fromSpec(KEYS);
  const tokens = new DevTokens(parseDevTokens(PEOPLE));
  for (const port of [portA, portB]) {
    // Each instance its own connection to the shared Redis, as two processes would have.
    const store = await RedisStore.connect(redis.url);
    const file = join(auditDir, `audit-${trails.length}.jsonl`);
    const trail = await AuditTrail.open(await JsonlAuditSink.open(file), { instance: `gw-${trails.length}` });
    const onB = trails.push(file) === 2;
    const connections = new Connections({
      store,
      vault: storeVault(store, keyring),
      keyring,
      connections: connectionConfigs(config, { TRACKER_SECRET: as.client.secret }),
      pendingWaitMs: 0,
      onEvent: (event) => {
        recorded.push(trail.connectionEvent(event));
        if (event.action === 'refreshed') clockB.aheadMs = 0; // one refresh: B's clock is right again
      },
      ...(onB ? { now: () => Date.now() + clockB.aheadMs } : {}),
    });
    connectionsOn.push(connections);
    const gateway = new Gateway({
      config,
      server: {
        auth: new BearerAuth({ verifier: tokens, resource: `http://127.0.0.1:${port}/mcp` }),
        signIn: { devTokens: tokens },
        stateKeys: keyring,
        logger,
        observers: [trail],
      },
      store,
      controls: { pendingWaitMs: 0 },
      pins: PinBook.inMemory(),
      connections,
    });
    connections.attach(gateway.server);
    await gateway.started;
    const endpoint = await gateway.server.listen({ host: '127.0.0.1', port });
    gateways.push({
      url: endpoint.url,
      origin: `http://127.0.0.1:${port}`,
      close: async () => {
        await endpoint.close({ graceMs: 0 });
        await gateway.close();
        await trail.close();
        await store.close();
      },
    });
  }
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  for (const g of gateways) await g.close();
  await upstream?.close({ graceMs: 0 });
  await as?.close();
  await redis?.stop();
  rmSync(auditDir, { recursive: true, force: true });
});

const call = (on: number, who: 'alice' | 'bob', round: Loose = {}, tool = 'tracker__whoami') =>
  mcp(
    gateways[on]!.url,
    'tools/call',
    { name: tool, arguments: {}, ...round },
    { headers: { authorization: `Bearer ${who}-token` } },
  ).then((r) => {
    seen.push(JSON.stringify(r.response));
    return (r.response.result ?? { error: r.response.error }) as Loose;
  });
/** Everything the MCP client was sent. */
const seen: string[] = [];
const textOf = (result: Loose) => (result.content ?? []).map((c: Loose) => c.text).join('\n');

describe('connect your account, every part real', () => {
  it('alice connects once on instance A; her retry and her later calls run on B with her own token', async () => {
    // Nobody has connected yet, so the gateway knows none of the tracker's tools: it offers one to connect.
    const first = await call(0, 'alice', {}, 'tracker__connect');
    expect(first.resultType, JSON.stringify(first)).toBe('input_required');
    const [key, question] = Object.entries(first.inputRequests)[0] as [string, Loose];
    expect(question.params.mode).toBe('url');
    expect(question.params.message).toMatch(/Connect your tracker account/);
    const link = question.params.url as string;
    expect(link.startsWith(`${gateways[0]!.origin}/mrtr/connect/`)).toBe(true);

    // In her browser, signed in at the gateway: the link sends her to the tracker's authorization server, and it
    // sends her back to the gateway's own callback.
    const { context, page } = await signedInBrowser(browser, gateways[0]!.origin, 'alice-token');
    page.setDefaultTimeout(30_000);
    // The provider's pages import a web font: the machine has no network, and waiting for it only slows the test.
    await page.route(
      (u) => u.hostname !== '127.0.0.1',
      (route) => route.abort(),
    );
    await page.goto(link);
    expect(new URL(page.url()).origin).toBe(as.issuer);
    await page.locator('input[name=login]').fill('alice');
    await page.locator('input[name=password]').fill('any');
    await page.locator('button[type=submit]').click();
    await page.getByRole('heading', { name: 'Authorize' }).waitFor();
    await page.locator('button[type=submit]').click();
    await page.waitForURL(/\/mrtr\/connect\/callback\/tracker\?/);
    const back = new URL(page.url());
    expect(back.origin).toBe(gateways[0]!.origin);
    expect(back.searchParams.get('iss')).toBe(as.issuer);
    authorizationCode = back.searchParams.get('code') ?? '';
    await page.getByText('Connected').first().waitFor();
    await context.close();

    // The retry goes to instance B, which did not run the connect flow: the vault is shared.
    const retried = await call(
      1,
      'alice',
      { requestState: first.requestState, inputResponses: { [key]: { action: 'accept' } } },
      'tracker__connect',
    );
    expect(retried.resultType, JSON.stringify(retried)).toBe('complete');
    expect(retried.isError).not.toBe(true);
    const later = await call(1, 'alice');
    expect(textOf(later)).toBe('tracker sees alice');
    const onA = await call(0, 'alice');
    expect(textOf(onA)).toBe('tracker sees alice');

    // Her own token went upstream; the client and the logs never saw it.
    const token = upstreamSaw.get('alice');
    expect(token).toBeDefined();
    for (const text of [...seen, ...logged]) expect(text).not.toContain(token);
  }, 120_000);

  it('bob is asked to connect his own account: he never gets alice’s', async () => {
    const bob = await call(1, 'bob');
    expect(bob.resultType).toBe('input_required');
    const [, question] = Object.entries(bob.inputRequests)[0] as [string, Loose];
    expect(question.params.mode).toBe('url');
    expect(upstreamSaw.has('bob')).toBe(false);
    // Alice's link is not bob's: opened by bob, it grants nothing.
    const aliceFirst = await call(0, 'alice');
    expect(textOf(aliceFirst)).toBe('tracker sees alice'); // alice is connected: no question for her
    const { context } = await signedInBrowser(browser, gateways[0]!.origin, 'bob-token');
    const cookie = (await context.cookies(gateways[0]!.origin)).map((c) => `${c.name}=${c.value}`).join('; ');
    const bobLink = question.params.url as string;
    const aliceOpensBobs = await signedInBrowser(browser, gateways[0]!.origin, 'alice-token');
    const aliceCookie = (await aliceOpensBobs.context.cookies(gateways[0]!.origin))
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');
    const refused = await fetch(bobLink, { headers: { cookie: aliceCookie }, redirect: 'manual' });
    expect(refused.status).toBe(403);
    const mine = await fetch(bobLink, { headers: { cookie }, redirect: 'manual' });
    expect(mine.status).toBe(303);
    await context.close();
    await aliceOpensBobs.context.close();
  }, 120_000);

  it('the audit trail says connected, used, refreshed and disconnected as they happen, and holds no token or code', async () => {
    const alice = { issuer: DEV_TOKEN_ISSUER, subject: 'alice' };
    const store = await RedisStore.connect(redis.url);
    const vault = storeVault(store, Keyring.fromSpec(KEYS));
    const first = await vault.get(alice, 'tracker');
    // Instance B's clock runs past the access token's expiry until it refreshes: her next call there does.
    clockB.aheadMs = 10 * 60_000;
    expect(textOf(await call(1, 'alice'))).toBe('tracker sees alice');
    expect(clockB.aheadMs).toBe(0);
    const second = await vault.get(alice, 'tracker');
    expect(second?.accessToken).not.toBe(first?.accessToken);
    // She disconnects (her page and the console do this): revoked at the tracker's authorization server.
    expect(await connectionsOn[0]!.disconnect(alice, 'tracker')).toBe(true);
    await store.close();
    await Promise.all(recorded);

    const secrets = [
      first?.accessToken,
      first?.refreshToken,
      second?.accessToken,
      second?.refreshToken,
      authorizationCode,
      upstreamSaw.get('alice'),
    ];
    expect(secrets.every((s) => typeof s === 'string' && s.length > 8)).toBe(true);
    const [onA, onB] = trails.map((file) => readFileSync(file, 'utf8'));
    for (const bytes of [onA!, onB!]) expect(secrets.filter((secret) => bytes.includes(secret!))).toEqual([]);
    // Her connection's events on each instance, in the order they happened (a call may use the token twice). On B,
    // she opened Bob's connect link: refused, and recorded.
    const actions = async (file: string) =>
      (await (await JsonlAuditReader.open(file)).events())
        .map((e) => JSON.parse(e.text) as Loose)
        .filter((r) => r.event === 'connection' && r.principal?.sub === 'alice')
        .map((r) => r.method as string)
        .filter((m, i, all) => m !== all[i - 1]);
    expect(await actions(trails[0]!)).toEqual([
      'connection/connected',
      'connection/used',
      'connection/disconnected',
    ]);
    expect(await actions(trails[1]!)).toEqual([
      'connection/used',
      'connection/wrong_person',
      'connection/refreshed',
      'connection/used',
    ]);
    expect(onA).toContain('"revokedAtIssuer":true');
    // The rounds are in the same trail: her calls through the gateway, recorded without the token they carried.
    expect(onB).toMatch(
      /"principal":\{"sub":"alice"[^}]*\},"method":"tools\/call","target":"tracker__whoami"/,
    );
  }, 120_000);
});
