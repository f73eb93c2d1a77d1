// One upstream request per call: through the real gateway, a call from a 2026-07-28 caller (mrtr's client) and from
// a 2025 caller (the official SDK client, default options) costs each HTTP upstream one request once the gateway
// knows it — the official SDK's stateless server, its 2025 stateful server (sessions kept in a pool), and mrtr's own
// — on connections kept alive. The listing at start and each caller's first call (the pool's warm-up) are not
// counted. A call whose upstream asks still goes across rounds, on a session kept for it alone.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BearerAuth, DevTokens, parseDevTokens } from '../../src/auth/index.js';
import { McpClient, RemoteError, scriptedResolver } from '../../src/client/index.js';
import type { EgressCaller } from '../../src/gateway/egress/index.js';
import { Gateway, PinBook, parseGatewayConfig, Upstream } from '../../src/gateway/index.js';
import type { HttpEndpoint } from '../../src/server/index.js';
import { Keyring } from '../../src/state/index.js';
import { MemoryStore } from '../../src/stores/index.js';
import { freePort } from '../helpers/free-port.js';
import { mcp } from '../helpers/mcp-http.js';
import {
  type CountedUpstream,
  mrtrUpstream,
  type StatefulUpstream,
  sdkStatefulUpstream,
  sdkStatelessUpstream,
} from './fixtures/counted-upstreams.js';

// biome-ignore lint/suspicious/noExplicitAny: replies are read as loose JSON, checked by the expectations
type Loose = any;

const CALLS = 20;
const upstreams: Record<string, CountedUpstream> = {};
let gateway: Gateway;
let endpoint: HttpEndpoint;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  upstreams.sdk = await sdkStatelessUpstream();
  upstreams.stateful = await sdkStatefulUpstream();
  upstreams.mrtr = await mrtrUpstream();
  for (const u of Object.values(upstreams)) closers.push(u.close);
  const config = parseGatewayConfig(
    `upstreams:
${Object.entries(upstreams)
  .map(([name, u]) => `  - name: ${name}\n    url: ${u.url}\n`)
  .join('')}rules:
  - tools: ["*/*"]
    roles: ["*"]
`,
    'upstream-requests.yaml',
  );
  const port = await freePort();
  gateway = new Gateway({
    config,
    server: {
      auth: new BearerAuth({
        verifier: new DevTokens(
          parseDevTokens({
            'alice-token': { sub: 'alice', roles: ['requester'] },
            'bob-token': { sub: 'bob', roles: ['requester'] },
          }),
        ),
        resource: `http://127.0.0.1:${port}/mcp`,
      }),
      stateKeys: Keyring.fromSpec(`k1:${Buffer.alloc(32, 9).toString('base64url')}`),
      logger: { info() {}, warn() {}, error() {} },
    },
    store: new MemoryStore(),
    pins: PinBook.inMemory(),
  });
  await gateway.started;
  endpoint = await gateway.server.listen({ host: '127.0.0.1', port });
}, 60_000);

afterAll(async () => {
  await endpoint?.close({ graceMs: 0 });
  await gateway?.close();
  for (const close of closers) await close();
});

/** Upstream requests and new connections made while `work` runs. */
async function counting(upstream: CountedUpstream, work: () => Promise<void>) {
  const requests = upstream.requests.length;
  const connections = upstream.connections();
  await work();
  const seen = upstream.requests.slice(requests);
  return {
    requests: seen.map((r) => `${r.http} ${r.method}`.trim()),
    sessions: [...new Set(seen.map((r) => r.session))],
    connections: upstream.connections() - connections,
  };
}

const textOf = (result: Loose): string => (result?.content ?? []).map((c: Loose) => c.text).join('\n');

/** A 2026-07-28 caller: mrtr's own client. */
function modernCaller(who: string): McpClient {
  // Says yes to whatever the upstream asks (the gateway relays it under a key of its own).
  const yes = scriptedResolver({}, { fallback: () => ({ action: 'accept', content: { approve: true } }) });
  const client = new McpClient({ server: endpoint.url, token: `${who}-token`, resolvers: [yes] });
  closers.push(() => client.close());
  return client;
}

