// Relayed rounds: an upstream's own questions reach the gateway's caller and the answers go back, for every kind of
// upstream people run — the official SDK's 2026-07-28 server (MRTR), its 2025 stateful server (a request mid-call),
// and @modelcontextprotocol/server-everything over stdio. The upstream's requestState travels sealed inside the
// gateway's own, so it cannot move between callers or calls even though every caller shares one upstream client.
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BearerAuth, DevTokens, parseDevTokens } from '../../src/auth/index.js';
import { Gateway, PinBook, parseGatewayConfig } from '../../src/gateway/index.js';
import type { HttpEndpoint } from '../../src/server/index.js';
import { Keyring } from '../../src/state/index.js';
import { MemoryStore } from '../../src/stores/index.js';
import { startLegacySdkServer } from '../client/sdk-legacy-server.js';
import { startSdkServer } from '../client/sdk-server.js';
import { freePort } from '../helpers/free-port.js';
import { mcp } from '../helpers/mcp-http.js';

const require = createRequire(import.meta.url);
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');

// biome-ignore lint/suspicious/noExplicitAny: replies are read as loose JSON, checked by the expectations
type Loose = any;

let endpoint: HttpEndpoint;
let gateway: Gateway;
/** Another instance of the same gateway (same keys, config and store), as a fleet runs it. */
let makeGateway: () => Gateway;
let resource: string;
const store = new MemoryStore();
const closers: Array<() => Promise<void>> = [];
const as = (who: string) => ({ headers: { authorization: `Bearer ${who}-token` } });

beforeAll(async () => {
  const sdk = await startSdkServer();
  const legacy = await startLegacySdkServer();
  closers.push(sdk.close, legacy.close);
  const config = parseGatewayConfig(
    `upstreams:
  - name: sdk
    url: ${sdk.url}
  - name: legacy
    url: ${legacy.url}
  - name: everything
    command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(EVERYTHING)}, stdio]
rules:
  - tools: ["sdk/*", "legacy/*", "everything/*"]
    roles: ["*"]
`,
    'relay.yaml',
  );
  const port = await freePort();
  resource = `http://127.0.0.1:${port}/mcp`;
  makeGateway = () =>
    new Gateway({
      config,
      server: {
        auth: new BearerAuth({
          verifier: new DevTokens(
            parseDevTokens({
              'alice-token': { sub: 'alice', roles: ['requester'] },
              'bob-token': { sub: 'bob', roles: ['requester'] },
            }),
          ),
          resource,
        }),
        stateKeys: Keyring.fromSpec(`k1:${Buffer.alloc(32, 5).toString('base64url')}`),
        logger: { info() {}, warn() {}, error() {} },
      },
      store,
      pins: PinBook.inMemory(),
    });
  gateway = makeGateway();
  // Its upstreams start with it: the tests call once every one has answered.
  await gateway.started;
  endpoint = await gateway.server.listen({ host: '127.0.0.1', port });
}, 60_000);

afterAll(async () => {
  await endpoint?.close({ graceMs: 0 });
  await gateway?.close();
  for (const close of closers) await close();
});

const call = (
  who: string,
  name: string,
  args: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) => mcp(endpoint.url, 'tools/call', { name, arguments: args, ...extra }, as(who));

/** Ask for the tool list until it holds `name` (a server may add tools just after it started), at most 50 times. */
async function toolListed(who: string, name: string): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const tools = (await mcp(endpoint.url, 'tools/list', {}, as(who))).response.result?.tools as Loose[];
    if (tools.some((t) => t.name === name)) return;
  }
  throw new Error(`${name} never listed`);
}

/** Answer every question of an input_required with `answer(question)`, under the gateway's keys. */
const answers = (result: Loose, answer: (q: Loose) => unknown) =>
  Object.fromEntries(Object.entries(result.inputRequests).map(([k, q]) => [k, answer(q)]));

