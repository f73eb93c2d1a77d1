// The round pipeline's seams: guards (admit / commit / release) and observers, joined by composition.
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { JsonRpcRequest, JsonRpcResponse } from '../../src/protocol/index.js';
import {
  type GuardedRound,
  McpServer,
  type McpServerOptions,
  type RoundEvent,
  type RoundGuard,
  RoundRefused,
  text,
} from '../../src/server/index.js';
import { Keyring } from '../../src/state/index.js';
import { META, rawPost } from '../helpers/mcp-http.js';
import { deferred } from '../helpers/signals.js';

const quiet = { info() {}, warn() {}, error() {} };
const env = { principal: undefined, signal: new AbortController().signal, notify() {} };
const KEYS = Keyring.fromSpec(`k1:${Buffer.alloc(32, 7).toString('base64url')}`);

/** Handler runs per tool, so a test can tell whether the handler ran at all. */
function server(options: Partial<McpServerOptions>, runs: string[] = []) {
  return new McpServer({ name: 'pipeline', version: '1', stateKeys: KEYS, logger: quiet, ...options })
    .tool({ name: 'sync', description: 'Answers at once' }, () => {
      runs.push('sync');
      return text('done');
    })
    .tool({ name: 'ask_name', description: 'Asks one question' }, async (_args, { ask }) => {
      runs.push('ask_name');
      const { name } = await ask.form('Name?', z.object({ name: z.string() }), { key: 'who' });
      return text(`hello ${name}`);
    })
    .tool({ name: 'fails', description: 'Throws' }, () => {
      runs.push('fails');
      throw new Error('boom');
    })
    .tool({ name: 'tool_error', description: 'An isError result' }, () => ({
      content: [{ type: 'text', text: 'nope' }],
      isError: true,
    }))
    .prompt({ name: 'greet', description: 'A prompt' }, () => ({
      messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }],
    })).core;
}

const call = (id: number, name: string, extra: Record<string, unknown> = {}): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: {
    _meta: { ...META, 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } },
    name,
    arguments: { a: 1 },
    ...extra,
  },
});

const stateOf = (response: JsonRpcResponse): string =>
  (response as unknown as { result: { requestState: string } }).result.requestState;

const answer = (state: string) => ({
  requestState: state,
  inputResponses: { who: { action: 'accept', content: { name: 'Ada' } } },
});

/** A guard's view, copied at admit time (its fields are getters over the live round). */
const snapshot = (r: GuardedRound): GuardedRound => ({
  requestId: r.requestId,
  method: r.method,
  target: r.target,
  arguments: r.arguments,
  principal: r.principal,
  round: r.round,
  flowId: r.flowId,
  stateDigest: r.stateDigest,
  stateExpiresAt: r.stateExpiresAt,
  inputResponses: r.inputResponses,
  answersDigest: r.answersDigest,
});

/** A guard that records what it is shown and when. */
function recordingGuard(name: string, log: string[], overrides: Partial<RoundGuard> = {}): RoundGuard {
  return {
    name,
    admit: (round) => void log.push(`${name}.admit r${round.round}`),
    commit: (round, result) => void log.push(`${name}.commit r${round.round} ${result.resultType}`),
    release: (_round, error) => void log.push(`${name}.release ${(error as Error).message}`),
    ...overrides,
  };
}

describe('round pipeline without guards or observers', () => {
  it('answers a synchronous handler synchronously (no promise, no microtask)', () => {
    const response = server({}).handleRequest(call(1, 'sync'), env);
    expect(response).not.toBeInstanceOf(Promise);
    expect(response).toMatchObject({ id: 1, result: { content: [{ text: 'done' }] } });
  });
});

