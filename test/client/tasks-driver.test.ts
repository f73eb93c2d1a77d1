// Following a task in the driver, with a fake wire and fake timers: the poll pace, the deadline, what a malformed
// task ends as, questions answered under the MRTR rules and deduplicated across polls, rounds counted per update.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type DriverTarget,
  driveMrtr,
  type InputResolver,
  type MrtrEvent,
  type MrtrOutcome,
  scriptedResolver,
  type TaskWire,
} from '../../src/client/index.js';
import type { JsonObject, JsonRpcResponse } from '../../src/protocol/index.js';

const TIMES = { createdAt: '2026-01-01T00:00:00Z', lastUpdatedAt: '2026-01-01T00:00:00Z', ttlMs: 60_000 };
const task = (status: string, extra: JsonObject = {}): JsonObject => ({
  taskId: 't1',
  status,
  ...TIMES,
  ...extra,
});
const ok = (result: JsonObject): JsonRpcResponse => ({ jsonrpc: '2.0', id: 1, result: result as never });
const form = (message: string, meta?: JsonObject) => ({
  method: 'elicitation/create',
  params: {
    mode: 'form',
    message,
    requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
    ...(meta ? { _meta: meta } : {}),
  },
});
const yes = () => scriptedResolver({}, { fallback: () => ({ action: 'accept', content: { ok: true } }) });

/** A fake server side: tasks/get answers the next scripted state (the last one again when the script runs out). */
function fakeTask(created: JsonObject, states: JsonObject[]) {
  const gets: number[] = [];
  const updates: JsonObject[] = [];
  const cancels: string[] = [];
  let next = 0;
  const wire: TaskWire = {
    get: async (taskId) => {
      gets.push(Date.now());
      const state = states[Math.min(next++, states.length - 1)] as JsonObject;
      return ok({ resultType: 'complete', ...state, taskId: (state.taskId as string) ?? taskId });
    },
    update: async (_taskId, inputResponses) => {
      updates.push(inputResponses as JsonObject);
      return ok({ resultType: 'complete' });
    },
    cancel: async (taskId) => {
      cancels.push(taskId);
      return ok({ resultType: 'complete' });
    },
  };
  const events: MrtrEvent[] = [];
  const target = (resolvers: InputResolver[] = [yes()], method = 'tools/call'): DriverTarget => ({
    method,
    params: { name: 'slow' },
    target: 'slow',
    declared: new Set(['elicitation.form']),
    resolvers,
    server: 'fake',
    send: async () => ok(created),
    tasks: method === 'tools/call' ? wire : undefined,
  });
  return { wire, gets, updates, cancels, events, target };
}

/** Run the driver to its end, advancing fake time as it waits. */
async function run(promise: Promise<MrtrOutcome>, stepMs = 100, limit = 1000): Promise<MrtrOutcome> {
  let done: MrtrOutcome | undefined;
  void promise.then((o) => {
    done = o;
  });
  for (let i = 0; i < limit && done === undefined; i++) await vi.advanceTimersByTimeAsync(stepMs);
  return done ?? expect.fail('the call did not end');
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the poll pace', () => {
  it.each([
    [5, 100],
    [2500, 2500],
    [600_000, 30_000],
    [undefined, 1000],
  ])('pollIntervalMs %s → the next tasks/get after %s ms', async (asked, waited) => {
    const created = {
      resultType: 'task',
      ...task('working', asked === undefined ? {} : { pollIntervalMs: asked }),
    };
    const f = fakeTask(created, [task('completed', { result: { content: [] } })]);
    const start = Date.now();
    const outcome = driveMrtr(f.target(), { timeoutMs: 120_000 });
    await vi.advanceTimersByTimeAsync(waited - 1);
    expect(f.gets).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(f.gets).toEqual([start + waited]);
    expect(await outcome).toMatchObject({ status: 'complete', rounds: 1 });
  });

  it('a task that never ends is bounded by the call’s timeout, and left running for followTask', async () => {
    const f = fakeTask({ resultType: 'task', ...task('working') }, [task('working')]);
    const outcome = await run(driveMrtr(f.target(), { timeoutMs: 5000 }), 500);
    expect(outcome).toMatchObject({ status: 'timeout', timeoutMs: 5000 });
    expect(f.gets.length).toBeGreaterThanOrEqual(4);
    // The caller stopped waiting, not the work: an approval may take longer than any timeout.
    expect(f.cancels).toEqual([]);
  });

  it('the caller’s abort stops the wait at once and cancels the task', async () => {
    const f = fakeTask({ resultType: 'task', ...task('working', { pollIntervalMs: 20_000 }) }, [
      task('working'),
    ]);
    const controller = new AbortController();
    const outcome = driveMrtr(f.target(), { signal: controller.signal });
    await vi.advanceTimersByTimeAsync(10);
    controller.abort(new Error('stop'));
    expect(await outcome).toMatchObject({ status: 'aborted', rounds: 1 });
    expect(f.gets).toHaveLength(0);
    expect(f.cancels).toEqual(['t1']);
  });
});