describe('the gateway relays upstream questions', () => {
  it('from the official SDK 2026-07-28 server: one question, then the result', async () => {
    const args = { change: 'raise quota' };
    const first = (await call('alice', 'sdk__approve_change', args)).response.result as Loose;
    expect(first.resultType).toBe('input_required');
    const [question] = Object.values(first.inputRequests) as Loose[];
    expect(question.params.message).toBe('Approve "raise quota"?');
    const done = (
      await call('alice', 'sdk__approve_change', args, {
        requestState: first.requestState,
        inputResponses: answers(first, () => ({ action: 'accept', content: { approve: true } })),
      })
    ).response.result as Loose;
    expect(done).toMatchObject({ resultType: 'complete', content: [{ text: 'approved raise quota' }] });
  });

  it('from the official SDK 2026-07-28 server: two questions in two rounds', async () => {
    const args = { traveller: 'Ana' };
    let result = (await call('alice', 'sdk__book_trip', args)).response.result as Loose;
    const replies: Record<string, unknown> = { city: { city: 'Oslo' }, nights: { nights: 3 } };
    for (let round = 0; result.resultType === 'input_required' && round < 4; round++) {
      result = (
        await call('alice', 'sdk__book_trip', args, {
          requestState: result.requestState,
          inputResponses: answers(result, (q) => {
            const field = Object.keys(q.params.requestedSchema.properties)[0] as string;
            return { action: 'accept', content: replies[field] };
          }),
        })
      ).response.result as Loose;
    }
    expect(result.resultType).toBe('complete');
    expect(JSON.stringify(result.content)).toContain('Oslo');
  });

  it('from the official SDK 2025 stateful server: its mid-call elicitation becomes a round', async () => {
    const args = { path: '/tmp/report.txt' };
    const first = (await call('alice', 'legacy__confirm_delete', args)).response.result as Loose;
    expect(first.resultType).toBe('input_required');
    expect((Object.values(first.inputRequests)[0] as Loose).params.message).toBe('Delete /tmp/report.txt?');
    const done = (
      await call('alice', 'legacy__confirm_delete', args, {
        requestState: first.requestState,
        inputResponses: answers(first, () => ({ action: 'accept', content: { confirm: true } })),
      })
    ).response.result as Loose;
    expect(done.resultType).toBe('complete');
    expect(JSON.stringify(done.content)).toContain('/tmp/report.txt');
  });

  it('from @modelcontextprotocol/server-everything over stdio: its elicitation form', async () => {
    // The server registers this tool once the client said it can answer elicitations, then says its list changed.
    await toolListed('alice', 'everything__trigger-elicitation-request');
    const first = (await call('alice', 'everything__trigger-elicitation-request', {})).response
      .result as Loose;
    expect(first.resultType).toBe('input_required');
    const done = (
      await call(
        'alice',
        'everything__trigger-elicitation-request',
        {},
        {
          requestState: first.requestState,
          inputResponses: answers(first, () => ({ action: 'decline' })),
        },
      )
    ).response.result as Loose;
    expect(done.resultType).toBe('complete');
    expect(JSON.stringify(done.content)).toMatch(/decline/i);
  });

  it('binds the relayed upstream state: another user, another tool or other arguments cannot use it', async () => {
    const args = { change: 'delete logs' };
    const first = (await call('alice', 'sdk__approve_change', args)).response.result as Loose;
    const yes = answers(first, () => ({ action: 'accept', content: { approve: true } }));
    const stolen = await call('bob', 'sdk__approve_change', args, {
      requestState: first.requestState,
      inputResponses: yes,
    });
    expect(stolen.response.error).toBeDefined();
    // The same state on another upstream tool, or with other arguments: refused too.
    const moved = await call(
      'alice',
      'sdk__book_trip',
      { traveller: 'x' },
      {
        requestState: first.requestState,
        inputResponses: yes,
      },
    );
    expect(moved.response.error).toBeDefined();
    const changed = await call(
      'alice',
      'sdk__approve_change',
      { change: 'delete everything' },
      {
        requestState: first.requestState,
        inputResponses: yes,
      },
    );
    expect(changed.response.error).toBeDefined();
  });

  it('keeps a 2025 call held for its caller: another caller presenting its state is refused', async () => {
    const args = { path: '/tmp/held.txt' };
    const first = (await call('alice', 'legacy__confirm_delete', args)).response.result as Loose;
    const stolen = await call('bob', 'legacy__confirm_delete', args, {
      requestState: first.requestState,
      inputResponses: answers(first, () => ({ action: 'accept', content: { confirm: true } })),
    });
    expect(stolen.response.error).toBeDefined();
  });

  it('holds two 2025 calls of one caller at once, each on its own session, and finishes both', async () => {
    const one = { path: '/tmp/one.txt' };
    const two = { path: '/tmp/two.txt' };
    const [a, b] = await Promise.all([
      call('alice', 'legacy__confirm_delete', one),
      call('alice', 'legacy__confirm_delete', two),
    ]);
    const first = [a.response.result as Loose, b.response.result as Loose];
    expect(first.map((r) => r.resultType)).toEqual(['input_required', 'input_required']);
    const done = await Promise.all(
      [one, two].map((args, i) =>
        call('alice', 'legacy__confirm_delete', args, {
          requestState: first[i].requestState,
          inputResponses: answers(first[i], () => ({ action: 'accept', content: { confirm: true } })),
        }),
      ),
    );
    expect(JSON.stringify(done[0]?.response.result)).toContain('/tmp/one.txt');
    expect(JSON.stringify(done[1]?.response.result)).toContain('/tmp/two.txt');
    expect(done.map((d) => (d.response.result as Loose).resultType)).toEqual(['complete', 'complete']);
  });

  it('a 2025 call held on one instance is not run twice when its next round reaches another: that round fails', async () => {
    const other = makeGateway();
    await other.started;
    const port = await freePort();
    const otherEndpoint = await other.server.listen({ host: '127.0.0.1', port });
    try {
      const args = { path: '/tmp/elsewhere.txt' };
      const first = (await call('alice', 'legacy__confirm_delete', args)).response.result as Loose;
      expect(first.resultType, JSON.stringify(first)).toBe('input_required');
      const elsewhere = await mcp(
        otherEndpoint.url,
        'tools/call',
        {
          name: 'legacy__confirm_delete',
          arguments: args,
          requestState: first.requestState,
          inputResponses: answers(first, () => ({ action: 'accept', content: { confirm: true } })),
        },
        as('alice'),
      );
      expect(elsewhere.response.result).toMatchObject({ isError: true });
      expect(JSON.stringify(elsewhere.response.result)).toContain('upstream legacy failed');
      expect(JSON.stringify(elsewhere.response.result)).not.toContain('deleted');
    } finally {
      await otherEndpoint.close({ graceMs: 0 });
      await other.close();
    }
  });
});
