// The contract's atomicity holds across processes, not only within one: several real processes race on the same
// SQLite file and the same Redis. Each key is won by exactly one process, and no increment is lost.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/stores/index.js';
import { TestRedis } from '../helpers/redis-server.js';

const RACE = join(import.meta.dirname, 'fixtures', 'race.mjs');
const PROCESSES = 4;
const KEYS = 200;

let redis: TestRedis;
const dir = mkdtempSync(join(tmpdir(), 'mrtr-race-'));
beforeAll(async () => {
  redis = await TestRedis.start();
});
afterAll(async () => {
  await redis.stop();
  rmSync(dir, { recursive: true, force: true });
});

function contender(spec: string, prefix: string) {
  const child = spawn(process.execPath, [RACE, spec, prefix, String(KEYS)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk));
  const done = new Promise<{ won: number[] }>((resolve, reject) =>
    child.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`race exited ${code}`)),
    ),
  );
  return { child, done };
}

async function race(spec: string) {
  const prefix = `race-${Date.now()}`;
  const contenders = Array.from({ length: PROCESSES }, () => contender(spec, prefix));
  for (const { child } of contenders) child.stdin.end('go\n');
  const results = await Promise.all(contenders.map((c) => c.done));
  const store = await openStore(spec);
  const counter = (await store.get(`${prefix}:counter`))?.version;
  await store.close();
  return { results, counter };
}

describe.each([
  ['SQLite', () => `sqlite:${join(dir, 'race.db')}`],
  ['Redis', () => redis.url],
])('%s across %s processes', (_name, spec) => {
  it(`${PROCESSES} processes race for ${KEYS} keys: each key has exactly one winner, no increment is lost`, async () => {
    const { results, counter } = await race(spec());
    const wins = results.flatMap((r) => r.won).sort((a, b) => a - b);
    expect(wins).toEqual(Array.from({ length: KEYS }, (_, i) => i));
    expect(counter).toBe(PROCESSES * KEYS);
  });
});
