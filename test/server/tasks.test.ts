// The tasks extension on the server: a call becomes a task only for a client that declares the extension; the task
// runs its rounds on the server's side (answers checked as a round's), only its principal may see or steer it, a
// cancel reaches the handler's signal, and every round and transition is an audit event.

import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { elicitationForm } from '../../src/flow/index.js';
import { RoundRefused } from '../../src/protocol/index.js';
import { McpServer, type Principal, type RoundEvent, text } from '../../src/server/index.js';
import { generateKeySpec } from '../../src/state/index.js';
import type { MemoryStore } from '../../src/stores/index.js';
import { deferred, Happenings } from '../helpers/signals.js';
import { ALICE, ended, type Loose, MALLORY, pollUntil, request, send } from './tasks-helpers.js';

const Confirm = elicitationForm(z.object({ confirm: z.boolean() }));

function taskServer(o: { events?: RoundEvent[]; store?: MemoryStore } = {}) {
  const happened = new Happenings();
  const release = deferred();
  const seen: unknown[] = [];
  const server = new McpServer({
    name: 'tasks-test',
    version: '1',
    stateKeys: generateKeySpec(),
    logger: { info() {}, warn() {}, error() {} },
    validateResults: true,
    legacyClients: false,
    ...(o.store ? { tasks: { store: o.store } } : {}),
    observers: o.events ? [{ observe: (e) => void o.events!.push(e) }] : [],
  })
    .tool({ name: 'plain', description: 'never a task' }, () => text('plain answer'))
    .tool({ name: 'quick', description: 'a task that answers at once', task: 'optional' }, (_a, ctx) =>
      text(`quick: ${JSON.stringify(Object.keys(ctx.inputResponses))}`),
    )
    .tool({ name: 'only_task', description: 'runs only as a task', task: 'required' }, () => text('done'))
    .tool(
      { name: 'held', description: 'waits for the test, or for its signal', task: 'optional' },
      async (_a, ctx) => {
        happened.record('held:started');
        ctx.signal.addEventListener('abort', () => happened.record('held:aborted'));
        await Promise.race([release.promise, new Promise((r) => ctx.signal.addEventListener('abort', r))]);
        return text(ctx.signal.aborted ? 'stopped' : 'released');
      },
    )
    .tool({ name: 'confirm', description: 'asks one question', task: 'optional' }, async (_a, ctx) => {
      const answer = await ctx.ask.elicit('Go ahead?', Confirm, { key: 'go' });
      seen.push(ctx.inputResponses);
      return text(answer.action === 'accept' && answer.content.confirm ? 'went ahead' : 'stayed');
    });
  return { server, happened, release, seen };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('creating a task', () => {
  it('a task tool called with the extension answers a flat CreateTaskResult, durable before the answer', async () => {
    const { server } = taskServer();
    const created = (await send(server, 'tools/call', { name: 'quick', arguments: {} })).result;
    expect(created).toMatchObject({
      resultType: 'task',
      status: 'working',
      ttlMs: 86_400_000,
      pollIntervalMs: 1000,
    });
    expect(created.taskId).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Object.keys(created)).not.toContain('task');
    expect(Object.keys(created)).not.toContain('requestState');
    // tasks/get resolves at once: the record was stored before the CreateTaskResult went out.
    const now = (await send(server, 'tasks/get', { taskId: created.taskId })).result;
    expect(now.taskId).toBe(created.taskId);
    const done = await pollUntil(server, created.taskId, ended);
    expect(done).toMatchObject({ status: 'completed', resultType: 'complete' });
    expect(done.result.content[0].text).toBe('quick: []');
  });

  it('without the extension the same tool answers as a plain call; a plain tool never becomes a task', async () => {
    const { server } = taskServer();
    const sync = (await send(server, 'tools/call', { name: 'quick', arguments: {} }, { tasks: false }))
      .result;
    expect(sync).toMatchObject({ resultType: 'complete', content: [{ text: 'quick: []' }] });
    const plain = (await send(server, 'tools/call', { name: 'plain', arguments: {} })).result;
    expect(plain).toMatchObject({ resultType: 'complete', content: [{ text: 'plain answer' }] });
  });

  it('a tool that runs only as a task refuses a client without the extension: -32021 naming the extension', async () => {
    const { server } = taskServer();
    const refused = await send(server, 'tools/call', { name: 'only_task', arguments: {} }, { tasks: false });
    expect(refused.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
    });
    expect(refused.error.message).toContain('only_task');
  });

  it('tasks/get, tasks/update and tasks/cancel need the extension declared on the request', async () => {
    const { server } = taskServer();
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      const r = await send(server, method, { taskId: 'x', inputResponses: {} }, { tasks: false });
      expect(r.error, method).toMatchObject({ code: -32021 });
    }
  });

  it('discovery advertises the extension; tasks: false offers no tasks and no task methods', async () => {
    const { server } = taskServer();
    const found = (await send(server, 'server/discover', {})).result;
    expect(found.capabilities.extensions).toEqual({ 'io.modelcontextprotocol/tasks': {} });
    const off = new McpServer({ name: 'off', version: '1', stateKeys: generateKeySpec(), tasks: false }).tool(
      { name: 'quick', description: 'x', task: 'optional' },
      () => text('sync'),
    );
    expect((await send(off, 'server/discover', {})).result.capabilities.extensions).toBeUndefined();
    expect((await send(off, 'tools/call', { name: 'quick', arguments: {} })).result.resultType).toBe(
      'complete',
    );
    expect((await send(off, 'tasks/get', { taskId: 'x' })).error.code).toBe(-32601);
  });

  it('a bad task option is refused at registration, naming it', () => {
    const server = new McpServer({ name: 'bad', version: '1', stateKeys: generateKeySpec() });
    expect(() => server.tool({ name: 't', task: 'sometimes' as never }, () => text('x'))).toThrow(
      "tool t: task must be 'optional', 'required' or { support, start?, ttlMs? }",
    );
    expect(() =>
      server.tool({ name: 'u', task: { support: 'optional', start: 'later' as never } }, () => text('x')),
    ).toThrow("tool u: task.start must be 'call' or 'handler'");
  });
});

