// Attack: a round that pauses for a task with more resolved than a requestState holds (a step with a large result
// before ctx.startTask()). As docs/flows.md says of any journal past the cap, the call ends with -32602 naming the
// limit; it must leave no task behind and take no place in the count.

import { describe, expect, it } from 'vitest';
import { McpServer, text } from '../../src/server/index.js';
import { generateKeySpec } from '../../src/state/index.js';
import { ALICE, ended, type Loose, pollUntil, send } from '../server/tasks-helpers.js';

function server() {
  const effects: string[] = [];
  const s = new McpServer({
    name: 'big-journal',
    version: '1',
    stateKeys: generateKeySpec(),
    logger: { info() {}, warn() {}, error() {} },
    tasks: { maxPerPrincipal: 1 },
  })
    .tool({ name: 'quick', description: 'x', task: 'optional' }, () => text('quick'))
    .tool(
      { name: 'fetch_then_task', description: 'x', task: { support: 'optional', start: 'handler' } },
      async (_a, ctx) => {
        const page = await ctx.ask.step('fetch', () => {
          effects.push('fetched');
          return 'x'.repeat(20_000);
        });
        ctx.startTask();
        return text(`page of ${page.length}`);
      },
    );
  return { server: s, effects };
}

describe('attack: a paused round whose journal is larger than a requestState', () => {
  it('ends the call with -32602 naming the limit, the step run once, no task made or counted', async () => {
    const { server: s, effects } = server();
    const reply: Loose = await send(
      s,
      'tools/call',
      { name: 'fetch_then_task', arguments: {} },
      { who: ALICE },
    );
    expect(reply.error?.code).toBe(-32602);
    expect(reply.error?.message).toContain('over maxTokenBytes 8192');
    expect(effects).toEqual(['fetched']);
    // The one place (maxPerPrincipal: 1) is still free.
    const next: Loose = await send(s, 'tools/call', { name: 'quick', arguments: {} }, { who: ALICE });
    expect(next.result.resultType).toBe('task');
    await pollUntil(s, next.result.taskId, ended, ALICE);
  });
});
