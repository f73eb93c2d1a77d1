// One principal flooding the 2025 bridge with abandoned questions (many sessions, each full of questions nobody
// answers) must not lock other principals out: each principal holds at most its share of the instance's waiting
// questions and of sessions with questions waiting, and one past its share is slowed with 429 and Retry-After.
import { describe, expect, it } from 'vitest';
import type { JsonRpcRequest, JsonRpcResponse } from '../../src/protocol/index.js';
import {
  LEGACY_DEFAULTS,
  LegacyBridge,
  McpServer,
  type RequestHandler,
  text,
} from '../../src/server/index.js';
import { QuestionShares } from '../../src/server/legacy/fair-share.js';
import { JSON_HEADERS, LegacyWire } from '../helpers/legacy-wire.js';

/** An inner handler whose every tool call asks the client one question, forever. */
const asksForever: RequestHandler = {
  handleRequest(request: JsonRpcRequest): JsonRpcResponse {
    const result =
      request.method === 'server/discover'
        ? { resultType: 'complete', capabilities: { tools: {} }, _meta: {} }
        : {
            resultType: 'input_required',
            inputRequests: {
              q: {
                method: 'elicitation/create',
                params: {
                  mode: 'form',
                  message: 'Name?',
                  requestedSchema: { type: 'object', properties: {} },
                },
              },
            },
          };
    return { jsonrpc: '2.0', id: request.id, result } as unknown as JsonRpcResponse;
  },
  headerParams: () => undefined,
};

const quiet = { info() {}, warn() {}, error() {} };

function setUp(limits: Record<string, number>) {
  const bridge = new LegacyBridge(asksForever, {
    sessionKeys: [{ kid: 'k1', key: new Uint8Array(32).fill(7) }],
    logger: quiet,
    ...limits,
  });
  const open = async (subject: string) => {
    const { session } = await bridge.initialize(
      {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: { elicitation: {} } },
      },
      { subject },
    );
    return { session: session!, subject };
  };
  let n = 0;
  const cancels: AbortController[] = [];
  /** Start a tool call and resolve once its question went out (or its response came first). */
  const call = ({ session, subject }: Awaited<ReturnType<typeof open>>) =>
    new Promise<{ asked: boolean; response?: { error?: Record<string, unknown> } }>((resolve) => {
      const abort = new AbortController();
      cancels.push(abort);
      const response = bridge.handle(
        { jsonrpc: '2.0', id: ++n, method: 'tools/call', params: { name: 'x', arguments: {} } },
        session,
        { subject },
        { send: () => resolve({ asked: true }), signal: abort.signal },
      );
      void response.then((r) =>
        resolve({ asked: false, response: r as { error?: Record<string, unknown> } }),
      );
    });
  return { bridge, open, call, cancels };
}

describe('each principal’s share of the bridge’s waiting questions', () => {
  it('a flooder is slowed with 429 at its share while another principal’s calls still work', async () => {
    const { bridge, open, call } = setUp({
      maxPendingAnswers: 10,
      maxPendingPerPrincipal: 6,
      maxPendingPerSession: 3,
    });
    // Mallory: sessions full of questions she never answers.
    for (let s = 0; s < 2; s++) {
      const session = await open('mallory');
      for (let i = 0; i < 3; i++) expect((await call(session)).asked).toBe(true);
    }
    const refused = await call(await open('mallory'));
    expect(refused.asked).toBe(false);
    expect(refused.response?.error).toMatchObject({
      code: -32600,
      message: expect.stringMatching(
        /^Too many questions waiting: 6 questions of yours already wait for answers on this server \(limit 6\); answer or cancel them, or retry after \d+ s$/,
      ),
      data: { retryAfterSeconds: expect.any(Number) },
    });
    // Alice is not held back: the pool still has room for her (10 in all, 6 at most Mallory's).
    const alice = await open('alice');
    for (let i = 0; i < 3; i++) expect((await call(alice)).asked).toBe(true);
    expect((await call(await open('alice'))).asked).toBe(true);
    await bridge.close();
  });

  it('a principal may have at most maxSessionsPerPrincipal sessions with questions waiting', async () => {
    const { bridge, open, call } = setUp({ maxSessionsPerPrincipal: 2 });
    const first = await open('mallory');
    expect((await call(first)).asked).toBe(true);
    expect((await call(await open('mallory'))).asked).toBe(true);
    const third = await call(await open('mallory'));
    expect(third.response?.error?.message).toMatch(
      /^Too many questions waiting: 2 sessions of yours already have questions waiting on this server \(limit 2\)/,
    );
    // A session that already has questions waiting may still ask (within its own bound), and Alice may too.
    expect((await call(first)).asked).toBe(true);
    expect((await call(await open('alice'))).asked).toBe(true);
    await bridge.close();
  });

  it('frees the share as questions end, and keeps nothing for a principal with nothing waiting', async () => {
    const { bridge, open, call, cancels } = setUp({ maxPendingPerPrincipal: 2 });
    const session = await open('mallory');
    expect((await call(session)).asked).toBe(true);
    expect((await call(session)).asked).toBe(true);
    expect((await call(session)).asked).toBe(false);
    const shares = (bridge as unknown as { shares: QuestionShares }).shares;
    expect(shares.size).toBe(2);
    for (const c of cancels) c.abort();
    expect(shares.size).toBe(0);
    expect((await call(session)).asked).toBe(true);
    await bridge.close();
  });

  it('names a limit that is not a positive integer', () => {
    expect(() => setUp({ maxPendingPerPrincipal: 0 })).toThrow(
      'legacyClients.maxPendingPerPrincipal must be a positive integer, got 0',
    );
    expect(() => setUp({ maxSessionsPerPrincipal: 1.5 })).toThrow(
      'legacyClients.maxSessionsPerPrincipal must be a positive integer, got 1.5',
    );
  });

  it('the defaults docs/compatibility.md names: 1,000 questions and 20 sessions per principal', () => {
    expect(LEGACY_DEFAULTS).toMatchObject({ maxPendingPerPrincipal: 1000, maxSessionsPerPrincipal: 20 });
  });
});

