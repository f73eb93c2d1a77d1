// The embedded store keeps the shared-store contract in a real SQLite file, survives reopening, and sweeps what
// expired.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, SqliteStore } from '../../src/stores/index.js';
import { runCommand } from '../helpers/run-cli.js';
import { expectClosedStoreRefuses, storeContract } from './contract.js';

const dir = mkdtempSync(join(tmpdir(), 'mrtr-sqlite-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('SqliteStore', () => {
  storeContract(() => {
    let now = 1_000_000;
    const store = new SqliteStore(join(dir, 'contract.db'), { now: () => now });
    return { store, advance: (ms) => (now += ms) };
  });

  it('keeps entries in the file: another connection (another process) sees them', async () => {
    const path = join(dir, 'shared.db');
    const a = new SqliteStore(path);
    const b = new SqliteStore(path);
    await a.create('k', 'from-a', 60_000);
    expect(await b.get('k')).toEqual({ value: 'from-a', version: 1 });
    expect(await b.replace('k', 1, 'from-b', 60_000)).toBe(true);
    expect(await a.replace('k', 1, 'late-a', 60_000)).toBe(false);
    await a.close();
    await b.close();
    const reopened = new SqliteStore(path);
    expect((await reopened.get('k'))?.value).toBe('from-b');
    await reopened.close();
  });

  it('uses WAL, so readers in other processes never block the writer', async () => {
    const path = join(dir, 'wal.db');
    const store = new SqliteStore(path);
    const db = new Database(path, { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
    await store.close();
  });

  it('sweeps expired rows as writes go by: the table holds what is alive, not every key ever written', async () => {
    const path = join(dir, 'sweep.db');
    let now = 0;
    const store = new SqliteStore(path, { now: () => now });
    for (let i = 0; i < 3000; i++) {
      await store.create(`k${i}`, 'v', 10);
      now += 1;
    }
    await store.close();
    const db = new Database(path, { readonly: true });
    const rows = (db.prepare('SELECT count(*) AS n FROM mrtr_store').get() as { n: number }).n;
    db.close();
    expect(rows).toBeLessThan(600);
  });

  it('openStore reads the sqlite:PATH form and names a missing path', async () => {
    const store = await openStore(`sqlite:${join(dir, 'nested', 'opened.db')}`);
    expect(store.description).toBe(`sqlite:${join(dir, 'nested', 'opened.db')}`);
    await store.close();
    (await expect(openStore('sqlite:'))).rejects.toThrow(/names no file: expected sqlite:PATH/);
    (await expect(openStore('mysql://x'))).rejects.toThrow(
      /unknown store "mysql:\/\/x": expected memory \| sqlite:PATH \| redis:\/\/HOST:PORT\/DB/,
    );
  });

  it('refuses every call once closed', async () => {
    await expectClosedStoreRefuses(new SqliteStore(join(dir, 'closed.db')));
  });
});

describe('SqliteStore checkpoints', () => {
  it('folds the WAL into the database file at close (the checkpointer thread does the last checkpoint)', async () => {
    const path = join(dir, 'checkpoint.db');
    const store = new SqliteStore(path, { checkpointIntervalMs: 3_600_000 });
    for (let i = 0; i < 100; i++) await store.create(`k${i}`, 'v'.repeat(100), 60_000);
    await store.close();
    expect(existsSync(`${path}-wal`)).toBe(false);
    const db = new Database(path, { readonly: true });
    expect((db.prepare('SELECT count(*) AS n FROM mrtr_store').get() as { n: number }).n).toBe(100);
    db.close();
  });

  it('folds the WAL into the database on the checkpointer thread while the store is open', async () => {
    const path = join(dir, 'folding.db');
    const store = new SqliteStore(path, { checkpointIntervalMs: 20 });
    const before = statSync(path).size;
    await Promise.all(Array.from({ length: 200 }, (_, i) => store.create(`k${i}`, 'v'.repeat(2000), 60_000)));
    // The database file grows only when a checkpoint copies the WAL's pages into it.
    await expect.poll(() => statSync(path).size, { timeout: 10_000 }).toBeGreaterThan(before + 200 * 2000);
    await store.close();
  });

  it('never keeps a process alive: a script that forgets to close its store still exits', async () => {
    const script = `
      import { SqliteStore } from ${JSON.stringify(join(process.cwd(), 'dist', 'stores', 'index.js'))};
      const store = new SqliteStore(${JSON.stringify(join(dir, 'forgotten.db'))});
      await store.create('k', 'v', 60000);
      console.log('wrote');`;
    const out = await runCommand(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(out.stdout.trim()).toBe('wrote');
    expect(out.status).toBe(0);
  });
});

describe('SqliteStore durability', () => {
  it('a write whose promise resolved survives kill -9 of the process that made it', async () => {
    const path = join(dir, 'killed.db');
    const script = `
      import { SqliteStore } from ${JSON.stringify(join(process.cwd(), 'dist', 'stores', 'index.js'))};
      const store = new SqliteStore(${JSON.stringify(path)}, { checkpointIntervalMs: 3600000 });
      for (let i = 0; i < 50; i++) await store.create('k' + i, 'v' + i, 600000);
      console.log('committed');
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve) =>
      child.stdout.on('data', (c: Buffer) => c.toString().includes('committed') && resolve()),
    );
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    const store = new SqliteStore(path);
    expect(await store.get('k49')).toEqual({ value: 'v49', version: 1 });
    expect(await store.get('k0')).toEqual({ value: 'v0', version: 1 });
    await store.close();
  });
});