describe('a task that asks', () => {
  it('shows the question on tasks/get, takes the answer with tasks/update, and completes', async () => {
    const { server } = taskServer();
    const { taskId } = (await send(server, 'tools/call', { name: 'confirm', arguments: {} })).result;
    const asking = await pollUntil(server, taskId, (t) => t.status === 'input_required');
    expect(Object.keys(asking.inputRequests)).toEqual(['go']);
    expect(asking.inputRequests.go.method).toBe('elicitation/create');
    const ack = await send(server, 'tasks/update', {
      taskId,
      inputResponses: { go: { action: 'accept', content: { confirm: true } } },
    });
    expect(ack.result).toEqual({ resultType: 'complete', _meta: expect.any(Object) });
    const done = await pollUntil(server, taskId, ended);
    expect(done.result.content[0].text).toBe('went ahead');
  });

  it("waits for its answer longer than a client's round state lives (10 min): its state lives as long as the task", async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { server } = taskServer();
    const { taskId } = (await send(server, 'tools/call', { name: 'confirm', arguments: {} })).result;
    await pollUntil(server, taskId, (t) => t.status === 'input_required');
    vi.setSystemTime(Date.now() + 6 * 60 * 60 * 1000);
    await send(server, 'tasks/update', {
      taskId,
      inputResponses: { go: { action: 'accept', content: { confirm: true } } },
    });
    expect((await pollUntil(server, taskId, ended)).result.content[0].text).toBe('went ahead');
  });

  it('an answer of the wrong kind is checked as a round checks it: asked again, under a new key', async () => {
    const { server } = taskServer();
    const { taskId } = (await send(server, 'tools/call', { name: 'confirm', arguments: {} })).result;
    await pollUntil(server, taskId, (t) => t.status === 'input_required');
    await send(server, 'tasks/update', {
      taskId,
      inputResponses: { go: { action: 'accept', content: { confirm: 'yes' } } },
    });
    const again = await pollUntil(
      server,
      taskId,
      (t) => t.status === 'input_required' && !('go' in t.inputRequests),
    );
    // Keys are unique over the task's lifetime: the re-asked question cannot be mistaken for the answered one.
    expect(Object.keys(again.inputRequests)).toEqual(['go~2']);
    await send(server, 'tasks/update', { taskId, inputResponses: { 'go~2': { action: 'decline' } } });
    expect((await pollUntil(server, taskId, ended)).result.content[0].text).toBe('stayed');
  });

  it('input for keys the task did not ask is ignored and never reaches the handler', async () => {
    const { server, seen } = taskServer();
    const { taskId } = (await send(server, 'tools/call', { name: 'confirm', arguments: {} })).result;
    await pollUntil(server, taskId, (t) => t.status === 'input_required');
    const extra = await send(server, 'tasks/update', {
      taskId,
      inputResponses: { injected: { action: 'accept', content: { confirm: true } } },
    });
    expect(extra.result.resultType).toBe('complete');
    expect((await send(server, 'tasks/get', { taskId })).result.status).toBe('input_required');
    await send(server, 'tasks/update', {
      taskId,
      inputResponses: { go: { action: 'accept', content: { confirm: true } }, other: { action: 'accept' } },
    });
    await pollUntil(server, taskId, ended);
    expect(seen).toEqual([{ go: { action: 'accept', content: { confirm: true } } }]);
  });

  it('input for a task that asked nothing changes nothing', async () => {
    const { server, happened, release } = taskServer();
    const { taskId } = (await send(server, 'tools/call', { name: 'held', arguments: {} })).result;
    await happened.seen('held:started');
    const r = await send(server, 'tasks/update', { taskId, inputResponses: { q0: { action: 'accept' } } });
    expect(r.result.resultType).toBe('complete');
    expect((await send(server, 'tasks/get', { taskId })).result.status).toBe('working');
    release.resolve();
    expect((await pollUntil(server, taskId, ended)).result.content[0].text).toBe('released');
  });

  it('tasks/update with answers that are not objects is -32602 naming the field', async () => {
    const { server } = taskServer();
    const { taskId } = (await send(server, 'tools/call', { name: 'confirm', arguments: {} })).result;
    expect((await send(server, 'tasks/update', { taskId, inputResponses: 'yes' })).error).toMatchObject({
      code: -32602,
      message: 'Invalid params: inputResponses must be an object of answers',
    });
    expect((await send(server, 'tasks/update', { taskId, inputResponses: { go: 7 } })).error).toMatchObject({
      code: -32602,
      message: 'Invalid params: inputResponses.go must be an object',
    });
  });
});