describe('how a task ends', () => {
  it('completed: the inlined result is the call’s result; events on create and on every change only', async () => {
    const f = fakeTask({ resultType: 'task', ...task('working', { statusMessage: 'queued' }) }, [
      task('working', { statusMessage: 'queued' }),
      task('working', { statusMessage: '50%' }),
      task('working', { statusMessage: '50%' }),
      task('completed', { result: { content: [{ type: 'text', text: 'done' }] } }),
    ]);
    const outcome = await run(driveMrtr(f.target(), { onEvent: (e) => f.events.push(e) }));
    expect(outcome).toEqual({
      status: 'complete',
      rounds: 1,
      result: { content: [{ type: 'text', text: 'done' }] },
      declined: [],
    });
    expect(f.events.filter((e) => e.type === 'task')).toEqual([
      { type: 'task', taskId: 't1', status: 'working', statusMessage: 'queued' },
      { type: 'task', taskId: 't1', status: 'working', statusMessage: '50%' },
      { type: 'task', taskId: 't1', status: 'completed', statusMessage: undefined },
    ]);
    expect(f.events.at(-1)).toEqual({ type: 'done', status: 'complete', rounds: 1 });
  });

  it('completed at once in the CreateTaskResult: no poll at all', async () => {
    const f = fakeTask({ resultType: 'task', ...task('completed', { result: { content: [] } }) }, []);
    expect(await driveMrtr(f.target())).toMatchObject({ status: 'complete', result: { content: [] } });
    expect(f.gets).toHaveLength(0);
  });

  it('failed: the inlined JSON-RPC error is the call’s server_error, code and data kept', async () => {
    const error = { code: -32603, message: 'rate limit', data: { retry: 5 } };
    const f = fakeTask({ resultType: 'task', ...task('working') }, [task('failed', { error })]);
    expect(await run(driveMrtr(f.target()))).toEqual({ status: 'server_error', rounds: 1, error });
  });

  it('cancelled: the cancelled outcome, with the server’s message or a plain one', async () => {
    const f = fakeTask({ resultType: 'task', ...task('working') }, [
      task('cancelled', { statusMessage: 'by admin' }),
    ]);
    expect(await run(driveMrtr(f.target()))).toEqual({
      status: 'cancelled',
      rounds: 1,
      taskId: 't1',
      message: 'by admin',
    });
    const g = fakeTask({ resultType: 'task', ...task('working') }, [task('cancelled')]);
    expect(await run(driveMrtr(g.target()))).toMatchObject({ message: 'task t1 was cancelled' });
    expect(g.cancels).toEqual([]);
  });

  it('a tasks/get answered with a JSON-RPC error (task unknown or expired) ends as server_error', async () => {
    const f = fakeTask({ resultType: 'task', ...task('working') }, []);
    f.wire.get = async () => ({ jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'Task not found' } });
    expect(await run(driveMrtr(f.target()))).toMatchObject({
      status: 'server_error',
      error: { code: -32602, message: 'Task not found' },
    });
  });

  it.each([
    ['no taskId', { resultType: 'task', status: 'working', ...TIMES }, [], 'has no taskId'],
    ['an unknown status', { resultType: 'task', ...task('sleeping') }, [], 'unknown task status "sleeping"'],
    [
      'completed without a result',
      { resultType: 'task', ...task('working') },
      [task('completed')],
      'completed but has no result',
    ],
    [
      'failed without an error',
      { resultType: 'task', ...task('working') },
      [task('failed')],
      'failed without',
    ],
    [
      'input_required without inputRequests',
      { resultType: 'task', ...task('working') },
      [task('input_required')],
      'no inputRequests',
    ],
    [
      'another task’s state',
      { resultType: 'task', ...task('working') },
      [task('working', { taskId: 'other' })],
      'not the one asked about',
    ],
  ])('garbage: %s is a protocol error naming it', async (_what, created, states, message) => {
    const f = fakeTask(created, states as JsonObject[]);
    const outcome = await run(driveMrtr(f.target()));
    expect(outcome.status).toBe('protocol_error');
    expect((outcome as { message: string }).message).toContain(message);
  });

  it('a task in answer to prompts/get (a method that cannot be one) is a protocol error', async () => {
    const f = fakeTask({ resultType: 'task', ...task('working') }, []);
    const outcome = await driveMrtr(f.target([yes()], 'prompts/get'));
    expect(outcome).toMatchObject({ status: 'protocol_error' });
    expect((outcome as { message: string }).message).toContain('answered prompts/get with a task');
  });
});

