// The audit trail on the SQLite sink: each round that runs its handler leaves its intent (a `proposed` event, durable
// before the handler runs) and its outcome (answers, steps, notes, linked to the intent); a round refused before it
// ran leaves its outcome only; sensitive fields redacted; durable before the answer; group commit; a full queue
// waits, never drops.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  AuditTrail,
  openAuditSink,
  SqliteAuditReader,
  SqliteAuditSink,
  verifyTrail,
} from '../../src/audit/index.js';
import { text } from '../../src/server/index.js';
import { MemoryStore } from '../../src/stores/index.js';
import { deferred, track } from '../helpers/signals.js';
import {
  AUDIT_KEY,
  accept,
  auditedServer,
  call,
  env,
  HeldSink,
  openTrail,
  outcomes,
  recordsIn,
  stateOf,
  tempDir,
} from './fixture.js';

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const undo of cleanups.splice(0).reverse()) await undo();
});

async function setup(options: Parameters<typeof openTrail>[1] = {}) {
  const tmp = tempDir();
  cleanups.push(tmp.remove);
  const path = join(tmp.dir, 'audit.db');
  const sink = new HeldSink(await SqliteAuditSink.open(path));
  const trail = await openTrail(sink, options);
  cleanups.push(() => trail.close());
  const core = auditedServer(trail).core;
  const records = () => recordsIn(path);
  return { path, sink, trail, core, records };
}

