// Attack: the per-principal limit of unfinished tasks (tasks.maxPerPrincipal) under concurrency. A principal sends a
// burst of task-creating calls at once (Promise.all); however they interleave, no more than the limit may exist.

import { describe, expect, it } from 'vitest';
import { McpServer, text } from '../../src/server/index.js';
import { generateKeySpec } from '../../src/state/index.js';
import { MemoryStore } from '../../src/stores/index.js';
import { deferred } from '../helpers/signals.js';
import { ALICE, type Loose, send } from '../server/tasks-helpers.js';

function bounded(limit: number, store = new MemoryStore()) {
  const release = deferred();
  const server = new McpServer({
    name: 'bounded',
    version: '1',
    stateKeys: generateKeySpec(),
    logger: { info() {}, warn() {}, error() {} },
    tasks: { maxPerPrincipal: limit, store },
  }).tool({ name: 'held', description: 'waits for the test', task: 'required' }, async () => {
    await release.promise;
    return text('released');
  });
  return { server, release, store };
}

/** How many of ALICE's tasks are still unfinished, asked of the store itself (not of the count under attack). */
async function unfinished(server: McpServer, ids: string[]): Promise<number> {
  let open = 0;
  for (const taskId of ids) {
    const task = (await send(server, 'tasks/get', { taskId }, { who: ALICE })).result;
    if (task && !['completed', 'failed', 'cancelled'].includes(task.status)) open += 1;
  }
  return open;
}

describe('attack: a burst of concurrent task creations past tasks.maxPerPrincipal', () => {
  it('a burst of 30 at once makes at most the limit, the rest are 429', async () => {
    const { server, release } = bounded(3);
    const replies: Loose[] = await Promise.all(
      Array.from({ length: 30 }, () =>
        send(server, 'tools/call', { name: 'held', arguments: {} }, { who: ALICE }),
      ),
    );
    const ids = replies.filter((r) => r.result?.resultType === 'task').map((r) => r.result.taskId as string);
    const refused = replies.filter((r) => r.error?.code === -32600);
    expect(ids.length + refused.length).toBe(30);
    expect(ids.length).toBeLessThanOrEqual(3);
    expect(await unfinished(server, ids)).toBeLessThanOrEqual(3);
    release.resolve();
  });

  it('bursts repeated after cancelling never leave more than the limit unfinished', async () => {
    const { server, release } = bounded(2);
    const all: string[] = [];
    for (let burst = 0; burst < 5; burst++) {
      const replies: Loose[] = await Promise.all(
        Array.from({ length: 10 }, () =>
          send(server, 'tools/call', { name: 'held', arguments: {} }, { who: ALICE }),
        ),
      );
      all.push(
        ...replies.filter((r) => r.result?.resultType === 'task').map((r) => r.result.taskId as string),
      );
      expect(await unfinished(server, all)).toBeLessThanOrEqual(2);
    }
    release.resolve();
  });
});

/**
 * A store whose writes of new task records wait for the test (as a remote store's do, for a network round trip):
 * the moment between a task being counted and its record existing, held open by an explicit signal.
 */
class SlowTaskRecords extends MemoryStore {
  readonly gate = deferred();
  readonly held: Array<() => void> = [];
  readonly taskKeys: string[] = [];
  private waiters: Array<{ n: number; resolve: () => void }> = [];
  override async create(key: string, value: string, ttlMs: number): Promise<boolean> {
    if (key.startsWith('mrtr:task:')) this.taskKeys.push(key);
    if (key.startsWith('mrtr:task:') && !this.gate.settled) {
      const arrived = new Promise<void>((resolve) => this.held.push(resolve));
      for (const w of this.waiters.filter((w) => this.held.length >= w.n)) w.resolve();
      await Promise.race([arrived, this.gate.promise]);
    }
    return super.create(key, value, ttlMs);
  }
  /** Resolves once `n` task records are waiting to be written. */
  holding(n: number): Promise<void> {
    if (this.held.length >= n) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ n, resolve }));
  }
}

describe('attack: a task counted but not yet stored is not dropped from the count', () => {
  it('calls made while the first tasks are still being written make no more than the limit', async () => {
    const store = new SlowTaskRecords();
    const slow = bounded(2, store);
    const first = send(slow.server, 'tools/call', { name: 'held', arguments: {} }, { who: ALICE });
    const second = send(slow.server, 'tools/call', { name: 'held', arguments: {} }, { who: ALICE });
    await store.holding(2);
    // Two tasks are on their way to the store. A third call now (its pre-check re-reads the listed tasks, as at
    // the limit) must not take the two for ended ones.
    const third = send(slow.server, 'tools/call', { name: 'held', arguments: {} }, { who: ALICE });
    await Promise.race([third, store.holding(3)]);
    store.gate.resolve();
    const replies = [await first, await second, await third];
    expect(replies.filter((r) => r.result?.resultType === 'task')).toHaveLength(2);
    expect(replies.filter((r) => r.error?.code === -32600)).toHaveLength(1);
    // And the one refused left no record behind: ALICE can still make nothing more.
    const fourth = await send(slow.server, 'tools/call', { name: 'held', arguments: {} }, { who: ALICE });
    expect(fourth.error?.code).toBe(-32600);
    // The refused task's record was taken back: only the two tasks made are in the store.
    const live = await Promise.all(store.taskKeys.map((key) => store.get(key)));
    expect(live.filter(Boolean)).toHaveLength(2);
    slow.release.resolve();
  });
});
