// Attack: ctx.startTask() in a tool with start: 'handler'. What the round resolved before it is sealed into a state
// the task's first round opens; nothing before startTask may be asked or run twice, the sealed state never reaches a
// client, and replaying the call that started the task does not start its work again.

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { elicitationForm } from '../../src/flow/index.js';
import { McpServer, text } from '../../src/server/index.js';
import { generateKeySpec } from '../../src/state/index.js';
import { MemoryStore } from '../../src/stores/index.js';
import { deferred } from '../helpers/signals.js';
import { ALICE, ended, type Loose, MALLORY, pollUntil, send } from '../server/tasks-helpers.js';

const Confirm = elicitationForm(z.object({ confirm: z.boolean() }));
const HANDLER = { support: 'optional', start: 'handler' } as const;

function server(o: { replayStore?: MemoryStore; maxPerPrincipal?: number } = {}) {
  const effects: string[] = [];
  const stepGate = deferred();
  const s = new McpServer({
    name: 'starts-late',
    version: '1',
    stateKeys: generateKeySpec(),
    logger: { info() {}, warn() {}, error() {} },
    ...(o.replayStore ? { replayStore: o.replayStore } : {}),
    ...(o.maxPerPrincipal ? { tasks: { maxPerPrincipal: o.maxPerPrincipal } } : {}),
  })
    // A step started and not awaited, then the task: an async handler.
    .tool({ name: 'unawaited_async', description: 'x', task: HANDLER }, async (_a, ctx) => {
      const charged = ctx.ask.step('charge', async () => {
        await stepGate.promise;
        effects.push('charged');
        return 'receipt-1';
      });
      ctx.startTask();
      effects.push('in task');
      return text(`done with ${await charged}`);
    })
    // The same from a synchronous handler: startTask throws before any await.
    .tool({ name: 'unawaited_sync', description: 'x', task: HANDLER }, (_a, ctx) => {
      void ctx.ask.step('charge', () => {
        effects.push('charged');
        return 'receipt-1';
      });
      ctx.startTask();
      effects.push('in task');
      return text('done');
    })
    // The same from a synchronous handler.
    .tool({ name: 'failing_step_sync', description: 'x', task: HANDLER }, (_a, ctx) => {
      void ctx.ask.step('charge', async () => {
        await stepGate.promise;
        effects.push('charge attempted');
        throw new Error('card declined');
      });
      ctx.startTask();
      effects.push('in task');
      return text('done');
    })
    // startTask twice, and again inside the task.
    .tool({ name: 'twice', description: 'x', task: HANDLER }, async (_a, ctx) => {
      const n = await ctx.ask.step('count', () => {
        effects.push('counted');
        return 1;
      });
      ctx.startTask();
      ctx.startTask();
      effects.push('in task');
      return text(`n=${n}`);
    })
    // A question asked and not awaited, then the task.
    .tool({ name: 'pending_question', description: 'x', task: HANDLER }, async (_a, ctx) => {
      const answer = ctx.ask.elicit('Go ahead?', Confirm, { key: 'go' });
      ctx.startTask();
      const a = await answer;
      effects.push(`answered ${a.action}`);
      return text(`answer: ${a.action}`);
    })
    // A question answered in a plain round, a step, then the task's long work (an effect of its own).
    .tool({ name: 'ask_step_start', description: 'x', task: HANDLER }, async (_a, ctx) => {
      const answer = await ctx.ask.elicit('Go ahead?', Confirm, { key: 'go' });
      const ticket = await ctx.ask.step('reserve', () => {
        effects.push('reserved');
        return 'T-1';
      });
      ctx.startTask();
      effects.push('long work');
      return text(`${ticket} after ${answer.action}`);
    })
    // A step still running when the task starts, that then fails.
    .tool({ name: 'failing_step', description: 'x', task: HANDLER }, async (_a, ctx) => {
      const charged = ctx.ask.step('charge', async () => {
        await stepGate.promise;
        effects.push('charge attempted');
        throw new Error('card declined');
      });
      ctx.startTask();
      effects.push('in task');
      return text(`charged ${await charged}`);
    });
  return { server: s, effects, stepGate };
}

const call = (s: McpServer, name: string, extra: Record<string, unknown> = {}, who = ALICE): Promise<Loose> =>
  send(s, 'tools/call', { name, arguments: {}, ...extra }, { who });

describe('attack: a step started but not awaited before ctx.startTask()', () => {
  it('async handler: the step runs once, and the task sees its result', async () => {
    const { server: s, effects, stepGate } = server();
    const created = call(s, 'unawaited_async');
    stepGate.resolve();
    const { result } = await created;
    expect(result.resultType).toBe('task');
    const done = await pollUntil(s, result.taskId, ended, ALICE);
    expect(done).toMatchObject({
      status: 'completed',
      result: { content: [{ text: 'done with receipt-1' }] },
    });
    expect(effects.filter((e) => e === 'charged')).toHaveLength(1);
  });

  it('synchronous handler: the step runs once', async () => {
    const { server: s, effects } = server();
    const { result } = await call(s, 'unawaited_sync');
    expect(result.resultType).toBe('task');
    const done = await pollUntil(s, result.taskId, ended, ALICE);
    expect(done.status).toBe('completed');
    expect(effects.filter((e) => e === 'charged')).toHaveLength(1);
  });

  it('a step still running at startTask that fails fails the call, as it would without startTask: no task runs it again', async () => {
    const { server: s, effects, stepGate } = server();
    const sent = call(s, 'failing_step');
    stepGate.resolve();
    const reply = await sent;
    if (reply.result?.resultType === 'task') await pollUntil(s, reply.result.taskId, ended, ALICE);
    expect(effects.filter((e) => e === 'charge attempted')).toHaveLength(1);
    expect(effects).not.toContain('in task');
    expect(reply.result?.resultType).not.toBe('task');
  });

  it('the same from a synchronous handler', async () => {
    const { server: s, effects, stepGate } = server();
    const sent = call(s, 'failing_step_sync');
    stepGate.resolve();
    const reply = await sent;
    if (reply.result?.resultType === 'task') await pollUntil(s, reply.result.taskId, ended, ALICE);
    expect(effects).toEqual(['charge attempted']);
    expect(reply.error?.code).toBe(-32603);
  });
});