describe('round guards', () => {
  it('see each round after its state opened, and commit after the handler, in onion order', async () => {
    const log: string[] = [];
    const seen: GuardedRound[] = [];
    const outer = recordingGuard('outer', log, {
      admit: (round) => {
        seen.push(snapshot(round));
        log.push(`outer.admit r${round.round}`);
      },
    });
    const core = server({ guards: [outer, recordingGuard('inner', log)] });
    const first = await core.handle(call(1, 'ask_name'), env);
    const second = await core.handle(call(2, 'ask_name', answer(stateOf(first))), env);
    expect(second).toMatchObject({ result: { content: [{ text: 'hello Ada' }] } });
    expect(log).toEqual([
      'outer.admit r0',
      'inner.admit r0',
      'inner.commit r0 input_required',
      'outer.commit r0 input_required',
      'outer.admit r1',
      'inner.admit r1',
      'inner.commit r1 complete',
      'outer.commit r1 complete',
    ]);
    const [r0, r1] = seen;
    expect(r0).toMatchObject({ method: 'tools/call', target: 'ask_name', round: 0, stateDigest: undefined });
    expect(r0!.arguments).toEqual({ a: 1 });
    expect(r1!.round).toBe(1);
    expect(r1!.flowId).toMatch(/.+/);
    expect(r1!.stateDigest).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(r1!.stateDigest).not.toContain(stateOf(first).slice(0, 20));
    expect(r1!.stateExpiresAt).toBeGreaterThan(Date.now());
    expect(r1!.inputResponses).toEqual({ who: { action: 'accept', content: { name: 'Ada' } } });
    // Equal answers give equal digests, whatever the key order: a replay guard can compare retries by it.
    expect(r1!.answersDigest).not.toBe(r0!.answersDigest);
  });

  it('a refusal stops the round before the handler runs; the guards that admitted it are released', async () => {
    const log: string[] = [];
    const runs: string[] = [];
    const refuser: RoundGuard = {
      name: 'refuser',
      admit: () => {
        throw new RoundRefused('replayed');
      },
    };
    const core = server({ guards: [recordingGuard('first', log), refuser] }, runs);
    const response = await core.handle(call(1, 'sync'), env);
    expect(response).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32602, message: 'Invalid params: invalid requestState' },
    });
    expect(runs).toEqual([]);
    expect(log).toEqual(['first.admit r0', 'first.release Invalid params: invalid requestState']);
  });

  it('an asynchronous guard can refuse too, with its own code, message and HTTP status', async () => {
    const runs: string[] = [];
    const limiter: RoundGuard = {
      name: 'limiter',
      admit: async () => {
        await Promise.resolve();
        throw new RoundRefused('rate_limited', {
          code: -32600,
          message: 'Too many refused rounds: retry later',
          httpStatus: 429,
          httpHeaders: { 'retry-after': '3' },
        });
      },
    };
    const response = await server({ guards: [limiter] }, runs).handle(call(1, 'sync'), env);
    expect(response).toMatchObject({
      error: { code: -32600, message: 'Too many refused rounds: retry later' },
    });
    expect(runs).toEqual([]);
  });

  it('a guard may answer in the handler place (an identical retry); earlier guards commit that answer', async () => {
    const log: string[] = [];
    const runs: string[] = [];
    const cached: RoundGuard = {
      name: 'cache',
      admit: async () => ({ resultType: 'complete', content: [{ type: 'text', text: 'recorded' }] }),
    };
    const later = recordingGuard('later', log);
    const core = server({ guards: [recordingGuard('outer', log), cached, later] }, runs);
    const response = await core.handle(call(1, 'sync'), env);
    expect(response).toMatchObject({ result: { content: [{ text: 'recorded' }] } });
    expect(runs).toEqual([]);
    expect(log).toEqual(['outer.admit r0', 'outer.commit r0 complete']);
  });

  it('a handler failure releases every admitting guard and commits none', async () => {
    const log: string[] = [];
    const core = server({ guards: [recordingGuard('a', log), recordingGuard('b', log)] });
    const response = await core.handle(call(1, 'fails'), env);
    expect(response).toMatchObject({ error: { code: -32603 } });
    expect(log).toEqual(['a.admit r0', 'b.admit r0', 'b.release boom', 'a.release boom']);
  });

  it('a failing commit fails the round, and the guards not yet committed are released', async () => {
    const log: string[] = [];
    const broken = recordingGuard('inner', log, {
      commit: async () => {
        throw new Error('store down');
      },
    });
    const core = server({ guards: [recordingGuard('outer', log), broken] });
    const response = await core.handle(call(1, 'sync'), env);
    expect(response).toMatchObject({ error: { code: -32603 } });
    expect(log).toEqual([
      'outer.admit r0',
      'inner.admit r0',
      'inner.release store down',
      'outer.release store down',
    ]);
  });

  it('commit sees the answer exactly as sent; a result breaking its outputSchema is released, never committed', async () => {
    const log: string[] = [];
    const committed: unknown[] = [];
    const guard = recordingGuard('g', log, { commit: (_round, result) => void committed.push(result) });
    const core = new McpServer({ name: 'out', version: '1', stateKeys: KEYS, logger: quiet, guards: [guard] })
      .tool(
        {
          name: 'typed',
          description: 'Promises a number',
          input: z.object({ ok: z.boolean() }),
          output: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
        },
        ({ ok }) => ({
          content: [{ type: 'text', text: 'n' }],
          structuredContent: ok ? { n: 1 } : { n: 'not a number' },
        }),
      )
      .resource({ uri: 'mem://a', name: 'a' }, () => ({ contents: [{ uri: 'mem://a', text: 'A' }] })).core;
    const broken = await core.handle(call(1, 'typed', { arguments: { ok: false } }), env);
    expect(broken).toMatchObject({ error: { code: -32603 } });
    expect(committed).toEqual([]);
    expect(log).toEqual([
      'g.admit r0',
      expect.stringMatching(/^g\.release tool typed returned structuredContent/),
    ]);
    const read = await core.handle(
      { jsonrpc: '2.0', id: 2, method: 'resources/read', params: { _meta: META, uri: 'mem://a' } },
      env,
    );
    // The cache hints the client gets are part of what the guard recorded.
    expect(committed).toEqual([expect.objectContaining({ ttlMs: 60_000, cacheScope: 'public' })]);
    expect(read).toMatchObject({ result: { ttlMs: 60_000, cacheScope: 'public' } });
  });

  it('with synchronous guards a synchronous handler is still answered synchronously', () => {
    const log: string[] = [];
    const response = server({ guards: [recordingGuard('a', log), recordingGuard('b', log)] }).handleRequest(
      call(1, 'sync'),
      env,
    );
    expect(response).not.toBeInstanceOf(Promise);
    expect(log).toEqual(['a.admit r0', 'b.admit r0', 'b.commit r0 complete', 'a.commit r0 complete']);
  });

  it('after an asynchronous admit the later guards still run in order, and a later refusal releases them all', async () => {
    const log: string[] = [];
    const slow = recordingGuard('slow', log, {
      admit: async (round) => {
        await Promise.resolve();
        log.push(`slow.admit r${round.round}`);
      },
    });
    const commitOnly: RoundGuard = { name: 'counter', commit: () => void log.push('counter.commit') };
    const ok = await server({ guards: [slow, commitOnly, recordingGuard('last', log)] }).handle(
      call(1, 'sync'),
      env,
    );
    expect(ok).toMatchObject({ result: { content: [{ text: 'done' }] } });
    expect(log).toEqual([
      'slow.admit r0',
      'last.admit r0',
      'last.commit r0 complete',
      'counter.commit',
      'slow.commit r0 complete',
    ]);
    log.length = 0;
    const refuser: RoundGuard = {
      name: 'refuser',
      admit: () => {
        throw new RoundRefused('no', { code: -32600, message: 'no' });
      },
    };
    const refused = await server({ guards: [slow, recordingGuard('mid', log), refuser] }).handle(
      call(2, 'sync'),
      env,
    );
    expect(refused).toMatchObject({ error: { code: -32600 } });
    expect(log).toEqual(['slow.admit r0', 'mid.admit r0', 'mid.release no', 'slow.release no']);
  });

  it('a synchronous commit that throws releases the guards that have not committed, itself included', async () => {
    const log: string[] = [];
    const broken = recordingGuard('broken', log, {
      commit: () => {
        throw new Error('disk full');
      },
    });
    const response = await server({
      guards: [recordingGuard('outer', log), broken, recordingGuard('inner', log)],
    }).handle(call(1, 'sync'), env);
    expect(response).toMatchObject({ error: { code: -32603 } });
    expect(log).toEqual([
      'outer.admit r0',
      'broken.admit r0',
      'inner.admit r0',
      'inner.commit r0 complete',
      'broken.release disk full',
      'outer.release disk full',
    ]);
  });

  it('a release that throws does not stop the other guards from letting go', async () => {
    const log: string[] = [];
    const clumsy = recordingGuard('clumsy', log, {
      release: () => {
        throw new Error('release failed');
      },
    });
    const core = server({ guards: [recordingGuard('a', log), clumsy] });
    const response = await core.handle(call(1, 'fails'), env);
    expect(response).toMatchObject({ error: { code: -32603 } });
    expect(log).toEqual(['a.admit r0', 'clumsy.admit r0', 'a.release boom']);
  });

  it('a state the codec refuses never reaches the guards', async () => {
    const log: string[] = [];
    const core = server({ guards: [recordingGuard('g', log)] });
    const response = await core.handle(call(1, 'ask_name', answer('not-a-state')), env);
    expect(response).toMatchObject({
      error: { code: -32602, message: 'Invalid params: invalid requestState' },
    });
    expect(log).toEqual([]);
  });
});