describe('one event per round', () => {
  it('records the intent, what was asked and answered, the step that ran, the note and the outcome', async () => {
    const { core, records, path } = await setup();
    const first = await core.handle(call(1, 'delete_file', { arguments: { path: '/tmp/x' } }), env);
    const state = stateOf(first);
    const second = await core.handle(
      call(2, 'delete_file', {
        arguments: { path: '/tmp/x' },
        requestState: state,
        inputResponses: { consent: accept({ confirm: true }) },
      }),
      env,
    );
    expect(second).toMatchObject({ result: { content: [{ text: 'deleted /tmp/x' }] } });
    const [p1, r1, p2, r2] = await records();
    // Each round's intent comes first, written before its handler ran: who, what, the arguments as given.
    for (const [proposed, seq, round] of [
      [p1, 1, 0],
      [p2, 3, 1],
    ] as const)
      expect(proposed).toMatchObject({
        seq,
        round,
        requestId: round + 1,
        method: 'tools/call',
        target: 'delete_file',
        arguments: { path: '/tmp/x' },
        outcome: 'proposed',
        steps: [],
        asked: null,
        principal: null,
      });
    expect(p2!.answers).toEqual({ consent: { action: 'accept', content: { confirm: true } } });
    expect(p1!.argumentsDigest).toBe(r1!.argumentsDigest);
    expect(r1).toMatchObject({
      v: 1,
      instance: 'test-1',
      seq: 2,
      intentSeq: 1,
      requestId: 1,
      round: 0,
      method: 'tools/call',
      target: 'delete_file',
      arguments: { path: '/tmp/x' },
      asked: [{ key: 'consent', kind: 'elicitation.form' }],
      answers: null,
      steps: [],
      outcome: 'input_required',
      notes: { resource: '/tmp/x' },
      principal: null,
    });
    expect(r1!.argumentsDigest).toMatch(/^sha256:[\w-]{43}$/);
    expect(r1!.flowId).toEqual(expect.any(String));
    expect(r2).toMatchObject({
      seq: 4,
      intentSeq: 3,
      prev: expect.stringMatching(/^[0-9a-f]{64}$/),
      round: 1,
      flowId: r1!.flowId,
      arguments: { path: '/tmp/x' },
      argumentsDigest: r1!.argumentsDigest,
      answers: { consent: { action: 'accept', content: { confirm: true } } },
      steps: ['delete'],
      outcome: 'complete',
      asked: null,
    });
    expect(r2!.durationMs).toBeGreaterThanOrEqual(0);
    // Never the requestState: not in any event, not anywhere in the file.
    expect(readFileSync(path).includes(state)).toBe(false);
    expect(JSON.stringify([r1, r2])).not.toContain(state);
  });

  it('records refusals with the codec’s precise reason, and failures as error', async () => {
    const { core, records } = await setup();
    const refused = await core.handle(
      call(1, 'delete_file', { arguments: { path: '/a' }, requestState: 'not-a-state' }),
      env,
    );
    expect(refused).toMatchObject({ error: { code: -32602 } });
    await core.handle(call(2, 'broken'), env);
    const invalid = await core.handle(call(3, 'delete_file', { arguments: { path: 7 } }), env);
    expect(invalid).toMatchObject({ result: { isError: true } });
    const unknown = await core.handle(call(4, 'no_such_tool', { arguments: { path: '/' } }), env);
    expect(unknown).toMatchObject({ error: { code: -32602 } });
    const all = await records();
    // Refused before a handler ran: no intent. The others ran theirs, each after its intent.
    expect(all.map((r) => [r.requestId, r.outcome])).toEqual([
      [1, 'refused'],
      [2, 'proposed'],
      [2, 'error'],
      [3, 'proposed'],
      [3, 'tool_error'],
      [4, 'refused'],
    ]);
    const [r1, r2, r3, r4] = outcomes(all);
    expect(r1).toMatchObject({ outcome: 'refused', reason: 'malformed', target: 'delete_file' });
    expect(r1!.intentSeq).toBeUndefined();
    expect(r2).toMatchObject({ outcome: 'error', target: 'broken', reason: 'code -32603' });
    expect(r3).toMatchObject({ outcome: 'tool_error', arguments: { path: 7 } });
    expect(r4).toMatchObject({ outcome: 'refused', reason: 'code -32602', target: 'no_such_tool' });
  });

  it('redacts sensitive answer fields with a keyed digest that correlates equal values', async () => {
    const { core, records, path } = await setup();
    const signIn = async (id: number, password: string) => {
      const first = await core.handle(call(id, 'sign_in'), env);
      return core.handle(
        call(id + 1, 'sign_in', {
          requestState: stateOf(first),
          inputResponses: { credentials: accept({ user: 'ada', password }) },
        }),
        env,
      );
    };
    await signIn(1, 'hunter2-secret');
    await signIn(3, 'hunter2-secret');
    await signIn(5, 'other-secret');
    const answered = outcomes(await records())
      .filter((r) => r.answers)
      .map((r) => r.answers!.credentials);
    expect(answered[0]).toEqual({
      action: 'accept',
      content: { user: 'ada', password: { $redacted: expect.stringMatching(/^hmac-sha256:[\w-]{43}$/) } },
    });
    const digest = (a: unknown) =>
      (a as { content: { password: { $redacted: string } } }).content.password.$redacted;
    expect(digest(answered[0])).toBe(digest(answered[1]));
    expect(digest(answered[0])).not.toBe(digest(answered[2]));
    // The intents carry the same answers, redacted the same way.
    const intended = (await records()).filter((r) => r.outcome === 'proposed' && r.answers);
    expect(intended.map((r) => r.answers!.credentials)).toEqual(answered);
    expect(readFileSync(path).includes('hunter2-secret')).toBe(false);
  });
});

describe('refusals by guards', () => {
  it('records a replay and a rate limit with the guard’s reason and name', async () => {
    const tmp = tempDir();
    cleanups.push(tmp.remove);
    const path = join(tmp.dir, 'audit.db');
    const trail = await openTrail(await SqliteAuditSink.open(path));
    cleanups.push(() => trail.close());
    const core = auditedServer(trail, {
      replayStore: new MemoryStore(),
      replay: { refusals: { maxRefusals: 1, windowMs: 60_000 } },
    }).core;
    const ada = { ...env, principal: { subject: 'ada' } };
    const first = await core.handle(call(1, 'delete_file', { arguments: { path: '/a' } }), ada);
    const answer = (confirm: boolean) => ({
      arguments: { path: '/a' },
      requestState: stateOf(first),
      inputResponses: { consent: accept({ confirm }) },
    });
    await core.handle(call(2, 'delete_file', answer(true)), ada);
    const replayed = await core.handle(call(3, 'delete_file', answer(false)), ada);
    expect(replayed).toMatchObject({ error: { code: -32602 } });
    const limited = await core.handle(call(4, 'delete_file', answer(false)), ada);
    expect(limited).toMatchObject({ error: { code: -32600 } });
    const records = await recordsIn(path);
    expect(
      outcomes(records)
        .slice(2)
        .map((r) => [r.requestId, r.outcome, r.reason, r.decidedBy]),
    ).toEqual([
      [3, 'refused', 'flow_completed', 'replay'],
      [4, 'refused', 'rate_limited', 'refusal_limit'],
    ]);
  });
});

