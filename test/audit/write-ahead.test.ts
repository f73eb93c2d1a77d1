// The audit promise, by construction: a round's intent is durable before its handler runs, so no effect can happen
// that the trail does not already hold. Every way recording can fail — the sink down, full, or too slow, a record
// with no JSON form, input nested past the front door's limit — is sent here, and each test counts the effects that
// ran: none may run without its event.
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { SqliteAuditSink } from '../../src/audit/index.js';
import { type McpServerOptions, text } from '../../src/server/index.js';
import { deferred, track } from '../helpers/signals.js';
import { auditedServer, call, env, HeldSink, openTrail, recordsIn, tempDir } from './fixture.js';

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const undo of cleanups.splice(0).reverse()) await undo();
});

/** A server whose one tool has an effect (it files a ticket), and the tickets it filed. */
async function setup(
  trailOptions: Parameters<typeof openTrail>[1] = {},
  server: Partial<McpServerOptions> = {},
) {
  const tmp = tempDir();
  cleanups.push(tmp.remove);
  const path = join(tmp.dir, 'audit.db');
  const sink = new HeldSink(await SqliteAuditSink.open(path));
  const trail = await openTrail(sink, trailOptions);
  cleanups.push(() => trail.close());
  const tickets: string[] = [];
  const core = auditedServer(trail, server).tool(
    { name: 'create_ticket', description: 'Files a ticket', input: z.object({ title: z.string() }) },
    ({ title }) => {
      tickets.push(title);
      return text(`filed ${title}`);
    },
  ).core;
  const records = () => recordsIn(path);
  const file = (id: number, args: Record<string, unknown> = { title: `t${id}` }) =>
    core.handle(call(id, 'create_ticket', { arguments: args }), env);
  return { sink, trail, core, tickets, records, file };
}

/** Wait for a condition by turns of the event loop (setImmediate: never faked here), not by time. */
async function until(condition: () => boolean): Promise<void> {
  for (let turn = 0; turn < 10_000 && !condition(); turn++) await new Promise((next) => setImmediate(next));
  expect(condition()).toBe(true);
}

function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 0; i < levels; i++) value = { d: value };
  return value;
}