describe('round observers', () => {
  const observed = (options: Partial<McpServerOptions> = {}) => {
    const events: RoundEvent[] = [];
    const core = server({ observers: [{ observe: (e) => void events.push(e) }], ...options });
    return { core, events };
  };

  it('see one event per MRTR request with its outcome, round, flow and answers — and none for lists', async () => {
    const { core, events } = observed();
    const first = await core.handle(call(1, 'ask_name'), env);
    await core.handle(call(2, 'ask_name', answer(stateOf(first))), env);
    await core.handle({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: { _meta: META } }, env);
    await core.handle(call(4, 'tool_error'), env);
    await core.handle(call(5, 'fails'), env);
    await core.handle(
      { jsonrpc: '2.0', id: 6, method: 'prompts/get', params: { _meta: META, name: 'greet' } },
      env,
    );
    expect(events.map((e) => [e.requestId, e.method, e.target, e.outcome, e.round])).toEqual([
      [1, 'tools/call', 'ask_name', 'input_required', 0],
      [2, 'tools/call', 'ask_name', 'complete', 1],
      [4, 'tools/call', 'tool_error', 'tool_error', 0],
      [5, 'tools/call', 'fails', 'error', 0],
      [6, 'prompts/get', 'greet', 'complete', 0],
    ]);
    const [asked, answered] = events;
    expect(asked!.inputRequests).toHaveProperty('who');
    expect(asked!.arguments).toEqual({ a: 1 });
    expect(answered!.inputResponses).toEqual({ who: { action: 'accept', content: { name: 'Ada' } } });
    expect(answered!.flowId).toBe(asked!.flowId);
    expect(answered!.durationMs).toBeGreaterThanOrEqual(0);
    // Never the state itself: an audit record must not hold a replayable token.
    expect(JSON.stringify(events)).not.toContain(stateOf(first));
  });

  it('see refusals with their precise reason, which the client never gets', async () => {
    const { core, events } = observed();
    const first = await core.handle(call(1, 'ask_name'), env);
    // The same state with other arguments: the codec knows exactly why it refuses; the client must not.
    const changed = { ...answer(stateOf(first)), arguments: { a: 2 } };
    const response = await core.handle(call(1, 'ask_name', changed), env);
    expect(response).toMatchObject({
      error: { code: -32602, message: 'Invalid params: invalid requestState' },
    });
    expect(JSON.stringify(response)).not.toContain('wrong_request');
    events.shift();
    await core.handle(call(2, 'no_such_tool'), env);
    await core.handle(call(3, 'sync', { arguments: 'not an object' }), env);
    expect(events.map((e) => [e.outcome, e.reason, e.target])).toEqual([
      ['refused', 'wrong_request', 'ask_name'],
      ['refused', 'code -32602', 'no_such_tool'],
      ['refused', 'code -32602', 'sync'],
    ]);
  });

  it('name the guard that answered a round in the handler place', async () => {
    const cache: RoundGuard = {
      name: 'replay-cache',
      admit: () => ({ resultType: 'complete', content: [{ type: 'text', text: 'recorded' }] }),
    };
    const { core, events } = observed({ guards: [cache] });
    await core.handle(call(1, 'sync'), env);
    expect(events[0]).toMatchObject({ outcome: 'complete', decidedBy: 'replay-cache' });
  });

  it('hold the answer until an asynchronous observer has settled', async () => {
    let settle: () => void = () => {};
    const recorded = new Promise<void>((resolve) => {
      settle = resolve;
    });
    const order: string[] = [];
    const core = server({
      observers: [
        {
          observe: async () => {
            order.push('observing');
            await recorded;
            order.push('recorded');
          },
        },
      ],
    });
    const pending = core.handle(call(1, 'sync'), env).then(() => order.push('answered'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['observing']);
    settle();
    await pending;
    expect(order).toEqual(['observing', 'recorded', 'answered']);
  });

  it('an observer that fails turns the answer into -32603 rather than send an unrecorded round', async () => {
    const errors: string[] = [];
    const logger = { info() {}, warn() {}, error: (_f: unknown, m: string) => void errors.push(m) };
    const core = server({
      logger,
      observers: [
        {
          observe: () => {
            throw new Error('disk full');
          },
        },
      ],
    });
    const response = await core.handle(call(1, 'sync'), env);
    expect(response).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32603, message: 'Internal error while recording the round' },
    });
    expect(errors).toEqual(['round observer failed']);
  });
});

