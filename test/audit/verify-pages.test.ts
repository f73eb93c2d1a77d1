// Verifying a page at a time: every reader (SQLite, JSON lines, a bundle) gives its events in pages that add up to
// the whole trail in order, across writers; the verdict matches the one over the trail in memory, edits included;
// and the verifier never reads a pageable trail whole. (PostgreSQL's pages: postgres.test.ts.)
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AuditReader,
  type AuditSink,
  BundleReader,
  exportBundle,
  JsonlAuditReader,
  JsonlAuditSink,
  SqliteAuditReader,
  SqliteAuditSink,
  verifyReader,
  verifyTrail,
} from '../../src/audit/index.js';
import { AUDIT_KEY, auditedServer, call, env, expectPagesAgree, openTrail, tempDir } from './fixture.js';

const tmp = tempDir();
afterAll(() => tmp.remove());

/** Two writers on one sink, seven and five rounds (each an intent and an outcome), checkpoints every 4 events. */
async function writeTrail(open: () => Promise<AuditSink>): Promise<void> {
  for (const [instance, rounds] of [
    ['w-b', 7],
    ['w-a', 5],
  ] as const) {
    const trail = await openTrail(await open(), { instance, checkpointEvery: 4 });
    const core = auditedServer(trail).core;
    for (let i = 0; i < rounds; i++)
      await core.handle(call(i, 'delete_file', { arguments: { path: `/${i}` } }), env);
    await trail.close();
  }
}

const sqlitePath = join(tmp.dir, 'audit.db');
const jsonlPath = join(tmp.dir, 'audit.jsonl');
beforeAll(async () => {
  await writeTrail(() => SqliteAuditSink.open(sqlitePath));
  await writeTrail(() => JsonlAuditSink.open(jsonlPath));
});