describe('cancelling a task', () => {
  it("aborts the handler's signal, settles as cancelled, and a second cancel gets the same ack", async () => {
    const { server, happened } = taskServer();
    const { taskId } = (await send(server, 'tools/call', { name: 'held', arguments: {} })).result;
    await happened.seen('held:started');
    const ack = await send(server, 'tasks/cancel', { taskId });
    expect(Object.keys(ack.result).sort()).toEqual(['_meta', 'resultType']);
    await happened.seen('held:aborted');
    const after = (await send(server, 'tasks/get', { taskId })).result;
    expect(after).toMatchObject({ status: 'cancelled' });
    expect(after.result).toBeUndefined();
    const again = await send(server, 'tasks/cancel', { taskId });
    expect(again.result.resultType).toBe('complete');
    expect((await send(server, 'tasks/get', { taskId })).result.status).toBe('cancelled');
  });
});

describe('only the principal who made a task may see or steer it', () => {
  it("another principal's get, update and cancel are answered as for an unknown id, and the task is untouched", async () => {
    const { server, happened, release } = taskServer();
    const { taskId } = (await send(server, 'tools/call', { name: 'held', arguments: {} }, { who: ALICE }))
      .result;
    await happened.seen('held:started');
    const unknown = 'A'.repeat(43);
    const asUnknown = (r: Loose, id: string) => ({
      code: r.error.code,
      message: r.error.message.replace(id, 'ID'),
    });
    for (const [method, extra] of [
      ['tasks/get', {}],
      ['tasks/update', { inputResponses: { q0: { action: 'accept' } } }],
      ['tasks/cancel', {}],
    ] as const) {
      const foreign = await send(server, method, { taskId, ...extra }, { who: MALLORY });
      const made_up = await send(server, method, { taskId: unknown, ...extra }, { who: MALLORY });
      expect(asUnknown(foreign, taskId), method).toEqual(asUnknown(made_up, unknown));
      expect(foreign.error.code).toBe(-32602);
      // Anonymous is not a wildcard either.
      expect((await send(server, method, { taskId, ...extra })).error.code).toBe(-32602);
    }
    expect((await send(server, 'tasks/get', { taskId }, { who: ALICE })).result.status).toBe('working');
    release.resolve();
    expect((await pollUntil(server, taskId, ended, ALICE)).result.content[0].text).toBe('released');
  });

  it('a guessed or malformed id is not found, and a long one is not echoed whole', async () => {
    const { server } = taskServer();
    for (const taskId of ['guess', 'x'.repeat(43), '../../etc', 'y'.repeat(10_000), 42, null]) {
      const r = await send(server, 'tasks/get', { taskId });
      expect(r.error.code).toBe(-32602);
      expect(r.error.message.length).toBeLessThan(160);
    }
  });
});