/** A 2025 caller: the official SDK client as an application makes it (2025-11-25, questions mid-call). */
async function legacyCaller(who: string): Promise<Client> {
  const client = new Client(
    { name: 'an-app', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } } },
  );
  client.setRequestHandler('elicitation/create', async () => ({
    action: 'accept' as const,
    content: { approve: true },
  }));
  await client.connect(
    new StreamableHTTPClientTransport(new URL(endpoint.url), {
      requestInit: { headers: { authorization: `Bearer ${who}-token` } },
    }),
  );
  closers.push(() => client.close());
  return client;
}

const callers = {
  '2026-07-28 (mrtr client)': async (who: string) => {
    const client = modernCaller(who);
    return async (tool: string, args: Record<string, unknown>) => {
      const outcome = await client.callTool(tool, args);
      if (outcome.status !== 'complete') throw new Error(`call ended ${outcome.status}`);
      return textOf(outcome.result);
    };
  },
  '2025-11-25 (official SDK client)': async (who: string) => {
    const client = await legacyCaller(who);
    return async (tool: string, args: Record<string, unknown>) =>
      textOf(await client.callTool({ name: tool, arguments: args }));
  },
};

describe.each(Object.keys(callers))('a %s caller', (era) => {
  it.each(['sdk', 'stateful', 'mrtr'])('costs the %s upstream one request per call', async (name) => {
    const upstream = upstreams[name] as CountedUpstream;
    const call = await callers[era as keyof typeof callers](era.startsWith('2026') ? 'alice' : 'bob');
    // The first call warms the pool up (a 2025 upstream's session is opened): not counted.
    expect(await call(`${name}__echo`, { word: 'warm' })).toBe('echo warm');
    const seen = await counting(upstream, async () => {
      for (let i = 0; i < CALLS; i++)
        expect(await call(`${name}__echo`, { word: `w${i}` })).toBe(`echo w${i}`);
    });
    expect(seen.requests).toEqual(Array(CALLS).fill('POST tools/call'));
    expect(seen.requests.length / CALLS).toBeLessThanOrEqual(1.1);
    // Every call on a connection kept alive (at most one opened, should the idle one have been closed meanwhile).
    expect(seen.connections).toBeLessThanOrEqual(1);
  });

  it.each(['sdk', 'stateful', 'mrtr'])(
    'completes a call the %s upstream asks a question in',
    async (name) => {
      const call = await callers[era as keyof typeof callers](era.startsWith('2026') ? 'alice' : 'bob');
      expect(await call(`${name}__approve`, { change: 'c1' })).toBe('approved c1');
      // The session that asked went back to the pool: the next call costs one request.
      const seen = await counting(upstreams[name] as CountedUpstream, async () => {
        expect(await call(`${name}__echo`, { word: 'after' })).toBe('echo after');
      });
      expect(seen.requests).toEqual(['POST tools/call']);
    },
  );
});