describe('the intent is durable before the handler runs', () => {
  it('writes the intent, runs the handler only after, and links the outcome to it', async () => {
    const { sink, tickets, file, records } = await setup();
    const gate = deferred();
    sink.held = gate.promise;
    const answer = track(file(1));
    await vi.waitFor(() => expect(sink.batches).toHaveLength(1));
    // The intent is being written: the handler waits for it.
    for (let turn = 0; turn < 5; turn++) await new Promise((next) => setImmediate(next));
    expect(tickets).toEqual([]);
    expect(answer.settled).toBe(false);
    sink.held = undefined;
    gate.resolve();
    await vi.waitFor(() => expect(answer.settled).toBe(true));
    expect(tickets).toEqual(['t1']);
    const [intent, outcome] = await records();
    expect(intent).toMatchObject({ seq: 1, outcome: 'proposed', arguments: { title: 't1' } });
    expect(outcome).toMatchObject({ seq: 2, outcome: 'complete', intentSeq: 1 });
    expect(outcome!.argumentsDigest).toBe(intent!.argumentsDigest);
  });

  it('does not run a round whose intent the sink cannot store, answers -32603 naming why, and counts it', async () => {
    const { sink, trail, tickets, file, records } = await setup();
    sink.failNext = new Error('disk full');
    const failed = await file(1);
    expect(failed).toMatchObject({
      error: {
        code: -32603,
        message: "Internal error: the round's intent could not be recorded, so create_ticket did not run",
        data: { reason: 'intent_not_recorded' },
      },
    });
    expect(tickets).toEqual([]);
    expect(trail.stats.intentsNotRecorded).toBe(1);
    // The sink is back: the failed round's outcome is recorded as an error, with its reason.
    expect((await records()).map((r) => [r.requestId, r.outcome, r.reason])).toEqual([
      [1, 'error', 'intent_not_recorded'],
    ]);
    await file(2);
    expect(tickets).toEqual(['t2']);
  });

  it('does not run a round whose intent is still unwritten when the time bound passes (a sink that hangs)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { sink, tickets, file } = await setup({}, { hookTimeoutMs: 5_000 });
    const gate = deferred();
    sink.held = gate.promise;
    const answer = track(file(1));
    await until(() => sink.batches.length === 1);
    await vi.advanceTimersByTimeAsync(4_999);
    expect(answer.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    // Its failure is an outcome to record too, and the answer waits for that within the same bound.
    await until(() => sink.batches.length === 1);
    await vi.advanceTimersByTimeAsync(5_000);
    await until(() => answer.settled);
    expect(answer.value).toMatchObject({
      error: {
        code: -32603,
        message:
          "Internal error: the round's intent could not be recorded within 5000 ms, so create_ticket did not run",
      },
    });
    // The sink comes back: the intent is written late, and still no handler runs for it.
    sink.held = undefined;
    gate.resolve();
    await until(() => sink.stored.length >= 2);
    expect(tickets).toEqual([]);
    expect(sink.stored.map((e) => [e.record.outcome, e.record.reason])).toEqual([
      ['proposed', null],
      ['error', 'intent_not_recorded'],
    ]);
  });

  it('does not run a round that waits for room in a full queue past the time bound', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { sink, trail, tickets, file } = await setup(
      { maxQueuedEvents: 1, maxBatchEvents: 1 },
      { hookTimeoutMs: 5_000 },
    );
    const gate = deferred();
    sink.held = gate.promise;
    // The queue is full with an event the disk holds (one with no time bound of its own).
    const filler = trail.observe({
      requestId: 0,
      method: 'tools/call',
      target: 'create_ticket',
      arguments: {},
      principal: undefined,
      round: 0,
      flowId: undefined,
      inputResponses: undefined,
      inputRequests: undefined,
      outcome: 'refused',
      reason: 'test',
      decidedBy: undefined,
      startedAt: Date.now(),
      durationMs: 0,
    });
    await until(() => sink.batches.length === 1);
    const waiting = track(file(1));
    await vi.advanceTimersByTimeAsync(5_000);
    await until(() => waiting.settled);
    expect(waiting.value).toMatchObject({
      error: {
        code: -32603,
        message:
          'Internal error: the round observers (no room to record the round) did not answer within 5000 ms',
      },
    });
    expect(tickets).toEqual([]);
    sink.held = undefined;
    gate.resolve();
    await filler;
    await file(2);
    expect(tickets).toEqual(['t2']);
  });

  it('does not run a round whose intent has no JSON form (canonicalisation fails), and the trail stays whole', async () => {
    const { trail, tickets, core, records } = await setup();
    // In process, a caller can pass what the wire cannot carry: the extra key is dropped by the tool's schema, so
    // the handler would run happily — but its intent cannot be recorded.
    const odd = await core.handle(
      call(1, 'create_ticket', {
        arguments: { title: 'odd', extra: 10n } as unknown as Record<string, unknown>,
      }),
      env,
    );
    expect(odd).toMatchObject({ error: { code: -32603 } });
    expect(tickets).toEqual([]);
    expect(trail.stats.intentsNotRecorded).toBe(1);
    const fine = await core.handle(call(2, 'create_ticket', { arguments: { title: 'fine' } }), env);
    expect(fine).toMatchObject({ result: { content: [{ text: 'filed fine' }] } });
    expect(tickets).toEqual(['fine']);
    expect((await records()).map((r) => [r.seq, r.requestId, r.outcome])).toEqual([
      [1, 2, 'proposed'],
      [2, 2, 'complete'],
    ]);
  });

  it('stops arguments nested past the limit at the front door, before any handler: the attack of the report', async () => {
    const { tickets, file, records } = await setup();
    // An extra key the tool's schema drops, holding JSON nested 1,000 levels deep.
    const attack = await file(1, { title: 'deep', extra: nested(1000) });
    expect(attack).toMatchObject({
      error: {
        code: -32602,
        message: 'Invalid params: arguments nests deeper than 64 levels',
        data: { limit: 'maxInputDepth', member: 'arguments', maxDepth: 64 },
      },
    });
    expect(tickets).toEqual([]);
    // Refused before it ran: one event, its outcome, with its reason.
    const stored = await records();
    expect(stored.map((r) => [r.outcome, r.reason, r.arguments])).toEqual([
      ['refused', 'code -32602', { $refused: 'Invalid params: arguments nests deeper than 64 levels' }],
    ]);
    // 64 levels in all is within the limit, and the trail records it.
    await file(2, { title: 'ok', extra: nested(62) });
    expect(tickets).toEqual(['ok']);
  });
});

describe('the effect of a round whose outcome cannot be recorded', () => {
  it('is in the trail all the same: its intent was written first', async () => {
    const { sink, tickets, file, records } = await setup();
    sink.failWhen = (events) =>
      events.some((e) => e.record.outcome !== 'proposed') ? new Error('disk full') : undefined;
    const answer = await file(1);
    expect(answer).toMatchObject({
      error: { code: -32603, message: 'Internal error while recording the round' },
    });
    expect(tickets).toEqual(['t1']);
    expect((await records()).map((r) => [r.requestId, r.outcome, r.arguments])).toEqual([
      [1, 'proposed', { title: 't1' }],
    ]);
  });
});
