// An attack on the 2025 stdio upstream's process per call: the gateway (or a program embedding it) closes the
// upstream while calls are still running or waiting for a place. Every process those calls started must end with it;
// none may be left running, parked among the "idle" processes of an upstream that is gone.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Upstream } from '../../src/gateway/index.js';

const SERVER = join(import.meta.dirname, 'fixtures/asking-stdio-server.mjs');
const noEgress = { perCaller: false, tokenFor: async () => undefined };

let dir: string | undefined;
const started: number[] = [];
afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('a 2025 stdio upstream closed while its calls run', () => {
  it('leaves no process running: not one a running call started, nor one a waiting call starts after', async () => {
    dir = mkdtempSync(join(tmpdir(), 'mrtr-stdio-close-'));
    const startLog = join(dir, 'starts');
    const up = new Upstream(
      { name: 'asking', command: [process.execPath, SERVER], env: { START_LOG: startLog } },
      { egress: noEgress, log: () => {}, timeoutMs: 20_000, maxCallers: 10 },
    );
    const alice = { subject: 'alice' };
    await up.round(alice, { name: 'echo', arguments: { tag: 'warm' } }, { holder: 'alice' });
    // 12 calls at once, 8 in her share: 4 wait for a place. The upstream is closed while they run.
    const calls = Array.from({ length: 12 }, (_, i) =>
      up.round(alice, { name: 'echo', arguments: { tag: `c${i}` } }, { holder: 'alice' }),
    );
    const settling = Promise.allSettled(calls);
    await up.close();
    const settled = await settling;
    const pids = readFileSync(startLog, 'utf8').split('\n').filter(Boolean).map(Number);
    started.push(...pids);
    // close() has waited for each process it ended; a call it cut short says so, and a call refused starts none.
    expect(pids.filter(alive)).toEqual([]);
    for (const s of settled)
      if (s.status === 'rejected') expect(String(s.reason)).toMatch(/upstream asking|closed|exited/);
    // And a call after close() starts no process either.
    await expect(
      up.round(alice, { name: 'echo', arguments: { tag: 'late' } }, { holder: 'alice' }),
    ).rejects.toThrow('upstream asking is closed');
    expect(readFileSync(startLog, 'utf8').split('\n').filter(Boolean)).toHaveLength(pids.length);
  }, 30_000);
});