describe('a 2025 stateful upstream', () => {
  const stateful = () => upstreams.stateful as StatefulUpstream;
  const as = (who: string) => ({ headers: { authorization: `Bearer ${who}-token` } });

  it('keeps a session for a call that asked until its next round, while other calls go on on other sessions', async () => {
    const first = await mcp(
      endpoint.url,
      'tools/call',
      { name: 'stateful__approve', arguments: { change: 'held' } },
      as('alice'),
    );
    const asked = first.response.result as Loose;
    expect(asked.resultType).toBe('input_required');
    const askedOn = stateful()
      .requests.filter((r) => r.method === 'tools/call')
      .pop()?.session;
    expect(askedOn).toBeDefined();
    const meanwhile = await counting(stateful(), async () => {
      for (let i = 0; i < 3; i++) {
        const reply = await mcp(
          endpoint.url,
          'tools/call',
          { name: 'stateful__echo', arguments: { word: `m${i}` } },
          as('bob'),
        );
        expect((reply.response.result as Loose).content[0].text).toBe(`echo m${i}`);
      }
    });
    // The held call's session serves nobody else.
    expect(meanwhile.sessions).not.toContain(askedOn);
    const [key] = Object.keys(asked.inputRequests);
    const answered = await counting(stateful(), async () => {
      const second = await mcp(
        endpoint.url,
        'tools/call',
        {
          name: 'stateful__approve',
          arguments: { change: 'held' },
          requestState: asked.requestState,
          inputResponses: { [key as string]: { action: 'accept', content: { approve: true } } },
        },
        as('alice'),
      );
      expect((second.response.result as Loose).content[0].text).toBe('approved held');
    });
    // The answer goes back on the session that asked: one request, no new session.
    expect(answered.requests).toEqual(['POST response']);
    expect(answered.sessions).toEqual([askedOn]);
  });

  it('serves calls running at once from as many pooled sessions, one request each once warm', async () => {
    const callers = ['alice', 'bob', 'alice', 'bob'];
    const batch = (tag: string) =>
      Promise.all(
        callers.map(async (who, i) => {
          const reply = await mcp(
            endpoint.url,
            'tools/call',
            { name: 'stateful__echo', arguments: { word: `${tag}${i}` } },
            as(who),
          );
          expect((reply.response.result as Loose).content[0].text).toBe(`echo ${tag}${i}`);
        }),
      );
    // The pool's warm-up, not counted: as many calls at once as later, each on a session of its own.
    stateful().gather(callers.length);
    await Promise.all(
      callers.map(async (who) => {
        const reply = await mcp(
          endpoint.url,
          'tools/call',
          { name: 'stateful__gather', arguments: {} },
          as(who),
        );
        expect(reply.response).toMatchObject({ result: { content: [{ text: 'gathered' }] } });
      }),
    );
    const opened = stateful().sessions();
    const seen = await counting(stateful(), async () => {
      for (let round = 0; round < 5; round++) await batch(`r${round}`);
    });
    expect(seen.requests).toEqual(Array(5 * callers.length).fill('POST tools/call'));
    expect(stateful().sessions()).toBe(opened);
  });

  it('opens a new session, once, when the upstream forgot the pooled one (404), and the call goes through', async () => {
    const reply = () =>
      mcp(endpoint.url, 'tools/call', { name: 'stateful__echo', arguments: { word: 'again' } }, as('alice'));
    expect(((await reply()).response.result as Loose).content[0].text).toBe('echo again');
    stateful().forget();
    const opened = stateful().sessions();
    const seen = await counting(stateful(), async () => {
      expect(((await reply()).response.result as Loose).content[0].text).toBe('echo again');
    });
    expect(stateful().sessions()).toBe(opened + 1);
    // The refused request never reached a tool; it is sent once more on the new session.
    expect(seen.requests.filter((r) => r === 'POST tools/call')).toHaveLength(2);
    expect(seen.requests).toContain('POST initialize');
  });
});

describe('an upstream reached with per-caller credentials', () => {
  it("never lets one caller's session serve another caller, and pools each caller's own", async () => {
    const stateful = upstreams.stateful as StatefulUpstream;
    // A token per caller, as a token exchange gives: the upstream sees who each request is for.
    const egress = { perCaller: true, tokenFor: async (c: EgressCaller) => `token-${c.subject}` };
    const upstream = new Upstream(
      { name: 'per-caller', url: stateful.url },
      { egress, log: () => {}, timeoutMs: 10_000, maxCallers: 10 },
    );
    closers.push(() => upstream.close());
    const caller = (subject: string): EgressCaller => ({ subject, issuer: 'https://id.example' });
    const echo = async (who: string, word: string) => {
      const answer = (await upstream.round(
        caller(who),
        { name: 'echo', arguments: { word } },
        { holder: who },
      )) as Loose;
      expect(answer.content[0].text).toBe(`echo ${word}`);
    };
    await upstream.listTools(caller('alice'));
    await echo('alice', 'a0');
    await echo('bob', 'b0');
    const warm = await counting(stateful, async () => {
      for (let i = 1; i <= 3; i++) {
        await echo('alice', `a${i}`);
        await echo('bob', `b${i}`);
      }
      await Promise.all([echo('alice', 'x'), echo('bob', 'y')]);
    });
    // Each caller's pooled session served its next calls: one request each.
    expect(warm.requests).toEqual(Array(8).fill('POST tools/call'));
    const tokensBySession = new Map<string, Set<string | undefined>>();
    for (const r of stateful.requests.filter((r) => r.authorization?.startsWith('Bearer token-'))) {
      if (r.session === undefined) continue;
      const seen = tokensBySession.get(r.session) ?? new Set();
      seen.add(r.authorization);
      tokensBySession.set(r.session, seen);
    }
    expect(tokensBySession.size).toBeGreaterThanOrEqual(2);
    for (const tokens of tokensBySession.values()) expect(tokens.size).toBe(1);
  });
});

