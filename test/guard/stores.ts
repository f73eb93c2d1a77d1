// The three stores every replay rule is checked on, each opened fresh for a test file: memory, a real SQLite file,
// a real Redis (started once per file on a free port).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { MemoryStore, RedisStore, type SharedStore, SqliteStore } from '../../src/stores/index.js';
import { TestRedis } from '../helpers/redis-server.js';

let redis: Promise<TestRedis> | undefined;
let dir: string | undefined;
const opened: SharedStore[] = [];

afterAll(async () => {
  await Promise.all(opened.map((s) => s.close().catch(() => undefined)));
  if (redis) await (await redis).stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The Redis of this test file, started on first use. */
export function testRedis(): Promise<TestRedis> {
  redis ??= TestRedis.start();
  return redis;
}

export function tempDir(): string {
  dir ??= mkdtempSync(join(tmpdir(), 'mrtr-guard-'));
  return dir;
}

export const STORES: ReadonlyArray<[string, () => Promise<SharedStore>]> = [
  ['memory', async () => track(new MemoryStore())],
  ['sqlite', async () => track(new SqliteStore(join(tempDir(), `replay-${opened.length}.db`)))],
  ['redis', async () => track(await RedisStore.connect((await testRedis()).url))],
];

function track<T extends SharedStore>(store: T): T {
  opened.push(store);
  return store;
}
