// Attack: the server answering "opened" on the client's behalf. Only a second factor's link, opened once, is waited
// out inside a task; any other link asked again goes back to the client, who must see it.

import { describe, expect, it } from 'vitest';
import { McpServer, text } from '../../src/server/index.js';
import { generateKeySpec } from '../../src/state/index.js';
import { ALICE, ended, type Loose, pollUntil, send } from '../server/tasks-helpers.js';

const LINK = 'https://auth.test/link/1';

function server() {
  const seen: string[] = [];
  const s = new McpServer({
    name: 'links',
    version: '1',
    stateKeys: generateKeySpec(),
    logger: { info() {}, warn() {}, error() {} },
  })
    // Asks the same plain link in two questions: the second must reach the client, not be answered for it.
    .tool({ name: 'link_twice', description: 'x', task: 'optional' }, async (_a, ctx) => {
      await ctx.ask.url('Open the page', LINK, { key: 'first' });
      seen.push('first opened');
      await ctx.ask.url('Open the page again', LINK, { key: 'again' });
      seen.push('again opened');
      return text('both opened');
    })
    // A plain link, then a second factor at the same address: the second factor was never shown to the client.
    .tool({ name: 'link_then_second_factor', description: 'x', task: 'optional' }, async (_a, ctx) => {
      await ctx.ask.url('Read the page', LINK, { key: 'page' });
      await ctx.ask.url('Confirm with your second factor', LINK, {
        key: 'sf',
        humanRequired: 'second_factor',
      });
      seen.push('second factor answered');
      return text('confirmed');
    })
    // A consent link (another kind of person-at-a-page) asked again is not a second factor either.
    .tool({ name: 'consent_twice', description: 'x', task: 'optional' }, async (_a, ctx) => {
      await ctx.ask.url('Consent', LINK, { key: 'c1', humanRequired: 'consent' } as never);
      await ctx.ask.url('Consent again', LINK, { key: 'c2', humanRequired: 'consent' } as never);
      seen.push('consented twice');
      return text('consented');
    });
  return { server: s, seen };
}

async function answer(s: McpServer, taskId: string, key: string): Promise<void> {
  const reply: Loose = await send(
    s,
    'tasks/update',
    { taskId, inputResponses: { [key]: { action: 'accept' } } },
    { who: ALICE },
  );
  expect(reply.error).toBeUndefined();
}

describe('attack: a link the client opened once, asked again', () => {
  for (const tool of ['link_twice', 'consent_twice']) {
    it(`${tool}: the second question goes back to the client (input_required), never answered on its behalf`, async () => {
      const { server: s, seen } = server();
      const { result } = (await send(
        s,
        'tools/call',
        { name: tool, arguments: {} },
        { who: ALICE },
      )) as Loose;
      const first = await pollUntil(
        s,
        result.taskId,
        (t) => t.status === 'input_required' || ended(t),
        ALICE,
      );
      const [firstKey] = Object.keys(first.inputRequests);
      await answer(s, result.taskId, firstKey as string);
      const second = await pollUntil(
        s,
        result.taskId,
        (t) => t.status === 'input_required' || ended(t),
        ALICE,
      );
      expect(second.status).toBe('input_required');
      const [secondKey] = Object.keys(second.inputRequests);
      expect(second.inputRequests[secondKey as string].params.url).toBe(LINK);
      expect(seen).not.toContain('again opened');
      expect(seen).not.toContain('consented twice');
      await answer(s, result.taskId, secondKey as string);
      expect((await pollUntil(s, result.taskId, ended, ALICE)).status).toBe('completed');
    });
  }
});

describe('attack: a second factor at an address the client opened for another question', () => {
  it('is shown to the client, not answered "opened" on its behalf', async () => {
    const { server: s, seen } = server();
    const { result } = (await send(
      s,
      'tools/call',
      { name: 'link_then_second_factor', arguments: {} },
      { who: ALICE },
    )) as Loose;
    await pollUntil(s, result.taskId, (t) => t.status === 'input_required' || ended(t), ALICE);
    await answer(s, result.taskId, 'page');
    const next = await pollUntil(
      s,
      result.taskId,
      (t) => t.status === 'input_required' || ended(t) || seen.length > 0,
      ALICE,
    );
    expect(seen).toEqual([]);
    expect(next.status).toBe('input_required');
    expect(Object.keys(next.inputRequests)).toEqual(['sf']);
  });
});