describe('task expiry', () => {
  it('a task is gone once its ttlMs has passed: tasks/get says not found', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { server } = taskServer();
    const { taskId, ttlMs } = (await send(server, 'tools/call', { name: 'quick', arguments: {} })).result;
    await pollUntil(server, taskId, ended);
    vi.setSystemTime(Date.now() + ttlMs - 1);
    expect((await send(server, 'tasks/get', { taskId })).result.status).toBe('completed');
    vi.setSystemTime(Date.now() + 2);
    expect((await send(server, 'tasks/get', { taskId })).error).toMatchObject({ code: -32602 });
  });
});

describe('the audit trail', () => {
  it('records the creating round, every task round with its task id, and a cancel', async () => {
    const events: RoundEvent[] = [];
    const { server, happened } = taskServer({ events });
    const { taskId } = (await send(server, 'tools/call', { name: 'confirm', arguments: {} }, { who: ALICE }))
      .result;
    await pollUntil(server, taskId, (t) => t.status === 'input_required', ALICE);
    await send(
      server,
      'tasks/update',
      { taskId, inputResponses: { go: { action: 'accept', content: { confirm: true } } } },
      { who: ALICE },
    );
    await pollUntil(server, taskId, ended, ALICE);
    const held = (await send(server, 'tools/call', { name: 'held', arguments: {} }, { who: ALICE })).result
      .taskId;
    await happened.seen('held:started');
    await send(server, 'tasks/cancel', { taskId: held }, { who: ALICE });
    const mine = events.filter((e) => (e.notes?.task as Loose)?.id === taskId);
    expect(mine.map((e) => [e.method, e.outcome, e.round])).toEqual([
      ['tools/call', 'input_required', 0], // the call that became the task: it goes on
      ['tools/call', 'input_required', 0], // the task's first round asked
      ['tools/call', 'complete', 1], // the round with the answer
    ]);
    expect(mine[0]!.notes?.task).toMatchObject({ created: true, status: 'working' });
    expect(mine[2]!.inputResponses).toEqual({ go: { action: 'accept', content: { confirm: true } } });
    expect(mine.every((e) => e.principal?.subject === 'alice')).toBe(true);
    const cancel = events.find((e) => e.method === 'tasks/cancel');
    expect(cancel).toMatchObject({ target: 'held', notes: { task: { id: held, status: 'cancelled' } } });
  });
});

describe('the audit trail names only tasks that exist', () => {
  it('a call refused as a task (too large) records created: false, never a task that was not stored', async () => {
    const events: RoundEvent[] = [];
    const { server } = taskServer({ events });
    const reply = await send(server, 'tools/call', {
      name: 'quick',
      arguments: { blob: 'x'.repeat(900_000) },
    });
    expect(reply.error.code).toBe(-32602);
    const event = events.find((e) => e.method === 'tools/call' && e.outcome !== 'input_required');
    expect(event?.notes?.task).toMatchObject({ created: false });
    expect(JSON.stringify(events.map((e) => e.notes))).not.toContain('"created":true');
  });
});

