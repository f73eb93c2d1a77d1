// Attack: the cost of being refused. A principal at its limit of unfinished tasks keeps calling: the pre-check runs
// before any guard (rate or refusal limits), so what each refused call costs the shared store is what the attacker
// gets for free. It must not grow with the limit.

import { describe, expect, it } from 'vitest';
import { McpServer, text } from '../../src/server/index.js';
import { generateKeySpec } from '../../src/state/index.js';
import { MemoryStore } from '../../src/stores/index.js';
import { deferred } from '../helpers/signals.js';
import { ALICE, type Loose, send } from '../server/tasks-helpers.js';

class CountingStore extends MemoryStore {
  gets = 0;
  override get(key: string) {
    this.gets += 1;
    return super.get(key);
  }
}

function bounded(limit: number) {
  const store = new CountingStore();
  const release = deferred();
  const server = new McpServer({
    name: 'bounded',
    version: '1',
    stateKeys: generateKeySpec(),
    logger: { info() {}, warn() {}, error() {} },
    tasks: { maxPerPrincipal: limit, store },
  })
    .tool({ name: 'held', description: 'waits for the test', task: 'required' }, async () => {
      await release.promise;
      return text('released');
    })
    .tool({ name: 'needs_approval', description: 'waits for a person elsewhere' }, async (_a, ctx) => {
      await ctx.ask.url('Ask your approver', 'https://approvals.test/1', {
        key: 'approval',
        humanRequired: 'approval',
      });
      return text('approved');
    });
  return { server, release, store };
}

async function fill(server: McpServer, limit: number): Promise<void> {
  for (let i = 0; i < limit; i++) {
    const reply: Loose = await send(server, 'tools/call', { name: 'held', arguments: {} }, { who: ALICE });
    expect(reply.result.resultType).toBe('task');
  }
}

describe('attack: a principal at its limit hammering tools/call', () => {
  it('a refused call reads the store a bounded number of times, not once per listed task', async () => {
    const limit = 200;
    const { server, release, store } = bounded(limit);
    await fill(server, limit);
    // The first refusal may verify the listed tasks (one of them may have ended without being uncounted) ...
    expect(
      (await send(server, 'tools/call', { name: 'held', arguments: {} }, { who: ALICE })).error?.code,
    ).toBe(-32600);
    // ... the ones after it, with nothing changed, must not do so again.
    store.gets = 0;
    for (let i = 0; i < 10; i++) {
      const refused: Loose = await send(
        server,
        'tools/call',
        { name: 'held', arguments: {} },
        { who: ALICE },
      );
      expect(refused.error?.code).toBe(-32600);
    }
    expect(store.gets).toBeLessThanOrEqual(10 * 3);
    release.resolve();
  });

  it('so does a wait for a person that falls back to plain rounds at the limit', async () => {
    const limit = 200;
    const { server, release, store } = bounded(limit);
    await fill(server, limit);
    await send(server, 'tools/call', { name: 'needs_approval', arguments: {} }, { who: ALICE });
    store.gets = 0;
    for (let i = 0; i < 10; i++) {
      const plain: Loose = await send(
        server,
        'tools/call',
        { name: 'needs_approval', arguments: {} },
        { who: ALICE },
      );
      expect(plain.result.resultType).toBe('input_required');
    }
    expect(store.gets).toBeLessThanOrEqual(10 * 4);
    release.resolve();
  });

  it('a task that ends is still seen at once: its place is free for the next call', async () => {
    const limit = 3;
    const { server, release } = bounded(limit);
    const first: Loose = await send(server, 'tools/call', { name: 'held', arguments: {} }, { who: ALICE });
    await fill(server, limit - 1);
    for (let i = 0; i < 3; i++)
      expect(
        (await send(server, 'tools/call', { name: 'held', arguments: {} }, { who: ALICE })).error?.code,
      ).toBe(-32600);
    await send(server, 'tasks/cancel', { taskId: first.result.taskId }, { who: ALICE });
    const next: Loose = await send(server, 'tools/call', { name: 'held', arguments: {} }, { who: ALICE });
    expect(next.result?.resultType).toBe('task');
    release.resolve();
  });
});