describe('a 2026-07-28 upstream reached with per-caller credentials', () => {
  it("costs a caller's first call one request: its new client knows the version and the tools already", async () => {
    const mrtr = upstreams.mrtr as CountedUpstream;
    const egress = { perCaller: true, tokenFor: async (c: EgressCaller) => `token-${c.subject}` };
    const upstream = new Upstream(
      { name: 'per-caller-2026', url: mrtr.url },
      { egress, log: () => {}, timeoutMs: 10_000, maxCallers: 10 },
    );
    closers.push(() => upstream.close());
    await upstream.listTools({ subject: 'alice' });
    const seen = await counting(mrtr, async () => {
      for (const who of ['bob', 'carol', 'bob']) {
        const answer = (await upstream.round(
          { subject: who },
          { name: 'echo', arguments: { word: who } },
          { holder: who },
        )) as Loose;
        expect(answer.content[0].text).toBe(`echo ${who}`);
      }
    });
    // No server/discover, no tools/list: one tools/call each, on the connection alice's listing opened.
    expect(seen.requests).toEqual(['POST tools/call', 'POST tools/call', 'POST tools/call']);
    expect(seen.connections).toBe(0);
  });
});

describe('a pooled 2025 session with one credential for everyone', () => {
  it("never carries one caller's session state to another caller", async () => {
    const alice = modernCaller('alice');
    const bob = modernCaller('bob');
    const text = async (client: McpClient, tool: string, args: Record<string, unknown>) => {
      const outcome = await client.callTool(tool, args);
      if (outcome.status !== 'complete') throw new Error(`call ended ${outcome.status}`);
      return textOf(outcome.result);
    };
    expect(await text(alice, 'stateful__remember', { note: 'alice-secret' })).toBe('kept');
    // Bob's call must not get Alice's idle session: her note stays hers.
    expect(await text(bob, 'stateful__recall', {})).toBe('(none)');
    expect(await text(alice, 'stateful__recall', {})).toBe('alice-secret');
  });
});

describe('a pooled 2025 session', () => {
  it('serves the next call after a call the upstream answered with a JSON-RPC error', async () => {
    const stateful = upstreams.stateful as StatefulUpstream;
    const egress = { perCaller: false, tokenFor: async () => undefined };
    const upstream = new Upstream(
      { name: 'errors', url: stateful.url },
      { egress, log: () => {}, timeoutMs: 10_000, maxCallers: 10 },
    );
    closers.push(() => upstream.close());
    const who: EgressCaller = { subject: 'alice' };
    await upstream.listTools(who);
    await upstream.round(who, { name: 'echo', arguments: { word: 'warm' } }, {});
    const seen = await counting(stateful, async () => {
      await expect(upstream.round(who, { name: 'no_such_tool', arguments: {} }, {})).rejects.toBeInstanceOf(
        RemoteError,
      );
      const answer = (await upstream.round(who, { name: 'echo', arguments: { word: 'on' } }, {})) as Loose;
      expect(answer.content[0].text).toBe('echo on');
    });
    expect(seen.requests).toEqual(['POST tools/call', 'POST tools/call']);
    expect(seen.sessions).toHaveLength(1);
  });
});