describe('durable before the answer', () => {
  it('holds the answer until the event is stored', async () => {
    const { core, sink, records } = await setup();
    const gate = deferred();
    sink.held = gate.promise;
    const answer = track(core.handle(call(1, 'delete_file', { arguments: { path: '/a' } }), env));
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(sink.batches).toHaveLength(1);
    expect(answer.settled).toBe(false);
    sink.held = undefined;
    gate.resolve();
    await expect.poll(() => answer.settled).toBe(true);
    expect((await records()).map((r) => r.outcome)).toEqual(['proposed', 'input_required']);
  });

  it('answers -32603 when the outcome cannot be stored, and the chain carries on intact', async () => {
    const { core, sink, records, trail } = await setup();
    sink.failWhen = (events) =>
      events.some((e) => e.record.outcome !== 'proposed') ? new Error('disk full') : undefined;
    const failed = await core.handle(call(1, 'delete_file', { arguments: { path: '/a' } }), env);
    expect(failed).toMatchObject({
      error: { code: -32603, message: 'Internal error while recording the round' },
    });
    // The intent was durable before the handler ran: the round's effect, if it had one, is in the trail.
    expect(trail.head.seq).toBe(1);
    sink.failWhen = undefined;
    const ok = await core.handle(call(2, 'delete_file', { arguments: { path: '/b' } }), env);
    expect(ok).toMatchObject({ result: { resultType: 'input_required' } });
    const stored = await records();
    expect(stored.map((r) => [r.seq, r.requestId, r.outcome])).toEqual([
      [1, 1, 'proposed'],
      [2, 2, 'proposed'],
      [3, 2, 'input_required'],
    ]);
    expect(trail.stats).toEqual({ intentsNotRecorded: 0, outcomesNotRecorded: 1 });
  });

  it('fails only the round whose note has no JSON form, and keeps the chain whole', async () => {
    const { trail, records } = await setup();
    const core = auditedServer(trail).tool(
      { name: 'odd_note', description: 'Notes a bigint' },
      (_args, ctx) => {
        ctx.audit.note({ size: 10n });
        return { content: [{ type: 'text', text: 'done' }] };
      },
    ).core;
    const [odd, fine] = await Promise.all([
      core.handle(call(1, 'odd_note'), env),
      core.handle(call(2, 'delete_file', { arguments: { path: '/b' } }), env),
    ]);
    expect(odd).toMatchObject({
      error: { code: -32603, message: 'Internal error while recording the round' },
    });
    expect(fine).toMatchObject({ result: { resultType: 'input_required' } });
    const stored = await records();
    expect(stored.map((r) => r.seq)).toEqual([1, 2, 3]);
    // The odd round's intent is there (its handler ran after it); its outcome is not, and it was answered -32603.
    expect(stored.filter((r) => r.requestId === 1).map((r) => r.outcome)).toEqual(['proposed']);
    expect(stored.filter((r) => r.requestId === 2).map((r) => r.outcome)).toEqual([
      'proposed',
      'input_required',
    ]);
  });

  it('writes rounds that arrive together in one transaction (group commit)', async () => {
    const { core, sink, records } = await setup();
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        core.handle(call(i + 1, 'delete_file', { arguments: { path: `/${i}` } }), env),
      ),
    );
    // 20 intents and 20 outcomes, far fewer writes.
    expect(sink.batches.length).toBeLessThan(20);
    expect(sink.batches.reduce((n, b) => n + b.events.length, 0)).toBe(40);
    expect(await records()).toHaveLength(40);
  });

  it('makes new rounds wait when the queue is full, and drops none', async () => {
    const { core, sink, records } = await setup({ maxQueuedEvents: 2, maxBatchEvents: 2 });
    const gate = deferred();
    sink.held = gate.promise;
    const answers = Array.from({ length: 9 }, (_, i) =>
      track(core.handle(call(i + 1, 'delete_file', { arguments: { path: `/${i}` } }), env)),
    );
    await expect.poll(() => sink.batches.length).toBe(1);
    expect(answers.some((a) => a.settled)).toBe(false);
    sink.held = undefined;
    gate.resolve();
    await expect.poll(() => answers.every((a) => a.settled)).toBe(true);
    expect(sink.batches.every((b) => b.events.length <= 2)).toBe(true);
    const ids = outcomes(await records()).map((r) => r.requestId);
    expect(ids.sort((a, b) => Number(a) - Number(b))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(await records()).toHaveLength(18);
  });
});

