// The replay rules, each checked on memory, SQLite and Redis, with the handler itself counting its executions.
import { describe, expect, it } from 'vitest';
import { INVALID_REQUEST_STATE } from '../../src/protocol/index.js';
import { deferred } from '../helpers/signals.js';
import {
  errorOf,
  formAnswer,
  present,
  replayServer,
  resultOf,
  send,
  stateOf,
  textOf,
  toolCall,
} from './replay-fixture.js';
import { STORES } from './stores.js';

const who = (name: string) => formAnswer('who', { name });

describe.each(STORES)('replay rules on %s', (_name, openStore) => {
  it('rule 1+2: the same state with the same answers gets the byte-identical answer; the handler ran once', async () => {
    const { core, counters } = replayServer(await openStore());
    const first = await send(core, toolCall('greet', {}));
    const state = stateOf(first);
    const a = await send(core, present('greet', {}, state, who('Ada')));
    const b = await send(core, present('greet', {}, state, who('Ada')));
    expect(textOf(a)).toBe('hello Ada');
    expect(JSON.stringify(resultOf(b))).toBe(JSON.stringify(resultOf(a)));
    expect(counters.completed('greet')).toBe(1);
  });

  it('rule 2: an identical retry of a middle round gets the same next-round requestState', async () => {
    const { core, counters } = replayServer(await openStore());
    const s1 = stateOf(await send(core, toolCall('chain', { n: 3 })));
    const r2a = await send(core, present('chain', { n: 3 }, s1, formAnswer('q0', { v: 'a' })));
    const r2b = await send(core, present('chain', { n: 3 }, s1, formAnswer('q0', { v: 'a' })));
    expect(stateOf(r2b)).toBe(stateOf(r2a));
    expect(JSON.stringify(resultOf(r2b))).toBe(JSON.stringify(resultOf(r2a)));
    const s3 = stateOf(
      await send(core, present('chain', { n: 3 }, stateOf(r2a), formAnswer('q1', { v: 'b' }))),
    );
    const done = await send(core, present('chain', { n: 3 }, s3, formAnswer('q2', { v: 'c' })));
    expect(textOf(done)).toBe('a,b,c');
    expect(counters.completed('chain')).toBe(1);
  });

  it('rule 3: the same state with different answers is refused with the fixed -32602 (reason: replayed)', async () => {
    const { core, counters } = replayServer(await openStore());
    const state = stateOf(await send(core, toolCall('greet', {})));
    await send(core, present('greet', {}, state, who('Ada')));
    const replay = await send(core, present('greet', {}, state, who('Mallory')));
    expect(errorOf(replay)).toEqual({ code: -32602, message: INVALID_REQUEST_STATE });
    expect(counters.completed('greet')).toBe(1);
    expect(counters.reasons()).toContain('flow_completed');
  });

  it('rule 3: different answers to a state whose round is not the last are refused as replayed', async () => {
    const { core } = replayServer(await openStore());
    const s1 = stateOf(await send(core, toolCall('chain', { n: 3 })));
    await send(core, present('chain', { n: 3 }, s1, formAnswer('q0', { v: 'a' })));
    const other = await send(core, present('chain', { n: 3 }, s1, formAnswer('q0', { v: 'z' })));
    expect(errorOf(other)).toEqual({ code: -32602, message: INVALID_REQUEST_STATE });
  });

  it('rule 3: an older round, once a newer one was presented, is refused (stale_round) — answers or not', async () => {
    const { core, counters } = replayServer(await openStore());
    const s1 = stateOf(await send(core, toolCall('chain', { n: 3 })));
    const s2 = stateOf(await send(core, present('chain', { n: 3 }, s1, formAnswer('q0', { v: 'a' }))));
    await send(core, present('chain', { n: 3 }, s2, formAnswer('q1', { v: 'b' })));
    for (const answers of [formAnswer('q0', { v: 'a' }), formAnswer('q0', { v: 'other' }), {}]) {
      const stale = await send(core, present('chain', { n: 3 }, s1, answers));
      expect(errorOf(stale)).toEqual({ code: -32602, message: INVALID_REQUEST_STATE });
    }
    expect(counters.reasons().filter((r) => r === 'stale_round')).toHaveLength(3);
    expect(counters.completed('chain')).toBe(0);
  });

  it('rule 3: any earlier state of a completed flow is refused (flow_completed); its last round still retries', async () => {
    const { core, counters } = replayServer(await openStore());
    const s1 = stateOf(await send(core, toolCall('chain', { n: 2 })));
    const s2 = stateOf(await send(core, present('chain', { n: 2 }, s1, formAnswer('q0', { v: 'a' }))));
    const done = await send(core, present('chain', { n: 2 }, s2, formAnswer('q1', { v: 'b' })));
    const old = await send(core, present('chain', { n: 2 }, s1, formAnswer('q0', { v: 'a' })));
    expect(errorOf(old)).toEqual({ code: -32602, message: INVALID_REQUEST_STATE });
    expect(counters.reasons()).toContain('flow_completed');
    const retry = await send(core, present('chain', { n: 2 }, s2, formAnswer('q1', { v: 'b' })));
    expect(JSON.stringify(resultOf(retry))).toBe(JSON.stringify(resultOf(done)));
    expect(counters.completed('chain')).toBe(1);
  });

  it('rule 4: simultaneous identical presentations run the handler once and all get its answer; others are refused', async () => {
    const { core, counters } = replayServer(await openStore());
    const state = stateOf(await send(core, toolCall('slow', {})));
    counters.gate = deferred();
    const reached = deferred();
    counters.onGate = () => reached.resolve();
    const identical = Array.from({ length: 20 }, () => send(core, present('slow', {}, state, who('Ada'))));
    await reached.promise;
    const different = await Promise.all(
      Array.from({ length: 5 }, (_, i) => send(core, present('slow', {}, state, who(`Eve${i}`)))),
    );
    for (const r of different) expect(errorOf(r)).toEqual({ code: -32602, message: INVALID_REQUEST_STATE });
    counters.gate.resolve();
    const answers = await Promise.all(identical);
    expect(new Set(answers.map((r) => JSON.stringify(resultOf(r))))).toEqual(
      new Set([JSON.stringify(resultOf(answers[0]!))]),
    );
    expect(textOf(answers[0]!)).toBe('slow hello Ada');
    expect(counters.completed('slow')).toBe(1);
  });

  it('rule 5: a step that ran in a round that then failed is not run again when the round is retried', async () => {
    const { core, counters } = replayServer(await openStore());
    const first = await send(core, toolCall('flaky', {}));
    const state = stateOf(first);
    counters.failAfterStep = true;
    const failed = await send(core, present('flaky', {}, state, formAnswer('go', { go: true })));
    expect(errorOf(failed).code).toBe(-32603);
    const retried = await send(core, present('flaky', {}, state, formAnswer('go', { go: true })));
    expect(textOf(retried)).toBe('done');
    expect([...counters.effects.values()]).toEqual([1]);
    expect(counters.completed('flaky')).toBe(1);
  });

  it('rule 6: a first call writes nothing, whether it asks or completes', async () => {
    const store = await openStore();
    const spy = { writes: 0 };
    for (const method of ['create', 'replace', 'remove', 'increment'] as const) {
      const original = store[method].bind(store) as (...args: unknown[]) => Promise<unknown>;
      (store as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
        spy.writes++;
        return original(...args);
      };
    }
    const { core } = replayServer(store);
    for (let i = 0; i < 50; i++) {
      expect(resultOf(await send(core, toolCall('greet', {}))).resultType).toBe('input_required');
      expect(resultOf(await send(core, toolCall('chain', { n: 0 }))).resultType).toBe('complete');
    }
    expect(spy.writes).toBe(0);
  });

  it('rule 6: an answer over the cache cap is not kept; its retry gets a clear error, never a second execution', async () => {
    const { core, counters } = replayServer(await openStore(), { replay: { maxCachedAnswerBytes: 1024 } });
    const state = stateOf(await send(core, toolCall('big', {})));
    const first = await send(core, present('big', {}, state, formAnswer('go', { go: true })));
    expect(textOf(first)).toHaveLength(4000);
    const retry = await send(core, present('big', {}, state, formAnswer('go', { go: true })));
    expect(errorOf(retry).code).toBe(-32600);
    expect(errorOf(retry).message).toMatch(
      /already answered, but its answer \(\d+ bytes\) is larger than the 1024 bytes kept for retries/,
    );
    expect(counters.completed('big')).toBe(1);
  });

  it('rule 7: refused presentations are counted per principal; past the limit the principal gets 429, others do not', async () => {
    const { core } = replayServer(await openStore(), {
      replay: { refusals: { maxRefusals: 3, windowMs: 3_600_000 } },
    });
    const mallory = { subject: `mallory-${Math.random()}` };
    const alice = { subject: `alice-${Math.random()}` };
    for (let i = 0; i < 3; i++) {
      const bad = await send(core, present('greet', {}, 'not-a-state', who('x')), mallory);
      expect(errorOf(bad)).toEqual({ code: -32602, message: INVALID_REQUEST_STATE });
    }
    const throttled = await send(core, toolCall('greet', {}), mallory);
    expect(errorOf(throttled).code).toBe(-32600);
    expect(errorOf(throttled).message).toMatch(
      /^Too many refused requests: 3 in the current 3600 s window \(limit 3\); retry after \d+ s$/,
    );
    expect(errorOf(throttled).data).toMatchObject({ limit: 3, windowMs: 3_600_000 });
    expect(resultOf(await send(core, toolCall('greet', {}), alice)).resultType).toBe('input_required');
  });

  it('rule 8: a store that fails makes guarded rounds fail closed with -32603, and they work again when it is back', async () => {
    const store = await openStore();
    let down = false;
    const get = store.get.bind(store);
    store.get = (key) => (down ? Promise.reject(new Error('connection refused')) : get(key));
    const { core, counters } = replayServer(store);
    const state = stateOf(await send(core, toolCall('greet', {})));
    down = true;
    const refused = await send(core, present('greet', {}, state, who('Ada')));
    expect(errorOf(refused)).toEqual({ code: -32603, message: 'Internal error: replay store unavailable' });
    expect(counters.completed('greet')).toBe(0);
    expect(counters.log).toContainEqual(
      expect.objectContaining({
        message: 'round refused',
        fields: expect.objectContaining({ reason: 'store_unavailable', cause: 'connection refused' }),
      }),
    );
    down = false;
    expect(textOf(await send(core, present('greet', {}, state, who('Ada'))))).toBe('hello Ada');
    expect(counters.completed('greet')).toBe(1);
  });
});