describe('reading by pages', () => {
  for (const pageSize of [1, 5, 14, 24, 1000]) {
    it(`SQLite, JSON lines and a bundle agree with the whole trail, ${pageSize} at a time`, async () => {
      const sqlite = new SqliteAuditReader(sqlitePath);
      const report = await expectPagesAgree(sqlite, pageSize);
      expect(report.ok).toBe(true);
      expect(report.chains.map((c) => [c.instance, c.events, c.sealedSeq])).toEqual([
        ['w-a', 10, 10],
        ['w-b', 14, 14],
      ]);
      const bundle = BundleReader.parse(JSON.stringify(await exportBundle(sqlite)), 'test');
      await sqlite.close();
      expect((await expectPagesAgree(bundle, pageSize)).ok).toBe(true);
      const jsonl = await JsonlAuditReader.open(jsonlPath);
      expect((await expectPagesAgree(jsonl, pageSize)).events).toBe(24);
    });
  }

  it('finds an edit in the second page of a writer, named as the whole-trail verifier names it', async () => {
    const path = join(tmp.dir, 'edited.db');
    await writeTrail(() => SqliteAuditSink.open(path));
    const db = new Database(path);
    db.prepare(
      "UPDATE mrtr_audit_events SET record = replace(record, '/3', '/9') WHERE instance = 'w-b' AND seq = 7",
    ).run();
    db.close();
    const reader = new SqliteAuditReader(path);
    const report = await expectPagesAgree(reader, 5);
    await reader.close();
    expect(report.firstBad).toEqual({
      instance: 'w-b',
      seq: 7,
      problem: 'its hash does not match its content (edited)',
    });
  });

  it('finds a forged second event under a key where a page ends (the table rebuilt without its unique key)', async () => {
    const path = join(tmp.dir, 'duplicated.db');
    await writeTrail(() => SqliteAuditSink.open(path));
    const db = new Database(path);
    // Someone with write access rebuilds the table without its primary key and adds a second w-a #5 with other
    // arguments: `mrtr audit show` would list it beside the real one.
    db.exec(`
      CREATE TABLE copy AS SELECT * FROM mrtr_audit_events;
      DROP TABLE mrtr_audit_events;
      ALTER TABLE copy RENAME TO mrtr_audit_events;
      INSERT INTO mrtr_audit_events
        SELECT instance, seq, hash, replace(record, '"/2"', '"/etc/passwd"'), time, flow_id, target, principal, outcome
        FROM mrtr_audit_events WHERE instance = 'w-a' AND seq = 5;
    `);
    db.close();
    const reader = new SqliteAuditReader(path);
    // w-a's events come first: with five to a page, the first page ends at w-a #5 and the forged copy starts the next.
    for (const pageSize of [5, 4, 1000]) {
      const report = await expectPagesAgree(reader, pageSize);
      expect(report.ok, `page size ${pageSize}`).toBe(false);
      expect(report.firstBad).toMatchObject({ instance: 'w-a', seq: 5 });
    }
    await reader.close();
  });

  it('names a row whose key does not read back as stored, and reads no further (never a page twice)', async () => {
    const cases: Array<[string, string, string]> = [
      // More such rows than a page holds: read back with U+FFFD, the key would start the next page at the first again.
      ["CAST(X'FF' AS TEXT)", 'i', 'its instance is not UTF-8 text (edited)'],
      ["'w-c'", "'x' || i", 'its seq is stored as text, not a whole number (edited)'],
      ["'w-c'", 'i + 0.5', 'its seq is stored as real, not a whole number (edited)'],
      [
        "'w-c'",
        '9007199254740993 + i',
        'its seq is stored as an integer beyond 2^53, not a whole number (edited)',
      ],
      ["X'772D63'", 'i', 'its instance is stored as blob, not text (edited)'],
    ];
    for (const [n, [instance, seq, problem]] of cases.entries()) {
      const path = join(tmp.dir, `odd-key-${n}.db`);
      await writeTrail(() => SqliteAuditSink.open(path));
      const db = new Database(path);
      db.exec(`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 7)
        INSERT INTO mrtr_audit_events (instance, seq, hash, record, time, outcome)
        SELECT ${instance}, ${seq}, 'h', 'junk', 't', 'complete' FROM s`);
      db.close();
      const reader = new SqliteAuditReader(path);
      for (const pageSize of [2, 5, 1000]) {
        const report = await verifyReader(reader, { verifiers: [AUDIT_KEY.verifier], pageSize });
        expect(report.ok, `${instance} ${seq}`).toBe(false);
        expect(report.firstBad?.problem).toBe(problem);
        // Read as a whole, the same row is named the same way.
        expect(
          verifyTrail({ events: await reader.events(), stored: [], verifiers: [AUDIT_KEY.verifier] }).firstBad
            ?.problem,
        ).toBe(problem);
      }
      await reader.close();
    }
  });

  it('refuses a trail whose key index misses a row, or whose events are a view, instead of saying intact', async () => {
    // A row added while the primary key's index was taken out of the schema: in the table, unknown to the index.
    const unindexed = join(tmp.dir, 'unindexed.db');
    await writeTrail(() => SqliteAuditSink.open(unindexed));
    let db = new Database(unindexed);
    const named = (name: string, column: 'sql' | 'rootpage') =>
      db.prepare(`SELECT ${column} FROM sqlite_schema WHERE name = ?`).pluck().get(name);
    const schema = named('mrtr_audit_events', 'sql') as string;
    const indexRoot = named('sqlite_autoindex_mrtr_audit_events_1', 'rootpage') as number;
    db.unsafeMode(true);
    db.pragma('writable_schema = ON');
    db.prepare("UPDATE sqlite_schema SET sql = ? WHERE name = 'mrtr_audit_events'").run(
      schema.replace(/,\s*PRIMARY KEY \(instance, seq\)/, ''),
    );
    db.prepare("DELETE FROM sqlite_schema WHERE name = 'sqlite_autoindex_mrtr_audit_events_1'").run();
    db.close();
    db = new Database(unindexed);
    db.exec(
      "INSERT INTO mrtr_audit_events SELECT * FROM mrtr_audit_events WHERE instance = 'w-b' AND seq = 3",
    );
    db.unsafeMode(true);
    db.pragma('writable_schema = ON');
    db.prepare("UPDATE sqlite_schema SET sql = ? WHERE name = 'mrtr_audit_events'").run(schema);
    db.prepare(
      "INSERT INTO sqlite_schema VALUES ('index', 'sqlite_autoindex_mrtr_audit_events_1', 'mrtr_audit_events', ?, NULL)",
    ).run(indexRoot);
    db.close();
    // The index is back as it was before the insert: reading by the key does not find every row the table holds.
    let reader = new SqliteAuditReader(unindexed);
    await expect(verifyReader(reader, { verifiers: [AUDIT_KEY.verifier] })).rejects.toThrow(
      /the events table holds \d+ rows, but \d+ are found by its key/,
    );
    await reader.close();

    const view = join(tmp.dir, 'view.db');
    await writeTrail(() => SqliteAuditSink.open(view));
    db = new Database(view);
    db.exec(
      'ALTER TABLE mrtr_audit_events RENAME TO real_events; CREATE VIEW mrtr_audit_events AS SELECT * FROM real_events',
    );
    db.close();
    reader = new SqliteAuditReader(view);
    await expect(verifyReader(reader, { verifiers: [AUDIT_KEY.verifier] })).rejects.toThrow(
      `sqlite:${view}: mrtr_audit_events is a view, not a table: the file was edited`,
    );
    await reader.close();
  });

  it('reads every page in one snapshot: a writer between two pages is neither read nor counted', async () => {
    const path = join(tmp.dir, 'live.db');
    await writeTrail(() => SqliteAuditSink.open(path));
    const reader = new SqliteAuditReader(path);
    const writer = new Database(path);
    const pages = reader.eventPages(5)[Symbol.asyncIterator]();
    expect((await pages.next()).value).toHaveLength(5);
    // Another writer commits an event whose key sorts before every page still to come.
    writer.exec(
      "INSERT INTO mrtr_audit_events SELECT 'a-new', seq, hash, record, time, flow_id, target, principal, outcome FROM mrtr_audit_events WHERE instance = 'w-a' AND seq = 1",
    );
    writer.close();
    let read = 5;
    for (let page = await pages.next(); !page.done; page = await pages.next()) read += page.value.length;
    expect(read).toBe(24);
    // The next reading sees it.
    expect((await reader.events()).length).toBe(25);
    await reader.close();
  });

  it('stops at the first of many rows under one key, instead of reading them all again page after page', async () => {
    const path = join(tmp.dir, 'many.db');
    await writeTrail(() => SqliteAuditSink.open(path));
    const db = new Database(path);
    db.exec(`CREATE TABLE copy AS SELECT * FROM mrtr_audit_events; DROP TABLE mrtr_audit_events;
      ALTER TABLE copy RENAME TO mrtr_audit_events; CREATE INDEX by_key ON mrtr_audit_events (instance, seq);
      WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 5000)
      INSERT INTO mrtr_audit_events SELECT e.* FROM mrtr_audit_events e, c WHERE instance = 'w-a' AND seq = 2`);
    db.close();
    const reader = new SqliteAuditReader(path);
    let rows = 0;
    for await (const page of reader.eventPages(3)) rows += page.length;
    expect(rows).toBe(3);
    const report = await verifyReader(reader, { verifiers: [AUDIT_KEY.verifier], pageSize: 3 });
    expect(report.firstBad).toEqual({
      instance: 'w-a',
      seq: 2,
      problem: 'a second event is stored as #2 (inserted)',
    });
    await reader.close();
  });

  it('reads a UTF-16 file as intact: an instance is compared with the bytes of the file’s own encoding', async () => {
    const path = join(tmp.dir, 'utf16.db');
    const db = new Database(path);
    db.pragma("encoding = 'UTF-16le'");
    // The encoding holds once the file has a page.
    db.exec('CREATE TABLE first_page (x)');
    expect(db.pragma('encoding', { simple: true })).toBe('UTF-16le');
    db.close();
    await writeTrail(() => SqliteAuditSink.open(path));
    const reader = new SqliteAuditReader(path);
    const report = await expectPagesAgree(reader, 5);
    expect(report.ok).toBe(true);
    await reader.close();
  });

  it('never reads a pageable trail whole, and lets its caller in after every page', async () => {
    const sqlite = new SqliteAuditReader(sqlitePath);
    let pages = 0;
    let biggest = 0;
    const pageOnly: AuditReader = {
      description: sqlite.description,
      events: () => Promise.reject(new Error('read whole')),
      eventPages: async function* (size) {
        for await (const page of sqlite.eventPages(size)) {
          biggest = Math.max(biggest, page.length);
          yield page;
        }
      },
      checkpoints: () => sqlite.checkpoints(),
      publishedKeys: () => sqlite.publishedKeys(),
      close: () => sqlite.close(),
    };
    const report = await verifyReader(pageOnly, {
      verifiers: [AUDIT_KEY.verifier],
      pageSize: 4,
      betweenPages: async () => {
        pages++;
      },
    });
    await pageOnly.close();
    expect(report.ok).toBe(true);
    expect(report.events).toBe(24);
    expect(pages).toBe(6);
    expect(biggest).toBe(4);
  });
});