describe('back-pressure before a round runs', () => {
  it('holds new rounds before their handler runs while the events waiting for the disk fill the queue', async () => {
    const tmp = tempDir();
    cleanups.push(tmp.remove);
    const sink = new HeldSink(await SqliteAuditSink.open(join(tmp.dir, 'audit.db')));
    const trail = await openTrail(sink, { maxQueuedEvents: 2, maxBatchEvents: 2 });
    cleanups.push(() => trail.close());
    let runs = 0;
    // Write-ahead: each handler checks, as it starts, that its round's intent is already stored.
    const ranWithoutIntent: unknown[] = [];
    const core = auditedServer(trail).tool(
      { name: 'count', description: 'Counts the rounds that ran', input: z.object({}) },
      (_args, ctx) => {
        runs += 1;
        const intent = sink.stored.find(
          (e) => e.record.requestId === ctx.requestId && e.record.outcome === 'proposed',
        );
        if (!intent) ranWithoutIntent.push(ctx.requestId);
        return text(`run ${runs}`);
      },
    ).core;
    const gate = deferred();
    sink.held = gate.promise;
    const send = (id: number) => track(core.handle(call(id, 'count', { arguments: {} }), env));
    const first = [send(1), send(2)];
    // Both intents are in the write the sink holds: the queue is full, and neither handler has run.
    await expect.poll(() => sink.batches.length).toBe(1);
    expect(sink.batches[0]!.events.map((e) => e.record.outcome)).toEqual(['proposed', 'proposed']);
    const later = [send(3), send(4), send(5)];
    // Turns of the event loop pass, and no round has run: they wait for the disk, or for room.
    for (let turn = 0; turn < 5; turn++) await new Promise((next) => setImmediate(next));
    expect(runs).toBe(0);
    expect([...first, ...later].some((a) => a.settled)).toBe(false);
    sink.held = undefined;
    gate.resolve();
    await expect.poll(() => [...first, ...later].every((a) => a.settled)).toBe(true);
    expect(runs).toBe(5);
    expect(ranWithoutIntent).toEqual([]);
    const order = sink.stored.map((e) => `${e.record.requestId}:${e.record.outcome}`);
    for (const id of [1, 2, 3, 4, 5])
      expect(order.indexOf(`${id}:proposed`), `round ${id}`).toBeLessThan(order.indexOf(`${id}:complete`));
    expect(order).toHaveLength(10);
  });

  it('never leaves a round waiting for room when the trail closes: each is recorded or answered -32603', async () => {
    const tmp = tempDir();
    cleanups.push(tmp.remove);
    const sink = new HeldSink(await SqliteAuditSink.open(join(tmp.dir, 'audit.db')));
    const trail = await openTrail(sink, { maxQueuedEvents: 1, maxBatchEvents: 1 });
    const ran: Array<string | number> = [];
    const core = auditedServer(trail).tool(
      { name: 'count', description: 'Counts', input: z.object({}) },
      (_args, ctx) => {
        ran.push(ctx.requestId);
        return text('ran');
      },
    ).core;
    const gate = deferred();
    sink.held = gate.promise;
    const send = (id: number) => track(core.handle(call(id, 'count', { arguments: {} }), env));
    const first = send(1);
    await expect.poll(() => sink.batches.length).toBe(1);
    const waiting = [send(2), send(3), send(4)];
    const closing = trail.close();
    sink.held = undefined;
    gate.resolve();
    await closing;
    const all = [first, ...waiting];
    await expect.poll(() => all.every((a) => a.settled)).toBe(true);
    // What the file holds, not what was attempted: a write that raced the close failed, and its round was refused.
    const stored = await recordsIn(join(tmp.dir, 'audit.db'));
    const recorded = new Set(outcomes(stored).map((r) => r.requestId));
    const intended = new Set(stored.filter((r) => r.outcome === 'proposed').map((r) => r.requestId));
    // The first round's intent was being written when the trail closed: it is stored.
    expect(intended.has(1)).toBe(true);
    for (const [i, answer] of all.entries()) {
      const id = i + 1;
      if (recorded.has(id))
        expect(answer.value, `round ${id}`).toMatchObject({ result: { content: [{ text: 'ran' }] } });
      else expect(answer.value, `round ${id}`).toMatchObject({ error: { code: -32603 } });
    }
    // No handler ran without its intent in the file.
    expect(ran.every((id) => intended.has(id))).toBe(true);
    // At least one was still waiting when the trail closed, and was refused rather than left hanging.
    expect(waiting.some((a) => (a.value as { error?: unknown }).error !== undefined)).toBe(true);
  });
});