describe('task status notifications on subscriptions/listen', () => {
  it('a client without the extension asking for taskIds gets -32021', async () => {
    const { server } = taskServer();
    const r = await send(
      server,
      'subscriptions/listen',
      { notifications: { taskIds: ['x'] } },
      { tasks: false },
    );
    expect(r.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
    });
  });

  it("agrees to the caller's own tasks only, and tells each change with the whole task", async () => {
    const { server } = taskServer();
    const mine = (await send(server, 'tools/call', { name: 'confirm', arguments: {} }, { who: ALICE })).result
      .taskId;
    const theirs = (await send(server, 'tools/call', { name: 'confirm', arguments: {} }, { who: MALLORY }))
      .result.taskId;
    await pollUntil(server, mine, (t) => t.status === 'input_required', ALICE);
    const sent: Loose[] = [];
    const stop = new AbortController();
    const heard = new Happenings();
    const listening = server.core.handle(
      request('subscriptions/listen', { notifications: { taskIds: [mine, theirs, 'nope'] } }),
      {
        principal: ALICE,
        signal: stop.signal,
        notify: (n) => {
          sent.push(n);
          heard.record(`${n.method}:${(n.params as Loose).status ?? ''}`);
        },
      },
    );
    await heard.seen('notifications/subscriptions/acknowledged:');
    expect(sent[0].params.notifications).toEqual({ taskIds: [mine] });
    await send(
      server,
      'tasks/update',
      { taskId: mine, inputResponses: { go: { action: 'accept', content: { confirm: true } } } },
      { who: ALICE },
    );
    await heard.seen('notifications/tasks:completed');
    const completed = sent.find((n) => n.method === 'notifications/tasks' && n.params.status === 'completed');
    expect(completed.params).toMatchObject({ taskId: mine, result: { content: [{ text: 'went ahead' }] } });
    expect(completed.params._meta['io.modelcontextprotocol/subscriptionId']).toBeDefined();
    expect(sent.every((n) => n.params.taskId !== theirs)).toBe(true);
    stop.abort();
    expect(((await listening) as Loose).result.resultType).toBe('complete');
  });
});

describe('a task round turned away or too large', () => {
  it('a round refused for now (503 with Retry-After) is run again later, not failed', async () => {
    let admits = 0;
    const server = new McpServer({
      name: 'busy',
      version: '1',
      stateKeys: generateKeySpec(),
      logger: { info() {}, warn() {}, error() {} },
      tasks: { pollIntervalMs: 1 },
      guards: [
        {
          name: 'busy-once',
          // The creating call passes; the task's first round is turned away once; its second try passes.
          admit: () => {
            admits += 1;
            if (admits === 2)
              throw new RoundRefused('busy', {
                code: -32603,
                message: 'Internal error: busy, retry shortly',
                httpStatus: 503,
                httpHeaders: { 'retry-after': '0' },
              });
          },
        },
      ],
    }).tool({ name: 'quick', description: 'x', task: 'optional' }, () => text('ran'));
    const { taskId } = (await send(server, 'tools/call', { name: 'quick', arguments: {} })).result;
    const done = await pollUntil(server, taskId, ended);
    expect(done).toMatchObject({ status: 'completed', result: { content: [{ text: 'ran' }] } });
    expect(admits).toBe(3);
  });

  it('a call too large to keep as a task is -32602 naming its size, and no task is made', async () => {
    const { server } = taskServer();
    const reply = await send(server, 'tools/call', {
      name: 'quick',
      arguments: { blob: 'x'.repeat(900_000) },
    });
    expect(reply.error.code).toBe(-32602);
    expect(reply.error.message).toMatch(
      /too large to run as a task \(9\d{5} bytes with its arguments and _meta; a task starts with at most 786432\)/,
    );
  });

  it('answers too large for the task to keep are -32602, and the task still asks', async () => {
    const { server } = taskServer();
    const { taskId } = (
      await send(server, 'tools/call', { name: 'confirm', arguments: { pad: 'x'.repeat(700_000) } })
    ).result;
    const asking = await pollUntil(server, taskId, (t) => t.status === 'input_required');
    const key = Object.keys(asking.inputRequests)[0] as string;
    const reply = await send(server, 'tasks/update', {
      taskId,
      inputResponses: { [key]: { action: 'accept', content: { confirm: true, note: 'y'.repeat(400_000) } } },
    });
    expect(reply.error).toMatchObject({
      code: -32602,
      message: 'Invalid params: these answers are too large for the task to keep; send shorter ones',
    });
    expect((await send(server, 'tasks/get', { taskId })).result.status).toBe('input_required');
  });

  it('an answer larger than the store keeps fails the task saying so', async () => {
    const server = new McpServer({
      name: 'large',
      version: '1',
      stateKeys: generateKeySpec(),
      logger: { info() {}, warn() {}, error() {} },
    }).tool({ name: 'huge', description: 'x', task: 'optional' }, () => text('x'.repeat(2 * 1024 * 1024)));
    const { taskId } = (await send(server, 'tools/call', { name: 'huge', arguments: {} })).result;
    const done = await pollUntil(server, taskId, ended);
    expect(done.status).toBe('failed');
    expect(done.error.message).toContain("the task's answer is larger than the task store keeps");
  });
});