describe('attack: startTask twice, and inside the task', () => {
  it('makes one task, whose round runs to the end (startTask inside a task does nothing)', async () => {
    const { server: s, effects } = server({ maxPerPrincipal: 1 });
    const { result } = await call(s, 'twice');
    expect(result.resultType).toBe('task');
    const done = await pollUntil(s, result.taskId, ended, ALICE);
    expect(done).toMatchObject({ status: 'completed', result: { content: [{ text: 'n=1' }] } });
    expect(effects).toEqual(['counted', 'in task']);
    // Only one place was taken, and it is free again.
    expect((await call(s, 'twice')).result.resultType).toBe('task');
  });
});

describe('attack: a question left pending when startTask is called', () => {
  it('is asked once, in the task, and its answer reaches the handler', async () => {
    const { server: s, effects } = server();
    const { result } = await call(s, 'pending_question');
    expect(result.resultType).toBe('task');
    const asking = await pollUntil(s, result.taskId, (t) => t.status === 'input_required' || ended(t), ALICE);
    expect(Object.keys(asking.inputRequests ?? {})).toEqual(['go']);
    await send(
      s,
      'tasks/update',
      { taskId: result.taskId, inputResponses: { go: { action: 'accept', content: { confirm: true } } } },
      { who: ALICE },
    );
    const done = await pollUntil(s, result.taskId, ended, ALICE);
    expect(done).toMatchObject({ status: 'completed', result: { content: [{ text: 'answer: accept' }] } });
    expect(effects).toEqual(['answered accept']);
  });
});

describe('attack: the sealed task-start state', () => {
  it('never reaches the client: neither the task made nor tasks/get carries a requestState or a journal', async () => {
    const { server: s } = server();
    const first = await call(s, 'ask_step_start');
    const created = await call(s, 'ask_step_start', {
      requestState: first.result.requestState,
      inputResponses: { go: { action: 'accept', content: { confirm: true } } },
    });
    expect(created.result.resultType).toBe('task');
    expect(JSON.stringify(created)).not.toContain('requestState');
    const seen = [await send(s, 'tasks/get', { taskId: created.result.taskId }, { who: ALICE })];
    seen.push({ result: await pollUntil(s, created.result.taskId, ended, ALICE) });
    for (const reply of seen) expect(JSON.stringify(reply)).not.toMatch(/requestState|"journal"|"next"/);
  });

  it("another principal replaying the call's state cannot start the task", async () => {
    const { server: s, effects } = server();
    const first = await call(s, 'ask_step_start');
    const stolen = await call(
      s,
      'ask_step_start',
      {
        requestState: first.result.requestState,
        inputResponses: { go: { action: 'accept', content: { confirm: true } } },
      },
      MALLORY,
    );
    expect(stolen.error?.code).toBe(-32602);
    expect(effects).toEqual([]);
  });

  it('replaying the call that started the task (replay store) does not run the work after startTask again', async () => {
    const { server: s, effects } = server({ replayStore: new MemoryStore() });
    const first = await call(s, 'ask_step_start');
    const answering = {
      requestState: first.result.requestState,
      inputResponses: { go: { action: 'accept', content: { confirm: true } } },
    };
    const created = await call(s, 'ask_step_start', answering);
    expect(created.result.resultType).toBe('task');
    await pollUntil(s, created.result.taskId, ended, ALICE);
    const replayed = await call(s, 'ask_step_start', answering);
    if (replayed.result?.resultType === 'task') await pollUntil(s, replayed.result.taskId, ended, ALICE);
    expect(effects.filter((e) => e === 'reserved')).toHaveLength(1);
    expect(effects.filter((e) => e === 'long work')).toHaveLength(1);
  });

  it('the same call replayed at once, before the task ran a round, starts no second task', async () => {
    const { server: s, effects } = server({ replayStore: new MemoryStore() });
    const first = await call(s, 'ask_step_start');
    const answering = {
      requestState: first.result.requestState,
      inputResponses: { go: { action: 'accept', content: { confirm: true } } },
    };
    const created = await call(s, 'ask_step_start', answering);
    const replayed = await call(s, 'ask_step_start', answering);
    for (const r of [created, replayed])
      if (r.result?.resultType === 'task') await pollUntil(s, r.result.taskId, ended, ALICE);
    expect(effects.filter((e) => e === 'reserved')).toHaveLength(1);
    expect(effects.filter((e) => e === 'long work')).toHaveLength(1);
  });

  it('the same call sent twice concurrently starts one task', async () => {
    const { server: s, effects } = server({ replayStore: new MemoryStore() });
    const first = await call(s, 'ask_step_start');
    const answering = {
      requestState: first.result.requestState,
      inputResponses: { go: { action: 'accept', content: { confirm: true } } },
    };
    const replies = await Promise.all([
      call(s, 'ask_step_start', answering),
      call(s, 'ask_step_start', answering),
    ]);
    for (const r of replies)
      if (r.result?.resultType === 'task') await pollUntil(s, r.result.taskId, ended, ALICE);
    expect(effects.filter((e) => e === 'reserved')).toHaveLength(1);
    expect(effects.filter((e) => e === 'long work')).toHaveLength(1);
  });
});