describe('chain and checkpoints', () => {
  it('seals a checkpoint every N events and at close, and the whole trail verifies', async () => {
    const { core, sink, trail, path } = await setup({ checkpointEvery: 3 });
    for (let i = 1; i <= 7; i++)
      await core.handle(call(i, 'delete_file', { arguments: { path: `/${i}` } }), env);
    await trail.close();
    // 14 events: each round's intent and outcome.
    const sealed = sink.batches.filter((b) => b.checkpoint).map((b) => b.checkpoint!.seq);
    expect(sealed).toEqual([3, 6, 9, 12, 14]);
    const reader = new SqliteAuditReader(path);
    const report = verifyTrail({
      events: await reader.events(),
      stored: await reader.checkpoints(),
      verifiers: [AUDIT_KEY.verifier],
    });
    await reader.close();
    expect(report).toMatchObject({ ok: true, events: 14, checkpoints: 5 });
    expect(report.chains).toEqual([
      { instance: 'test-1', events: 14, headSeq: 14, sealedSeq: 14, unfinished: 0 },
    ]);
  });

  it('seals a checkpoint every T seconds while events come in', async () => {
    const { vi } = await import('vitest');
    vi.useFakeTimers({ toFake: ['setInterval'] });
    try {
      const { core, sink } = await setup({ checkpointIntervalMs: 5000 });
      await core.handle(call(1, 'delete_file', { arguments: { path: '/1' } }), env);
      expect(sink.batches.some((b) => b.checkpoint)).toBe(false);
      vi.advanceTimersByTime(5000);
      await expect.poll(() => sink.batches.some((b) => b.checkpoint?.seq === 2)).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('continues a writer’s chain when it opens again under the same instance name', async () => {
    const tmp = tempDir();
    cleanups.push(tmp.remove);
    const path = join(tmp.dir, 'audit.db');
    for (const id of [1, 2]) {
      const trail = await openTrail(await SqliteAuditSink.open(path));
      await auditedServer(trail).core.handle(call(id, 'delete_file', { arguments: { path: '/x' } }), env);
      await trail.close();
    }
    const reader = new SqliteAuditReader(path);
    const events = await reader.events();
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(
      verifyTrail({ events, stored: await reader.checkpoints(), verifiers: [AUDIT_KEY.verifier] }).ok,
    ).toBe(true);
    await reader.close();
  });

  it('refuses to continue a chain whose head in the sink is not a seq and a SHA-256 (an edited file)', async () => {
    // chain() writes the head's hash into the new event's text as it is: a hash column holding a quote would put
    // members of the editor's choosing into an event the writer signs off, and a seq stored as text would make
    // "seq":"41" + 1 = 411. The writer must refuse such a head, not build on it.
    const tmp = tempDir();
    cleanups.push(tmp.remove);
    const path = join(tmp.dir, 'audit.db');
    const first = await openTrail(await SqliteAuditSink.open(path));
    // One event: a round refused before it ran records its outcome only.
    await auditedServer(first).core.handle(
      call(1, 'delete_file', { arguments: { path: '/x' }, requestState: 'forged' }),
      env,
    );
    await first.close();
    for (const [column, value, problem] of [
      ['hash', `${'ab'.repeat(32)}","principal":{"sub":"admin"},"x":"`, /hash .*, which is not a SHA-256/],
      ['seq', 'one', /seq "one", which is not a positive integer/],
    ] as const) {
      const db = new Database(path);
      const original = db.prepare('SELECT seq, hash FROM mrtr_audit_events').get() as {
        seq: number;
        hash: string;
      };
      db.prepare(`UPDATE mrtr_audit_events SET ${column} = ?`).run(value);
      db.close();
      const sink = await SqliteAuditSink.open(path);
      cleanups.push(() => sink.close());
      await expect(openTrail(sink)).rejects.toThrow(problem);
      const undo = new Database(path);
      undo.prepare('UPDATE mrtr_audit_events SET seq = ?, hash = ?').run(original.seq, original.hash);
      undo.close();
    }
  });

  it('refuses a second live writer under the same name: its rounds fail closed', async () => {
    const { path, core } = await setup();
    const twin = await AuditTrail.open(await SqliteAuditSink.open(path), {
      key: AUDIT_KEY,
      instance: 'test-1',
    });
    cleanups.push(() => twin.close());
    await core.handle(call(1, 'delete_file', { arguments: { path: '/x' } }), env);
    const clash = await auditedServer(twin).core.handle(
      call(2, 'delete_file', { arguments: { path: '/y' } }),
      env,
    );
    expect(clash).toMatchObject({ error: { code: -32603 } });
  });

  it('writes the same through the fsync sink (sqlite:PATH?synchronous=full), on its own thread', async () => {
    const tmp = tempDir();
    cleanups.push(tmp.remove);
    const path = join(tmp.dir, 'full.db');
    const sink = await openAuditSink(`sqlite:${path}?synchronous=full`);
    expect(sink).toBeInstanceOf(SqliteAuditSink);
    expect(sink.description).toBe(`sqlite:${path}?synchronous=full`);
    const trail = await openTrail(sink);
    const core = auditedServer(trail).core;
    await Promise.all(
      [1, 2, 3].map((i) => core.handle(call(i, 'delete_file', { arguments: { path: `/${i}` } }), env)),
    );
    await trail.close();
    const reader = new SqliteAuditReader(path);
    const report = verifyTrail({
      events: await reader.events(),
      stored: await reader.checkpoints(),
      verifiers: [AUDIT_KEY.verifier],
    });
    await reader.close();
    expect(report).toMatchObject({ ok: true, events: 6, checkpoints: 1 });
    await expect(openAuditSink(`sqlite:${path}?synchronous=off`)).rejects.toThrow(
      'synchronous must be normal or full, got "off"',
    );
  });

  it('refuses bad options and instance names with ERR_AUDIT_CONFIG', async () => {
    const tmp = tempDir();
    cleanups.push(tmp.remove);
    const sink = await SqliteAuditSink.open(join(tmp.dir, 'a.db'));
    cleanups.push(() => sink.close());
    await expect(AuditTrail.open(sink, { instance: 'has space' })).rejects.toMatchObject({
      code: 'ERR_AUDIT_CONFIG',
    });
    await expect(AuditTrail.open(sink, { checkpointEvery: 0 })).rejects.toMatchObject({
      code: 'ERR_AUDIT_CONFIG',
    });
    await expect(AuditTrail.open(sink, { key: 'nonsense' })).rejects.toMatchObject({
      code: 'ERR_AUDIT_CONFIG',
    });
  });
});