describe('a refusal over HTTP', () => {
  it('carries its own status and headers (a rate limit: 429 and Retry-After), and the error names the limit', async () => {
    const limiter: RoundGuard = {
      name: 'limiter',
      admit: () => {
        throw new RoundRefused('rate_limited', {
          code: -32600,
          message: 'Too many refused rounds for this principal: retry in 3 s',
          httpStatus: 429,
          httpHeaders: { 'retry-after': '3' },
        });
      },
    };
    const http = new McpServer({
      name: 'limited',
      version: '1',
      stateKeys: KEYS,
      logger: quiet,
      guards: [limiter],
    })
      .tool({ name: 'sync', description: 'Answers at once' }, () => text('done'))
      .http();
    const endpoint = await http.listen();
    try {
      const refused = await rawPost(endpoint.url, JSON.stringify(call(1, 'sync')), {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'sync',
      });
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toBe('3');
      expect(JSON.parse(refused.text)).toEqual({
        jsonrpc: '2.0',
        id: 1,
        error: { code: -32600, message: 'Too many refused rounds for this principal: retry in 3 s' },
      });
    } finally {
      await endpoint.close();
    }
  });
});

describe('round guards at the edges (an attacker review)', () => {
  it('a timed-out round releases its guards only once the handler work has settled', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const log: string[] = [];
      const work = deferred();
      const core = new McpServer({
        name: 'slow',
        version: '1',
        stateKeys: KEYS,
        logger: quiet,
        guards: [recordingGuard('g', log)],
      }).prompt({ name: 'slow', description: 'Outlives its limit', timeoutMs: 100 }, async () => {
        await work.promise;
        return { messages: [{ role: 'user', content: { type: 'text', text: 'late' } }] };
      }).core;
      const answer = core.handle(
        { jsonrpc: '2.0', id: 1, method: 'prompts/get', params: { _meta: META, name: 'slow' } },
        env,
      );
      await vi.advanceTimersByTimeAsync(100);
      expect(await answer).toMatchObject({
        error: { code: -32603, message: expect.stringContaining('did not finish') },
      });
      // Answered, but the handler is still at work: letting go now would let a retry run the same effect beside it.
      expect(log).toEqual(['g.admit r0']);
      work.resolve();
      await vi.advanceTimersByTimeAsync(0);
      expect(log).toEqual(['g.admit r0', 'g.release Request timed out: slow did not finish within 100 ms']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a guard that stores its round whole keeps digests, never the token or the sealed data', async () => {
    const stored: string[] = [];
    const keeper: RoundGuard = { name: 'keeper', admit: (round) => void stored.push(JSON.stringify(round)) };
    const core = server({ guards: [keeper] });
    const first = await core.handle(call(1, 'ask_name'), env);
    await core.handle(call(2, 'ask_name', answer(stateOf(first))), env);
    const kept = JSON.parse(stored[1]!);
    // Every documented field (principal is undefined here, so JSON leaves it out), and nothing else.
    expect(Object.keys(kept).sort()).toEqual([
      'answersDigest',
      'arguments',
      'flowId',
      'inputResponses',
      'method',
      'requestId',
      'round',
      'stateDigest',
      'stateExpiresAt',
      'target',
    ]);
    expect(stored[1]).not.toContain(stateOf(first));
    expect(kept.stateDigest).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('promises of other libraries (any thenable) are awaited, from guards and observers alike', async () => {
    const thenable = <T>(value: () => T) => ({
      // biome-ignore lint/suspicious/noThenProperty: a foreign promise is exactly what this test needs.
      then: (ok: (v: T) => unknown, fail: (e: unknown) => unknown) => {
        try {
          return Promise.resolve(ok(value()));
        } catch (error) {
          return Promise.resolve(fail(error));
        }
      },
    });
    const written: string[] = [];
    const refusing: RoundGuard = {
      name: 'foreign-refusal',
      admit: () =>
        thenable(() => {
          throw new RoundRefused('foreign', { code: -32600, message: 'refused through a thenable' });
        }) as never,
    };
    const core = server({
      guards: [
        { name: 'foreign-commit', commit: () => thenable(() => void written.push('commit')) as never },
      ],
      observers: [{ observe: () => thenable(() => void written.push('observed')) as never }],
    });
    expect(await core.handle(call(1, 'sync'), env)).toMatchObject({
      result: { content: [{ text: 'done' }] },
    });
    expect(written).toEqual(['commit', 'observed']);
    const refused = await server({ guards: [refusing] }).handle(call(2, 'sync'), env);
    expect(refused).toMatchObject({ error: { code: -32600, message: 'refused through a thenable' } });
  });

  it('an answer a guard gives in the handler place is a complete result on the wire; a refusal names its guard', async () => {
    const events: RoundEvent[] = [];
    const cache: RoundGuard = {
      name: 'cache',
      admit: () => ({ content: [{ type: 'text', text: 'cached' }] }) as never,
    };
    const answered = await server({ guards: [cache] }).handle(call(1, 'sync'), env);
    expect(answered).toMatchObject({ result: { resultType: 'complete', content: [{ text: 'cached' }] } });
    const blocker: RoundGuard = {
      name: 'blocker',
      admit: () => {
        throw new RoundRefused('blocked_user', { code: -32600, message: 'Forbidden' });
      },
    };
    const core = server({
      guards: [recordingGuard('first', []), blocker],
      observers: [{ observe: (e) => void events.push(e) }],
    });
    await core.handle(call(2, 'sync'), env);
    expect(events[0]).toMatchObject({ outcome: 'refused', reason: 'blocked_user', decidedBy: 'blocker' });
  });
});