describe('QuestionShares', () => {
  it('says Retry-After for when the principal’s oldest question frees its place', () => {
    let now = 1_000_000;
    const shares = new QuestionShares(
      { total: 100, perSession: 100, perPrincipal: 2, sessionsPerPrincipal: 10 },
      () => now,
    );
    const mallory = { subject: 'mallory' };
    expect(shares.take('a', mallory, 's1', now + 90_000)).toBeUndefined();
    now += 30_000;
    expect(shares.take('b', mallory, 's1', now + 90_000)).toBeUndefined();
    const slowed = shares.check(mallory, 's1');
    expect(slowed).toMatchObject({ httpStatus: 429, httpHeaders: { 'retry-after': '60' } });
    // Same subject from another issuer is another principal; the anonymous share is its own.
    expect(shares.check({ subject: 'mallory', issuer: 'https://other' }, 's9')).toBeUndefined();
    expect(shares.check(undefined, 's9')).toBeUndefined();
    shares.give('a');
    shares.give('a');
    expect(shares.check(mallory, 's1')).toBeUndefined();
    expect(shares.size).toBe(1);
  });
});

describe('over HTTP', () => {
  it('the flooder gets HTTP 429 with Retry-After before any stream opens; another principal’s call goes on', async () => {
    const server = new McpServer({
      name: 'flooded',
      version: '1',
      logger: quiet,
      legacyClients: { maxPendingPerPrincipal: 2 },
    }).tool({ name: 'ask', description: 'Asks a name' }, async (_a, ctx) => {
      await ctx.ask.confirm('Sure?', { key: 'sure' });
      return text('done');
    });
    const endpoint = await server.listen({
      port: 0,
      authenticate: (req) => ({ subject: String(req.headers['x-user'] ?? 'anonymous') }),
    });
    try {
      const mallory = new LegacyWire(endpoint.url, '2025-11-25', { 'x-user': 'mallory' });
      await mallory.initialize({ elicitation: {} });
      const held = new AbortController();
      for (let id = 1; id <= 2; id++) {
        const { events } = await mallory.stream(
          'tools/call',
          { name: 'ask', arguments: {} },
          id,
          held.signal,
        );
        expect((await events.nextMessage())?.message.method).toBe('elicitation/create');
      }
      const slowed = await mallory.post(
        { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'ask', arguments: {} } },
        JSON_HEADERS,
      );
      expect(slowed.status).toBe(429);
      expect(slowed.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(((await slowed.json()) as { error: { message: string } }).error.message).toContain(
        'Too many questions waiting: 2 questions of yours already wait for answers on this server (limit 2)',
      );
      const alice = new LegacyWire(endpoint.url, '2025-11-25', { 'x-user': 'alice' });
      await alice.initialize({ elicitation: {} });
      const { events } = await alice.stream('tools/call', { name: 'ask', arguments: {} }, 1);
      const question = await events.nextMessage();
      expect(question?.message.method).toBe('elicitation/create');
      await alice.answer(question?.message.id, { action: 'accept', content: { confirm: true } });
      const done = await events.nextMessage();
      expect(done?.message.result).toMatchObject({ content: [{ type: 'text', text: 'done' }] });
      held.abort();
    } finally {
      await endpoint.close();
    }
  });
});