describe('questions a task asks', () => {
  it('answers them with tasks/update, never twice for a key seen again, then only the new one (partial)', async () => {
    const f = fakeTask({ resultType: 'task', ...task('working') }, [
      task('input_required', { inputRequests: { a: form('First?') } }),
      // The server has not taken the answer in yet: the same key again, shown to nobody.
      task('input_required', { inputRequests: { a: form('First?') } }),
      task('input_required', { inputRequests: { a: form('First?'), b: form('Second?') } }),
      task('working'),
      task('completed', { result: { content: [] } }),
    ]);
    const outcome = await run(driveMrtr(f.target(), { onEvent: (e) => f.events.push(e) }));
    expect(outcome).toMatchObject({ status: 'complete', rounds: 3 });
    expect(f.updates).toEqual([
      { a: { action: 'accept', content: { ok: true } } },
      { b: { action: 'accept', content: { ok: true } } },
    ]);
    const asked = f.events.filter((e) => e.type === 'input_needed').map((e) => (e as { key: string }).key);
    expect(asked).toEqual(['a', 'b']);
    const rounds = f.events.filter((e) => e.type === 'round');
    expect(rounds.map((e) => (e as { method: string }).method)).toEqual([
      'tools/call',
      'tasks/update',
      'tasks/update',
    ]);
  });

  it('declined answers are reported as a call’s are', async () => {
    const f = fakeTask(
      { resultType: 'task', ...task('input_required', { inputRequests: { a: form('Go?') } }) },
      [task('completed', { result: { content: [], isError: true } })],
    );
    const no = scriptedResolver({ a: { action: 'decline' } });
    const outcome = await run(driveMrtr(f.target([no])));
    expect(outcome).toMatchObject({
      status: 'complete',
      declined: [{ round: 1, key: 'a', action: 'decline' }],
    });
  });

  it('each tasks/update counts against maxRounds: past it, round_cap with the questions still open', async () => {
    const f = fakeTask({ resultType: 'task', ...task('working') }, [
      task('input_required', { inputRequests: { a: form('First?') } }),
      task('input_required', { inputRequests: { b: form('Second?') } }),
    ]);
    const outcome = await run(driveMrtr(f.target(), { maxRounds: 1 }));
    expect(outcome).toMatchObject({ status: 'round_cap', rounds: 2, maxRounds: 1, pending: [{ key: 'b' }] });
    expect(f.updates).toHaveLength(1);
  });

  it('a question only a person may answer, and no person here: needs_person, nothing sent', async () => {
    const f = fakeTask({ resultType: 'task', ...task('working') }, [
      task('input_required', {
        inputRequests: { c: form('Approve?', { 'dev.mrtr/humanRequired': 'approval' }) },
      }),
    ]);
    const outcome = await run(driveMrtr(f.target()));
    expect(outcome).toMatchObject({ status: 'needs_person', pending: [{ key: 'c', why: 'approval' }] });
    expect(f.updates).toEqual([]);
    expect(f.cancels).toEqual([]);
  });

  it('a kind the client did not declare, or more questions than a round may ask: protocol error, nothing sent', async () => {
    const undeclared = fakeTask({ resultType: 'task', ...task('working') }, [
      task('input_required', {
        inputRequests: { s: { method: 'sampling/createMessage', params: { messages: [] } } },
      }),
    ]);
    const o1 = await run(driveMrtr(undeclared.target()));
    expect(o1).toMatchObject({ status: 'protocol_error' });
    expect((o1 as { message: string }).message).toContain('did not declare');
    const many = Object.fromEntries(Array.from({ length: 3 }, (_, i) => [`k${i}`, form(`Q${i}?`)]));
    const flood = fakeTask({ resultType: 'task', ...task('working') }, [
      task('input_required', { inputRequests: many }),
    ]);
    const o2 = await run(driveMrtr(flood.target(), { maxQuestionsPerRound: 2 }));
    expect((o2 as { message: string }).message).toContain('more than 2 questions');
    expect([...undeclared.updates, ...flood.updates]).toEqual([]);
  });
});