describe('replay details', () => {
  it('the same answers in another key order are the same answers: the retry is served from the record', async () => {
    const { MemoryStore } = await import('../../src/stores/index.js');
    const { core, counters } = replayServer(new MemoryStore());
    const state = stateOf(await send(core, toolCall('greet', {})));
    const a = await send(
      core,
      present('greet', {}, state, { who: { action: 'accept', content: { name: 'Ada' } } }),
    );
    const b = await send(
      core,
      present('greet', {}, state, { who: { content: { name: 'Ada' }, action: 'accept' } }),
    );
    expect(JSON.stringify(resultOf(b))).toBe(JSON.stringify(resultOf(a)));
    expect(counters.completed('greet')).toBe(1);
  });

  it('one record per flow, however many rounds it took (plus one per step that ran)', async () => {
    const { MemoryStore } = await import('../../src/stores/index.js');
    const store = new MemoryStore();
    const { core } = replayServer(store);
    let reply = await send(core, toolCall('chain', { n: 4 }));
    for (let i = 0; i < 4; i++)
      reply = await send(
        core,
        present('chain', { n: 4 }, stateOf(reply), formAnswer(`q${i}`, { v: String(i) })),
      );
    expect(textOf(reply)).toBe('0,1,2,3');
    expect(store.size).toBe(1);
    const flaky = await send(core, toolCall('flaky', {}));
    await send(core, present('flaky', {}, stateOf(flaky), formAnswer('go', { go: true })));
    expect(store.size).toBe(3);
  });
});