describe("start: 'handler' — what ran before ctx.startTask() is not run again in the task", () => {
  function startsLate(o: { replayStore?: MemoryStore } = {}) {
    const effects: string[] = [];
    const server = new McpServer({
      name: 'starts-late',
      version: '1',
      stateKeys: generateKeySpec(),
      logger: { info() {}, warn() {}, error() {} },
      ...(o.replayStore ? { replayStore: o.replayStore } : {}),
    })
      .tool(
        {
          name: 'reserve',
          description: 'a step, then the task',
          task: { support: 'optional', start: 'handler' },
        },
        async (_a, ctx) => {
          const ticket = await ctx.ask.step('reserve', () => {
            effects.push('reserved');
            return `T-${effects.length}`;
          });
          ctx.startTask();
          effects.push('long work');
          return text(`reserved ${ticket}`);
        },
      )
      .tool(
        {
          name: 'ask_then_reserve',
          description: 'a question, a step, then the task',
          task: { support: 'optional', start: 'handler' },
        },
        async (_a, ctx) => {
          const answer = await ctx.ask.elicit('Go ahead?', Confirm, { key: 'go' });
          effects.push(`asked: ${answer.action}`);
          const ticket = await ctx.ask.step('reserve', () => {
            effects.push('reserved');
            return 'T-1';
          });
          ctx.startTask();
          return text(`reserved ${ticket} after ${answer.action}`);
        },
      );
    return { server, effects };
  }

  it('a step on the first call (no requestState) runs once, without a replay store', async () => {
    const { server, effects } = startsLate();
    const created = await send(server, 'tools/call', { name: 'reserve', arguments: {} });
    expect(created.result.resultType).toBe('task');
    const done = await pollUntil(server, created.result.taskId, ended);
    expect(done).toMatchObject({ status: 'completed', result: { content: [{ text: 'reserved T-1' }] } });
    expect(effects).toEqual(['reserved', 'long work']);
  });

  it('the same with a replay store, and the task does not ask again what the call already answered', async () => {
    const { MemoryStore } = await import('../../src/stores/index.js');
    const { server, effects } = startsLate({ replayStore: new MemoryStore() });
    const first = await send(server, 'tools/call', { name: 'ask_then_reserve', arguments: {} });
    expect(first.result.resultType).toBe('input_required');
    const created = await send(server, 'tools/call', {
      name: 'ask_then_reserve',
      arguments: {},
      requestState: first.result.requestState,
      inputResponses: { go: { action: 'accept', content: { confirm: true } } },
    });
    expect(created.result.resultType).toBe('task');
    const done = await pollUntil(server, created.result.taskId, ended);
    expect(done).toMatchObject({
      status: 'completed',
      result: { content: [{ text: 'reserved T-1 after accept' }] },
    });
    // The question was answered once and the step ran once; the task's round replayed both from the sealed journal.
    expect(effects.filter((e) => e === 'reserved')).toHaveLength(1);
    expect(effects.filter((e) => e.startsWith('asked'))).toHaveLength(2);
  });
});

