// The SQLite sink's two ways of writing: with synchronous=NORMAL the serving thread commits each batch itself (no
// thread hop) and a worker folds the WAL into the database; with FULL the worker writes (covered in trail.test.ts).

import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { chain, unchainedText } from '../../src/audit/chain.js';
import {
  GENESIS,
  recordHash,
  SqliteAuditReader,
  SqliteAuditSink,
  verifyTrail,
} from '../../src/audit/index.js';
import { readForVerify } from '../../src/audit/internal.js';
import { columnDiffering, queryColumnsOf } from '../../src/audit/tables.js';
import { runCommand } from '../helpers/run-cli.js';
import { AUDIT_KEY, auditedServer, call, env, openTrail, tempDir } from './fixture.js';

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const undo of cleanups.splice(0).reverse()) await undo();
});

function events(n: number) {
  let head = { seq: 0, hash: GENESIS };
  return Array.from({ length: n }, (_, i) => {
    const record = {
      instance: 'sink-test',
      time: new Date(0).toISOString(),
      flowId: `flow-${i}`,
      target: 'delete_file',
      principal: null,
      outcome: 'complete',
      filler: 'x'.repeat(2000),
    } as never;
    const chained = chain(record, unchainedText(record), head);
    head = { seq: chained.record.seq, hash: chained.hash };
    return chained;
  });
}

const count = (path: string): number => {
  const db = new Database(path, { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM mrtr_audit_events').get() as { n: number }).n;
  } finally {
    db.close();
  }
};

describe('SqliteAuditSink (synchronous=normal)', () => {
  it('has the batch in the file as soon as append resolves, before any checkpoint', async () => {
    const tmp = tempDir();
    cleanups.push(tmp.remove);
    const path = join(tmp.dir, 'audit.db');
    const sink = await SqliteAuditSink.open(path, { checkpointIntervalMs: 3_600_000 });
    cleanups.push(() => sink.close());
    await sink.append(events(5), undefined);
    // Another connection (another process would do the same) reads them from the WAL.
    expect(count(path)).toBe(5);
    expect(await sink.head('sink-test')).toMatchObject({ seq: 5 });
  });

  it('folds the WAL into the database on its worker while the serving thread writes, and at close', async () => {
    const tmp = tempDir();
    cleanups.push(tmp.remove);
    const path = join(tmp.dir, 'audit.db');
    const sink = await SqliteAuditSink.open(path, { checkpointIntervalMs: 20 });
    const before = statSync(path).size;
    await sink.append(events(200), undefined);
    // The database file itself grows only when a checkpoint copies the WAL's pages into it.
    await expect.poll(() => statSync(path).size, { timeout: 10_000 }).toBeGreaterThan(before + 200 * 2000);
    await sink.close();
    expect(existsSync(`${path}-wal`)).toBe(false);
    expect(count(path)).toBe(200);
  });

  it('refuses a batch that cannot be stored, and stores none of it', async () => {
    const tmp = tempDir();
    cleanups.push(tmp.remove);
    const path = join(tmp.dir, 'audit.db');
    const sink = await SqliteAuditSink.open(path);
    cleanups.push(() => sink.close());
    const batch = events(3);
    await sink.append(batch.slice(0, 1), undefined);
    // The first event again: its (instance, seq) is taken, so the whole batch rolls back.
    (await expect(sink.append(batch, undefined))).rejects.toThrow(/UNIQUE/);
    expect(count(path)).toBe(1);
  });

  it('never keeps a process alive: a script that forgets to close its sink still exits', async () => {
    const tmp = tempDir();
    cleanups.push(tmp.remove);
    const script = `
      import { SqliteAuditSink } from ${JSON.stringify(join(process.cwd(), 'dist', 'audit', 'index.js'))};
      const sink = await SqliteAuditSink.open(${JSON.stringify(join(tmp.dir, 'forgotten.db'))});
      await sink.publishKey('k+1+AAAA');
      console.log('wrote');`;
    const out = await runCommand(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(out.stdout.trim()).toBe('wrote');
    expect(out.status).toBe(0);
  });
});

describe('verifying a trail that is still being written', () => {
  it('reads checkpoints before events, so a batch committed between the two reads never looks like truncation', async () => {
    const tmp = tempDir();
    cleanups.push(tmp.remove);
    const path = join(tmp.dir, 'audit.db');
    const trail = await openTrail(await SqliteAuditSink.open(path), { checkpointEvery: 1 });
    cleanups.push(() => trail.close());
    const core = auditedServer(trail).core;
    await core.handle(call(1, 'delete_file', { arguments: { path: '/a' } }), env);
    const reader = new SqliteAuditReader(path);
    cleanups.push(() => reader.close());
    // Between whichever read comes first and the second, the server answers another round: a new event and the
    // checkpoint that seals it land in one transaction.
    let first = true;
    const writeBetween = async <T>(read: () => Promise<T>): Promise<T> => {
      const result = await read();
      if (first) {
        first = false;
        await core.handle(call(2, 'delete_file', { arguments: { path: '/b' } }), env);
      }
      return result;
    };
    const racing = {
      checkpoints: () => writeBetween(() => reader.checkpoints()),
      events: () => writeBetween(() => reader.events()),
    };
    const report = verifyTrail({ ...(await readForVerify(racing)), verifiers: [AUDIT_KEY.verifier] });
    // Each round is two events (its intent and its outcome), each batch sealed.
    expect(report).toMatchObject({ ok: true, events: 4 });
    // The other order, as a control: the same race makes a sound trail look truncated.
    first = true;
    await core.handle(call(3, 'delete_file', { arguments: { path: '/c' } }), env);
    const events = await racing.events();
    const stored = await racing.checkpoints();
    expect(verifyTrail({ events, stored, verifiers: [AUDIT_KEY.verifier] }).ok).toBe(false);
  });
});

describe('the query columns, as both writers of the SQLite sink derive them', () => {
  // The worker thread (synchronous=full) derives the columns from the record in its own source; the serving thread
  // (normal) through eventRow. Both must write what the verifier checks, principal included.
  it.each(['normal', 'full'] as const)('synchronous=%s writes columns that verify', async (synchronous) => {
    const tmp = tempDir();
    cleanups.push(tmp.remove);
    const path = join(tmp.dir, `${synchronous}.db`);
    const sink = await SqliteAuditSink.open(path, { synchronous });
    const [a, b] = events(2).map((e, i) => {
      const record = { ...e.record, principal: i ? null : { sub: 'alice' } };
      const text = JSON.stringify(record);
      return { record, text, hash: recordHash(text) } as typeof e;
    });
    // Hashes are not chained here on purpose: only the columns are compared.
    await sink.append([a!, b!], undefined);
    await sink.close();
    const db = new Database(path, { readonly: true });
    const rows = db.prepare('SELECT * FROM mrtr_audit_events ORDER BY seq').all() as Record<
      string,
      unknown
    >[];
    db.close();
    expect(rows.map((r) => [r.principal, r.flow_id, r.target, r.outcome, r.time])).toEqual([
      ['alice', 'flow-0', 'delete_file', 'complete', new Date(0).toISOString()],
      [null, 'flow-1', 'delete_file', 'complete', new Date(0).toISOString()],
    ]);
    for (const r of rows)
      expect(columnDiffering(JSON.parse(String(r.record)), queryColumnsOf(r))).toBeUndefined();
  });
});
