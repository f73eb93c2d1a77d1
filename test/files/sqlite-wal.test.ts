// switchToWal (src/files/sqlite-wal.ts), on real SQLite files. The first test shows why it exists: with another
// connection holding the write lock, a bare `journal_mode = WAL` fails at once, busy timeout or not. The others
// drive the retry loop with an injected sleep and clock, so nothing here waits on wall time.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { switchToWal } from '../../src/files/index.js';
import { SRC, sourceFiles } from '../architecture/boundaries.js';

const dir = mkdtempSync(join(tmpdir(), 'mrtr-wal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;

/** A fresh rollback-journal file, opened twice: `holder` is mid-write (RESERVED lock), `opener` is not. */
function contendedFile(): { holder: Database.Database; opener: Database.Database } {
  const path = join(dir, `contended-${files++}.db`);
  const holder = new Database(path);
  holder.exec('CREATE TABLE t (x INTEGER)');
  const opener = new Database(path);
  opener.pragma('busy_timeout = 3000');
  opener.prepare('SELECT count(*) FROM t').get(); // the opener has read the schema, as a starting process has
  holder.exec('BEGIN IMMEDIATE');
  holder.exec('INSERT INTO t VALUES (1)');
  return { holder, opener };
}

const busyCode = (run: () => void): unknown => {
  try {
    run();
  } catch (error) {
    return (error as { code?: unknown }).code;
  }
  return 'no error';
};

describe('switchToWal', () => {
  it('is needed: a bare WAL switch fails at once with SQLITE_BUSY while another connection writes', () => {
    const { holder, opener } = contendedFile();
    const started = Date.now();
    expect(busyCode(() => opener.pragma('journal_mode = WAL'))).toBe('SQLITE_BUSY');
    // The busy timeout (3 s) was not waited out: SQLite skipped the busy handler for this lock.
    expect(Date.now() - started).toBeLessThan(3000);
    holder.exec('ROLLBACK');
    holder.close();
    opener.close();
  });

  it('tries again until the other connection lets go, then leaves the file in WAL mode', () => {
    const { holder, opener } = contendedFile();
    const waits: number[] = [];
    switchToWal(opener, {
      timeoutMs: 5000,
      now: () => 0,
      sleep: (ms) => {
        waits.push(ms);
        if (waits.length === 3) holder.exec('COMMIT'); // the other process finishes its write while we wait
      },
    });
    expect(waits).toHaveLength(3);
    // Backing off: every wait is short and positive, and later ones may be longer than the first.
    for (const ms of waits) expect(ms).toBeGreaterThan(0);
    for (const ms of waits) expect(ms).toBeLessThanOrEqual(50);
    expect(opener.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(opener.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 1 });
    holder.close();
    opener.close();
  });

  it('gives up with SQLITE_BUSY once the timeout has passed', () => {
    const { holder, opener } = contendedFile();
    let clock = 0;
    let waits = 0;
    const code = busyCode(() =>
      switchToWal(opener, {
        timeoutMs: 100,
        now: () => clock,
        sleep: (ms) => {
          waits++;
          clock += ms + 10;
        },
      }),
    );
    expect(code).toBe('SQLITE_BUSY');
    expect(waits).toBeGreaterThan(0);
    expect(clock).toBeGreaterThanOrEqual(100);
    expect(opener.pragma('journal_mode', { simple: true })).toBe('delete');
    holder.exec('ROLLBACK');
    holder.close();
    opener.close();
  });

  it('does not retry other errors', () => {
    let calls = 0;
    const failing = {
      pragma: () => {
        calls++;
        throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' });
      },
    };
    let waits = 0;
    expect(busyCode(() => switchToWal(failing, { timeoutMs: 5000, sleep: () => waits++ }))).toBe(
      'SQLITE_IOERR',
    );
    expect(calls).toBe(1);
    expect(waits).toBe(0);
  });

  it('switches an uncontended file without waiting', () => {
    const db = new Database(join(dir, 'alone.db'));
    let waits = 0;
    switchToWal(db, { timeoutMs: 5000, sleep: () => waits++ });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(waits).toBe(0);
    db.close();
  });

  it('is how every SQLite file of ours and of the examples goes to WAL: no bare pragma left', () => {
    const files = [...sourceFiles(SRC), ...sourceFiles(resolve(SRC, '../examples'))];
    const bare = files
      .filter((f) => f.path !== 'files/sqlite-wal.ts' && /journal_mode\s*=\s*WAL/i.test(f.text))
      // The audit worker runs plain CommonJS and cannot import it: it must carry the same retry on SQLITE_BUSY.
      .filter((f) => !(f.path === 'audit/sqlite-sink.ts' && /SQLITE_BUSY[\s\S]{0,200}deadline/.test(f.text)))
      .map((f) => f.path);
    expect(bare).toEqual([]);
    // The check reads real files: the ones that switch through switchToWal are among them.
    const callers = files.filter((f) => f.text.includes('switchToWal(')).map((f) => f.path);
    expect(callers).toEqual(
      expect.arrayContaining(['stores/sqlite.ts', 'audit/sqlite-sink.ts', '../examples/workflows/db.ts']),
    );
  });
});