describe("each principal's unfinished tasks are bounded (tasks.maxPerPrincipal)", () => {
  function bounded() {
    const release = deferred();
    const statuses: number[] = [];
    const server = new McpServer({
      name: 'bounded',
      version: '1',
      stateKeys: generateKeySpec(),
      logger: { info() {}, warn() {}, error() {} },
      tasks: { maxPerPrincipal: 2 },
    })
      .tool({ name: 'held', description: 'waits for the test', task: 'required' }, async () => {
        await release.promise;
        return text('released');
      })
      .tool({ name: 'sometimes', description: 'a task if it can be', task: 'optional' }, (_a, _ctx) =>
        text('ran'),
      )
      .tool({ name: 'needs_approval', description: 'waits for a person elsewhere' }, async (_a, ctx) => {
        await ctx.ask.url('Ask your approver', 'https://approvals.test/1', {
          key: 'approval',
          humanRequired: 'approval',
        });
        return text('approved');
      });
    const call = (name: string, who: Principal) =>
      server.core.handle(request('tools/call', { name, arguments: {} }), {
        principal: who,
        signal: new AbortController().signal,
        notify: () => undefined,
        overrideHttpStatus: (status) => void statuses.push(status),
      }) as Promise<Loose>;
    return { server, release, statuses, call };
  }

  it('past the limit a new task is refused with 429 naming the count and the limit; others are not affected', async () => {
    const { release, statuses, call } = bounded();
    const first = await call('held', ALICE);
    const second = await call('held', ALICE);
    expect([first.result.resultType, second.result.resultType]).toEqual(['task', 'task']);
    const third = await call('held', ALICE);
    expect(third.error).toMatchObject({ code: -32600, data: { retryAfterSeconds: 30, limit: 2 } });
    expect(third.error.message).toContain('Too many unfinished tasks: 2 of yours');
    expect(third.error.message).toContain('(limit 2)');
    expect(statuses).toEqual([429]);
    // Another principal has a share of its own.
    expect((await call('held', MALLORY)).result.resultType).toBe('task');
    release.resolve();
  });

  it('past the limit a tool that may also run plainly runs as a plain call, with no 429', async () => {
    const { release, statuses, call } = bounded();
    await call('held', ALICE);
    await call('held', ALICE);
    const plain = await call('sometimes', ALICE);
    expect(plain.result).toMatchObject({ resultType: 'complete' });
    expect(statuses).toEqual([]);
    release.resolve();
  });

  it('a task that ends (cancelled or completed) frees its place', async () => {
    const { server, release, call } = bounded();
    const first = (await call('held', ALICE)).result;
    await call('held', ALICE);
    expect((await call('held', ALICE)).error?.code).toBe(-32600);
    await send(server, 'tasks/cancel', { taskId: first.taskId }, { who: ALICE });
    const third = (await call('held', ALICE)).result;
    expect(third.resultType).toBe('task');
    expect((await call('held', ALICE)).error?.code).toBe(-32600);
    // Once the held tasks complete, their places are free again.
    release.resolve();
    await pollUntil(server, third.taskId, ended, ALICE);
    expect((await call('held', ALICE)).result.resultType).toBe('task');
  });

  it('a call that waits for a person, past the limit, goes on as plain rounds instead of failing', async () => {
    const { release, call } = bounded();
    await call('held', ALICE);
    await call('held', ALICE);
    const waiting = await call('needs_approval', ALICE);
    expect(waiting.result.resultType).toBe('input_required');
    expect(waiting.result.inputRequests.approval.params.url).toBe('https://approvals.test/1');
    release.resolve();
  });

  it('a bad limit is refused when the server starts, naming the option', () => {
    for (const bad of [0, 1.5, 10_001])
      expect(
        () =>
          new McpServer({
            name: 'x',
            version: '1',
            stateKeys: generateKeySpec(),
            tasks: { maxPerPrincipal: bad },
          }).core,
      ).toThrow(`tasks.maxPerPrincipal must be an integer from 1 to 10000, got ${bad}`);
  });
});
