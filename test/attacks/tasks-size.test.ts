// Attack: sizes. A task's record (arguments, _meta, answers, sealed state) is one store value of at most 1 MiB. Large
// calls, counted in characters that take several bytes each, and answers that grow the record, must be refused as
// the caller's fault (-32602) without leaving a task behind, taking a place in the count, or changing the task.

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { elicitationForm } from '../../src/flow/index.js';
import { McpServer, text } from '../../src/server/index.js';
import { generateKeySpec } from '../../src/state/index.js';
import { deferred } from '../helpers/signals.js';
import { ALICE, ended, type Loose, pollUntil, send } from '../server/tasks-helpers.js';

const Note = elicitationForm(z.object({ note: z.string() }));

function server(limit = 2) {
  const release = deferred();
  const s = new McpServer({
    name: 'sizes',
    version: '1',
    stateKeys: generateKeySpec(),
    logger: { info() {}, warn() {}, error() {} },
    tasks: { maxPerPrincipal: limit },
  })
    .tool({ name: 'held', description: 'waits for the test', task: 'optional' }, async () => {
      await release.promise;
      return text('released');
    })
    .tool(
      { name: 'many_notes', description: 'asks notes one after another', task: 'optional' },
      async (_a, ctx) => {
        let total = 0;
        for (let i = 0; i < 8; i++) {
          const r = await ctx.ask.elicit(`Note ${i}`, Note, { key: `n${i}` });
          total += r.action === 'accept' ? r.content.note.length : 0;
        }
        return text(`${total} characters of notes`);
      },
    )
    .tool({ name: 'two_notes', description: 'asks two notes at once', task: 'optional' }, async (_a, ctx) => {
      const [a, b] = await Promise.all([
        ctx.ask.elicit('First note', Note, { key: 'a' }),
        ctx.ask.elicit('Second note', Note, { key: 'b' }),
      ]);
      const len = (r: typeof a) => (r.action === 'accept' ? r.content.note.length : 0);
      return text(`notes of ${len(a)} and ${len(b)} characters`);
    });
  return { server: s, release };
}

const call = (s: McpServer, name: string, args: Record<string, unknown> = {}): Promise<Loose> =>
  send(s, 'tools/call', { name, arguments: args }, { who: ALICE });

describe('attack: a call too large to be a task, in multi-byte characters', () => {
  it('is -32602 by its bytes, not its characters, and takes no place in the count', async () => {
    const { server: s, release } = server(1);
    // 280 000 characters, 840 000 bytes: under 3/4 MiB counted in characters, over it in bytes.
    const refused = await call(s, 'held', { blob: '€'.repeat(280_000) });
    expect(refused.error?.code).toBe(-32602);
    expect(refused.error?.message).toContain('too large to run as a task');
    // The one place is still free.
    expect((await call(s, 'held')).result.resultType).toBe('task');
    release.resolve();
  });

  it('astral characters and characters escaped on the wire are counted as stored', async () => {
    const { server: s, release } = server(1);
    const refused = await call(s, 'held', { blob: '😀'.repeat(200_000), esc: '\u0001'.repeat(10) });
    expect(refused.error?.code).toBe(-32602);
    expect((await call(s, 'held')).result.resultType).toBe('task');
    release.resolve();
  });
});

describe('attack: answers that grow the record', () => {
  it('an answer too large for the record is -32602 and the task is unchanged; a short one then completes it', async () => {
    const { server: s } = server();
    // A large call the task still takes (about 600 KB), then answers that would push the record past 1 MiB.
    const { result } = await call(s, 'two_notes', { blob: 'é'.repeat(300_000) });
    expect(result.resultType).toBe('task');
    const asking = await pollUntil(s, result.taskId, (t) => t.status === 'input_required', ALICE);
    const update = (inputResponses: Record<string, unknown>) =>
      send(s, 'tasks/update', { taskId: result.taskId, inputResponses }, { who: ALICE });
    // One answer at a time, each under the limit on its own, together over it.
    const first = await update({ a: { action: 'accept', content: { note: '文'.repeat(90_000) } } });
    expect(first.error).toBeUndefined();
    const second = await update({ b: { action: 'accept', content: { note: '文'.repeat(90_000) } } });
    expect(second.error?.code).toBe(-32602);
    expect(second.error?.message).toContain('too large for the task to keep');
    const still = (await send(s, 'tasks/get', { taskId: result.taskId }, { who: ALICE })).result;
    expect(still.status).toBe('input_required');
    expect(Object.keys(still.inputRequests)).toEqual(['b']);
    expect(Object.keys(asking.inputRequests).sort()).toEqual(['a', 'b']);
    expect((await update({ b: { action: 'accept', content: { note: 'short' } } })).error).toBeUndefined();
    const done = await pollUntil(s, result.taskId, ended, ALICE);
    // Either it completes, or — its sealed state with both notes being too large — fails saying so; never stuck.
    expect(['completed', 'failed']).toContain(done.status);
    if (done.status === 'completed')
      expect(done.result.content[0].text).toBe('notes of 90000 and 5 characters');
  });
});

describe('attack: answers that grow the sealed state round after round', () => {
  it('the task ends (completed, or failed saying why); no answer is taken and then lost, no request fails -32603', async () => {
    const { server: s } = server();
    const { result } = await call(s, 'many_notes');
    let status = 'working';
    for (let round = 0; round < 8; round++) {
      const task = await pollUntil(s, result.taskId, (t) => t.status === 'input_required' || ended(t), ALICE);
      status = task.status;
      if (ended(task)) break;
      const [key] = Object.keys(task.inputRequests);
      const reply = await send(
        s,
        'tasks/update',
        {
          taskId: result.taskId,
          inputResponses: { [key as string]: { action: 'accept', content: { note: 'ü'.repeat(100_000) } } },
        },
        { who: ALICE },
      );
      expect([undefined, -32602]).toContain(reply.error?.code);
      if (reply.error) break;
    }
    const done = await pollUntil(s, result.taskId, (t) => t.status === 'input_required' || ended(t), ALICE);
    if (done.status === 'failed')
      expect(done.error.message).not.toBe('Internal error while handling tools/call');
    expect(['completed', 'failed', 'input_required']).toContain(done.status);
    void status;
  });
});
