// An upstream that needs each person's own account (`credentials: type: oauth`), through the gateway, with a fake
// of the people's connections (the real `Connections` is composed by `mrtr gateway`) and an upstream MCP server that
// accepts only the tokens its own authorization server issued. A person's first call is asked to connect (URL mode);
// the retried call goes upstream with that person's token; another person is asked separately; a 401 drops the token
// and asks again, once; the policy and every control run before any connect question.
import { Client, type ClientOptions, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import {
  AuthRefusal,
  BearerAuth,
  DevTokens,
  parseDevTokens,
  type TokenVerifier,
} from '../../src/auth/index.js';
import { HttpClientTransport, McpClient } from '../../src/client/index.js';
import { bearerDigest } from '../../src/client/internal.js';
import type { ConnectionOwner } from '../../src/connections/index.js';
import { ConnectionRefused } from '../../src/connections/index.js';
import type { ControlContext } from '../../src/controls/index.js';
import { Gateway, PinBook, parseGatewayConfig, type UpstreamConnections } from '../../src/gateway/index.js';
import type { JsonObject } from '../../src/protocol/index.js';
import { type HttpEndpoint, McpServer, text } from '../../src/server/index.js';
import { Keyring } from '../../src/state/index.js';
import { MemoryStore } from '../../src/stores/index.js';
import { freePort } from '../helpers/free-port.js';
import { mcp } from '../helpers/mcp-http.js';

// biome-ignore lint/suspicious/noExplicitAny: replies are read as loose JSON, checked by the expectations
type Loose = any;

const KEYS = `k1:${Buffer.alloc(32, 41).toString('base64url')}`;
const PEOPLE = {
  'alice-token': { sub: 'alice', roles: ['staff'] },
  'bob-token': { sub: 'bob', roles: ['staff'] },
  'mallory-token': { sub: 'mallory', roles: [] },
};
type Who = 'alice' | 'bob' | 'mallory';
const quiet = { info() {}, warn() {}, error() {} };

/**
 * The people's connections as the gateway sees them: a token per (issuer, subject) once that person "connected"
 * (the test plays the connect page with connect()). token(ctx) asks the URL-mode question, as Connections does.
 */
class FakeConnections implements UpstreamConnections {
  readonly tokens = new Map<string, string>();
  readonly asked: string[] = [];
  readonly forgotten: Array<{ subject: string; why: string; refused?: string }> = [];
  readonly #key = (owner: ConnectionOwner) => `${owner.issuer}\n${owner.subject}`;

  has(name: string): boolean {
    return name === 'tracker';
  }
  async tokenFor(owner: ConnectionOwner, name: string): Promise<string | undefined> {
    expect(name).toBe('tracker');
    return this.tokens.get(this.#key(owner));
  }
  async token(ctx: ControlContext, name: string): Promise<string> {
    const owner = { issuer: ctx.principal?.issuer ?? '', subject: ctx.principal?.subject ?? '' };
    const had = this.tokens.get(this.#key(owner));
    if (had) return had;
    this.asked.push(owner.subject);
    await ctx.ask.url(`Connect your ${name} account`, `https://gateway.test/mrtr/connect/${owner.subject}`);
    const got = this.tokens.get(this.#key(owner));
    if (got === undefined) throw new ConnectionRefused('denied', `${owner.subject} did not connect ${name}`);
    return got;
  }
  async forget(owner: ConnectionOwner, name: string, why: string, refused?: string): Promise<void> {
    expect(name).toBe('tracker');
    this.forgotten.push({ subject: owner.subject, why, ...(refused === undefined ? {} : { refused }) });
    this.tokens.delete(this.#key(owner));
  }
  /** What the connect page does once the person went through the authorization server. */
  connect(issuer: string, subject: string, token: string): void {
    this.tokens.set(`${issuer}\n${subject}`, token);
  }
}

let upstream: HttpEndpoint;
let gateway: Gateway;
let gatewayUrl: string;
let connections: FakeConnections;
let issuer: string;
/** The upstream's authorization server's view: which tokens are valid, and for whom. */
const valid = new Map<string, string>();
/** The Authorization header of every request the upstream received. */
const upstreamSaw: Array<string | undefined> = [];

const verifier: TokenVerifier = {
  authorizationServers: ['https://id.tracker.test'],
  verify(token) {
    const subject = valid.get(token);
    if (subject === undefined)
      throw new AuthRefusal('invalid_token', 'unknown', 'the token is not valid here');
    return { subject, issuer: 'https://id.tracker.test', roles: [], scopes: [] };
  },
};

/** Whether the next gateway starts with the tracker's tools pinned (else it knows none of them). */
let pinned = true;

beforeEach(async () => {
  valid.clear();
  upstreamSaw.length = 0;
  const upstreamPort = await freePort();
  upstream = await new McpServer({
    name: 'tracker',
    version: '1.0.0',
    auth: new BearerAuth({ verifier, resource: `http://127.0.0.1:${upstreamPort}/mcp` }),
    logger: quiet,
  })
    .tool({ name: 'whoami', description: 'Who the tracker sees' }, (_a, ctx) =>
      text(`tracker sees ${ctx.principal?.subject}`),
    )
    .tool(
      {
        name: 'drop',
        description: 'Drop rows',
        input: { type: 'object', properties: { rows: { type: 'number' } } },
      },
      () => text('dropped'),
    )
    .listen({ host: '127.0.0.1', port: upstreamPort });
  upstream.server.prependListener('request', (req) => upstreamSaw.push(req.headers.authorization));

  const port = await freePort();
  const tokens = new DevTokens(parseDevTokens(PEOPLE));
  connections = new FakeConnections();
  const config = parseGatewayConfig(
    `upstreams:
  - name: tracker
    url: ${upstream.url}
    credentials:
      type: oauth
      issuer: https://id.tracker.test
      clientId: mrtr-gateway
      scopes: [tickets:read]
rules:
  - tools: ["tracker/whoami", "tracker/connect"]
    roles: [staff]
  - tools: ["tracker/drop"]
    roles: [staff]
    require: [consent]
  - name: no large drops
    tools: ["tracker/drop"]
    when: 'args.rows > 1000'
    deny: true
`,
    'connect.yaml',
  );
  // Known as the tracker listed them to someone connected (a lock file): people not connected see them too.
  const pins = PinBook.inMemory();
  if (pinned) {
    valid.set('operator-token', 'operator');
    const lister = new McpClient({
      clientInfo: { name: 'pin', version: '1' },
      server: new HttpClientTransport({ url: upstream.url, token: () => Promise.resolve('operator-token') }),
    });
    for (const d of await lister.listTools()) pins.pin('tracker', d.name, d as unknown as JsonObject);
    await lister.close();
    valid.delete('operator-token');
    upstreamSaw.length = 0;
  }
  gateway = new Gateway({
    config,
    server: {
      auth: new BearerAuth({ verifier: tokens, resource: `http://127.0.0.1:${port}/mcp` }),
      signIn: { devTokens: tokens },
      stateKeys: Keyring.fromSpec(KEYS),
      logger: quiet,
    },
    store: new MemoryStore(),
    controls: { pendingWaitMs: 0 },
    pins,
    connections,
  });
  await gateway.started;
  const endpoint = await gateway.server.listen({ host: '127.0.0.1', port });
  gatewayUrl = endpoint.url;
  issuer = (tokens.verify('alice-token') as { issuer?: string }).issuer ?? '';
  onTestFinished(async () => {
    await endpoint.close({ graceMs: 0 });
    await gateway.close();
  });
});

afterEach(async () => {
  await upstream?.close({ graceMs: 0 });
});

/** `who` connects: the tracker's authorization server issued them `token`. */
function connect(who: Who, token = `${who}-tracker-token`): string {
  valid.set(token, who);
  connections.connect(issuer, who, token);
  return token;
}

const call = (who: Who, name: string, args: Record<string, unknown> = {}, round: Loose = {}) =>
  mcp(
    gatewayUrl,
    'tools/call',
    { name, arguments: args, ...round },
    {
      headers: { authorization: `Bearer ${who}-token` },
    },
  ).then((r) => (r.response.result ?? { error: r.response.error }) as Loose);

const only = (result: Loose) => {
  const [key, question] = Object.entries(result.inputRequests ?? {})[0] as [string, Loose];
  expect(Object.keys(result.inputRequests)).toHaveLength(1);
  return { key, question };
};
const answer = (result: Loose, response: unknown) => ({
  requestState: result.requestState,
  inputResponses: { [only(result).key]: response },
});
const textOf = (result: Loose) => (result.content ?? []).map((c: Loose) => c.text).join('\n');
const ACCEPTED = { action: 'accept' };

describe('an upstream that needs each person’s account (2026 callers)', () => {
  it("asks to connect first, then reaches the upstream with that person's own token; bob is asked separately", async () => {
    const first = await call('alice', 'tracker__whoami');
    expect(first.resultType).toBe('input_required');
    expect(only(first).question).toMatchObject({
      method: 'elicitation/create',
      params: {
        mode: 'url',
        message: 'Connect your tracker account',
        url: 'https://gateway.test/mrtr/connect/alice',
      },
    });
    expect(upstreamSaw).toEqual([]); // not reached before the person connected

    const token = connect('alice');
    const done = await call('alice', 'tracker__whoami', {}, answer(first, ACCEPTED));
    expect(done.isError).toBeUndefined();
    expect(textOf(done)).toBe('tracker sees alice');
    expect(upstreamSaw.at(-1)).toBe(`Bearer ${token}`);

    // Later calls use the connection at once: no question.
    expect(textOf(await call('alice', 'tracker__whoami'))).toBe('tracker sees alice');
    expect(connections.asked).toEqual(['alice']);

    // Bob has no connection of his own: alice's is never his.
    const bob = await call('bob', 'tracker__whoami');
    expect(bob.resultType).toBe('input_required');
    expect(only(bob).question.params.url).toBe('https://gateway.test/mrtr/connect/bob');
    connect('bob');
    expect(textOf(await call('bob', 'tracker__whoami', {}, answer(bob, ACCEPTED)))).toBe('tracker sees bob');
    expect(connections.asked).toEqual(['alice', 'bob']);
    for (const header of upstreamSaw) expect(header).toMatch(/^Bearer (alice|bob)-tracker-token$/);
  });

  it('a token the upstream refuses (401) is dropped and the person asked again; a second 401 ends the call', async () => {
    connect('alice', 'revoked-token');
    valid.delete('revoked-token'); // revoked at the tracker
    const refused = await call('alice', 'tracker__whoami');
    expect(refused.resultType).toBe('input_required');
    expect(only(refused).question.params.mode).toBe('url');
    // Which token was refused, as a digest: the connections keep a grant refreshed since.
    expect(connections.forgotten).toEqual([
      { subject: 'alice', why: 'refused by the upstream', refused: bearerDigest('revoked-token') },
    ]);

    // She connects again, and the tracker refuses that token too: the call ends with a clear message, no loop.
    connections.connect(issuer, 'alice', 'also-refused');
    const ended = await call('alice', 'tracker__whoami', {}, answer(refused, ACCEPTED));
    expect(ended.isError).toBe(true);
    expect(textOf(ended)).toMatch(
      /upstream tracker refused your account again right after you connected it; the call ends/,
    );
    expect(connections.asked).toEqual(['alice']);

    // A token that works, in a new call: through.
    connect('alice');
    expect(textOf(await call('alice', 'tracker__whoami'))).toBe('tracker sees alice');
  });

  it('a 401 then a good connect: the retried round reaches the upstream with the new token', async () => {
    connect('bob', 'stale');
    valid.delete('stale');
    const refused = await call('bob', 'tracker__whoami');
    expect(refused.resultType).toBe('input_required');
    const fresh = connect('bob');
    const done = await call('bob', 'tracker__whoami', {}, answer(refused, ACCEPTED));
    expect(textOf(done)).toBe('tracker sees bob');
    expect(upstreamSaw.at(-1)).toBe(`Bearer ${fresh}`);
  });

  it('the policy and every control come before any connect question', async () => {
    // Denied by a rule: refused, never asked to connect.
    const denied = await call('alice', 'tracker__drop', { rows: 5000 });
    expect(denied.resultType).not.toBe('input_required');
    expect(denied.isError).toBe(true);
    expect(textOf(denied)).toBe("The gateway's policy refuses this call.");
    // Nobody's tool: unknown, never asked.
    const mallory = await mcp(
      gatewayUrl,
      'tools/call',
      { name: 'tracker__whoami', arguments: {} },
      {
        headers: { authorization: 'Bearer mallory-token' },
      },
    );
    expect(mallory.response.error ?? mallory.response.result).toBeDefined();
    expect(connections.asked).toEqual([]);

    // Consent first (a form), then the connect question (URL), then the upstream.
    const consent = await call('alice', 'tracker__drop', { rows: 1 });
    expect(only(consent).question.params.mode ?? 'form').toBe('form');
    expect(connections.asked).toEqual([]);
    const connectQ = await call(
      'alice',
      'tracker__drop',
      { rows: 1 },
      answer(consent, { action: 'accept', content: { confirm: true } }),
    );
    expect(only(connectQ).question.params.mode).toBe('url');
    connect('alice');
    const done = await call('alice', 'tracker__drop', { rows: 1 }, answer(connectQ, ACCEPTED));
    expect(textOf(done)).toBe('dropped');
  });
});

const names = async (who: Who) =>
  (
    (await mcp(gatewayUrl, 'tools/list', {}, { headers: { authorization: `Bearer ${who}-token` } })).response
      .result as Loose
  ).tools
    .map((t: Loose) => t.name)
    .sort();

describe('listing an upstream a person has not connected', () => {
  it('shows its pinned tools without reaching it: calling one asks to connect', async () => {
    expect(await names('alice')).toEqual(['tracker__drop', 'tracker__whoami']);
    expect(upstreamSaw).toEqual([]);
    expect(connections.asked).toEqual([]);
  });

  describe('with none of its tools known yet', () => {
    beforeAll(() => {
      pinned = false;
    });
    afterAll(() => {
      pinned = true;
    });

    it('shows one connect tool; once connected, the upstream lists its own tools with her token', async () => {
      expect(await names('alice')).toEqual(['tracker__connect']);
      const asked = await call('alice', 'tracker__connect');
      expect(only(asked).question.params).toMatchObject({
        mode: 'url',
        message: 'Connect your tracker account',
      });
      const token = connect('alice');
      const connected = await call('alice', 'tracker__connect', {}, answer(asked, ACCEPTED));
      expect(textOf(connected)).toMatch(/^Your tracker account is connected/);

      expect(await names('alice')).toEqual(['tracker__drop', 'tracker__whoami']);
      expect(new Set(upstreamSaw)).toEqual(new Set([`Bearer ${token}`]));
      // Bob sees the tools alice's listing showed (never her token's answers), and is asked to connect on a call.
      expect(await names('bob')).toEqual(['tracker__drop', 'tracker__whoami']);
      const bob = await call('bob', 'tracker__whoami');
      expect(only(bob).question.params.url).toBe('https://gateway.test/mrtr/connect/bob');
    });
  });
});

describe('a 2025 caller (the official SDK client, default options) through the bridge', () => {
  async function sdkClient(who: Who, options: ClientOptions = {}) {
    const client = new Client(
      { name: 'an-app', version: '1.0.0' },
      { capabilities: { elicitation: { form: {}, url: {} } }, ...options },
    );
    const asked: Array<Record<string, unknown>> = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      const params = request.params as Record<string, unknown>;
      asked.push(params);
      // The person opens the link and connects at the tracker; the client says they went.
      if (params.mode === 'url') connect(who);
      return { action: 'accept' };
    });
    const transport = new StreamableHTTPClientTransport(new URL(gatewayUrl), {
      requestInit: { headers: { authorization: `Bearer ${who}-token` } },
    });
    await client.connect(transport);
    onTestFinished(() => client.close());
    return { client, asked, protocol: () => transport.protocolVersion };
  }

  it.each([
    ['2025-11-25 (default options)', {}, '2025-11-25'],
    ['2026-07-28 negotiated', { versionNegotiation: { mode: 'auto' } }, '2026-07-28'],
  ] as Array<[string, ClientOptions, string]>)(
    '%s: asked to connect (URL mode), then the call goes through',
    async (_, options, version) => {
      const { client, asked, protocol } = await sdkClient('alice', options);
      expect(protocol()).toBe(version);
      const result = await client.callTool({ name: 'tracker__whoami', arguments: {} });
      expect(result.content).toEqual([{ type: 'text', text: 'tracker sees alice' }]);
      expect(asked).toHaveLength(1);
      expect(asked[0]).toMatchObject({ mode: 'url', url: 'https://gateway.test/mrtr/connect/alice' });
      if (version === '2025-11-25') expect(typeof asked[0]?.elicitationId).toBe('string');
      expect(upstreamSaw.at(-1)).toBe('Bearer alice-tracker-token');
    },
  );
});
