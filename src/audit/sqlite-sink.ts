// The embedded audit sink: one SQLite file in WAL mode. With synchronous=NORMAL (the default) a commit only writes
// the batch to the WAL — no fsync, no wait for the disk — so the serving thread commits it itself: posting it to a
// thread and waiting for the reply cost three times the CPU per event and a thread hop of latency on every round.
// What does wait for the disk, the WAL checkpoint, runs on a worker thread with its own connection (PASSIVE: it
// never blocks the writer), and the serving connection turns automatic checkpoints off. With synchronous=FULL
// (`sqlite:PATH?synchronous=full`) every commit waits for fsync, so there the worker writes the batches too: the
// serving thread posts a batch and goes on serving, and the batch's rounds are answered when the worker has
// committed. Either way, events that arrive while a batch is written go into the next one (group commit).
//
// Durability: with NORMAL a committed event is in the WAL file, so it survives any crash of the process (kill -9
// included) but not necessarily a power cut or an OS crash; FULL survives those too.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { makeParentDirectory, switchToWal } from '../files/index.js';
import type { ChainedEvent, ChainHead } from './chain.js';
import type { StoredCheckpoint } from './checkpoint.js';
import { AuditError } from './errors.js';
import type { AuditSink } from './sink.js';
import { eventRow, QUERY_COLUMNS, SQLITE_AUDIT_SCHEMA, SQLITE_INSERT_EVENT } from './tables.js';

// Plain CommonJS evaluated in the worker: no file to resolve, so it runs the same from src/ (tests) and dist/.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
let db, insertEvent, insertCheckpoint, insertKey, head, append;
try {
  const Database = require(workerData.driver);
  db = new Database(workerData.path);
  db.pragma('busy_timeout = ' + workerData.busyTimeoutMs);
  // files/sqlite-wal.ts's rule, here in plain CommonJS: the switch to WAL can fail at once with SQLITE_BUSY while
  // another process opens the same fresh file, whatever the busy timeout; let go and try again until it passes.
  for (const deadline = Date.now() + workerData.busyTimeoutMs; ; ) {
    try { db.pragma('journal_mode = WAL'); break; } catch (error) {
      if (error.code !== 'SQLITE_BUSY' || Date.now() >= deadline) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1 + Math.random() * 20);
    }
  }
  db.pragma('synchronous = ' + workerData.synchronous);
  db.exec(workerData.schema);
  insertEvent = db.prepare(workerData.insertEvent);
  insertCheckpoint = db.prepare('INSERT INTO mrtr_audit_checkpoints (instance, seq, hash, note) VALUES (?, ?, ?, ?)');
  insertKey = db.prepare('INSERT OR IGNORE INTO mrtr_audit_keys (vkey) VALUES (?)');
  // The query columns from the record, by the paths of QUERY_COLUMNS (tables.ts): columnValue, as data.
  const columnValue = (record, path) => {
    let value = record;
    for (const key of path) {
      if (typeof value !== 'object' || value === null) return null;
      value = value[key];
    }
    return value === undefined || value === null ? null : String(value);
  };
  head = db.prepare('SELECT seq, hash FROM mrtr_audit_events WHERE instance = ? ORDER BY seq DESC LIMIT 1');
  // Records arrive as their JSON texts joined by newlines (JSON text has none unescaped): cheaper to send than rows.
  append = db.transaction((texts, hashes, checkpoint) => {
    const records = texts === '' ? [] : texts.split('\\n');
    const hashList = hashes.split('\\n');
    for (let i = 0; i < records.length; i++) {
      const r = JSON.parse(records[i]);
      insertEvent.run(r.instance, r.seq, hashList[i], records[i], ...workerData.columnPaths.map((p) => columnValue(r, p)));
    }
    if (checkpoint) insertCheckpoint.run(checkpoint);
  });
  // Only the serving thread writes (synchronous=NORMAL): this thread keeps the WAL short, off the serving thread.
  if (workerData.checkpointMs > 0)
    setInterval(() => { try { db.pragma('wal_checkpoint(PASSIVE)'); } catch { /* busy: next time */ } }, workerData.checkpointMs);
  parentPort.postMessage({ id: 0 });
} catch (error) {
  parentPort.postMessage({ id: 0, error: String((error && error.message) || error) });
}
parentPort.on('message', (m) => {
  try {
    let result;
    if (m.op === 'append') append(m.texts, m.hashes, m.checkpoint);
    else if (m.op === 'head') result = head.get(m.instance);
    else if (m.op === 'key') insertKey.run(m.vkey);
    else if (m.op === 'close') db.close();
    parentPort.postMessage({ id: m.id, result });
  } catch (error) {
    parentPort.postMessage({ id: m.id, error: String((error && error.message) || error) });
  }
});
`;

interface Reply {
  id: number;
  result?: unknown;
  error?: string;
}

export interface SqliteAuditSinkOptions {
  /** `normal` (default): durable through a crash of the process. `full`: through a power cut too, an fsync per batch. */
  synchronous?: 'normal' | 'full';
  /** How long a write waits for another process's lock (default 5 s). */
  busyTimeoutMs?: number;
  /** How often the worker folds the WAL into the database when the serving thread writes (default 1 s). */
  checkpointIntervalMs?: number;
}

const INSERT_CHECKPOINT =
  'INSERT INTO mrtr_audit_checkpoints (instance, seq, hash, note) VALUES (?, ?, ?, ?)';

/** The serving thread's connection (synchronous=NORMAL): one transaction per batch, columns from the records. */
class ServingWriter {
  readonly #db: Database.Database;
  readonly #append: (events: readonly ChainedEvent[], checkpoint: StoredCheckpoint | undefined) => void;

  constructor(path: string, busyTimeoutMs: number) {
    this.#db = new Database(path);
    this.#db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    switchToWal(this.#db, { timeoutMs: busyTimeoutMs });
    this.#db.pragma('synchronous = NORMAL');
    // The worker checkpoints; a commit here must never turn into one.
    this.#db.pragma('wal_autocheckpoint = 0');
    const insertEvent = this.#db.prepare(SQLITE_INSERT_EVENT);
    const insertCheckpoint = this.#db.prepare(INSERT_CHECKPOINT);
    this.#append = this.#db.transaction((events: readonly ChainedEvent[], checkpoint?: StoredCheckpoint) => {
      for (const e of events) insertEvent.run(eventRow(e));
      if (checkpoint)
        insertCheckpoint.run(checkpoint.instance, checkpoint.seq, checkpoint.hash, checkpoint.note);
    });
  }

  append(events: readonly ChainedEvent[], checkpoint: StoredCheckpoint | undefined): void {
    this.#append(events, checkpoint);
  }

  close(): void {
    if (this.#db.open) this.#db.close();
  }
}

export class SqliteAuditSink implements AuditSink {
  readonly description: string;
  readonly durable = true;
  readonly #worker: Worker;
  /** Set with synchronous=NORMAL: batches are committed here, on the serving thread. */
  readonly #writer: ServingWriter | undefined;
  readonly #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  #nextId = 1;
  #gone: Error | undefined;

  private constructor(path: string, worker: Worker, full: boolean, writer: ServingWriter | undefined) {
    this.description = `sqlite:${path}${full ? '?synchronous=full' : ''}`;
    this.#worker = worker;
    this.#writer = writer;
    worker.on('message', (reply: Reply) => {
      const waiting = this.#pending.get(reply.id);
      if (!waiting) return;
      this.#pending.delete(reply.id);
      if (this.#pending.size === 0) worker.unref();
      if (reply.error !== undefined) waiting.reject(new AuditError('ERR_AUDIT_UNAVAILABLE', reply.error));
      else waiting.resolve(reply.result);
    });
    const fail = (error: unknown) => {
      const why = error instanceof Error ? error.message : String(error);
      this.#gone =
        error instanceof AuditError
          ? error
          : new AuditError('ERR_AUDIT_UNAVAILABLE', `the SQLite audit writer thread failed: ${why}`, {
              cause: error,
            });
      for (const waiting of this.#pending.values()) waiting.reject(this.#gone);
      this.#pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', () =>
      fail(new AuditError('ERR_AUDIT_UNAVAILABLE', 'the SQLite audit writer thread ended')),
    );
  }

  static async open(path: string, options: SqliteAuditSinkOptions = {}): Promise<SqliteAuditSink> {
    if (path !== ':memory:') makeParentDirectory(path);
    const full = options.synchronous === 'full';
    // An in-memory database exists once per connection: its one connection is the worker's.
    const servingThreadWrites = !full && path !== ':memory:';
    const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      // Not the parent's flags: under --input-type=module the CommonJS source would be read as a module.
      execArgv: [],
      workerData: {
        driver,
        path,
        schema: SQLITE_AUDIT_SCHEMA,
        insertEvent: SQLITE_INSERT_EVENT,
        columnPaths: QUERY_COLUMNS.map((c) => c.path),
        synchronous: full ? 'FULL' : 'NORMAL',
        busyTimeoutMs,
        checkpointMs: servingThreadWrites ? (options.checkpointIntervalMs ?? 1000) : 0,
      },
    });
    const ready = await new Promise<Reply>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    if (ready.error !== undefined) {
      await worker.terminate();
      throw new AuditError('ERR_AUDIT_UNAVAILABLE', `cannot open the audit database ${path}: ${ready.error}`);
    }
    worker.unref();
    let writer: ServingWriter | undefined;
    if (servingThreadWrites) {
      try {
        writer = new ServingWriter(path, busyTimeoutMs);
      } catch (error) {
        await worker.terminate();
        throw new AuditError('ERR_AUDIT_UNAVAILABLE', `cannot open the audit database ${path}: ${error}`);
      }
    }
    return new SqliteAuditSink(path, worker, full, writer);
  }

  #call(message: Record<string, unknown>): Promise<unknown> {
    if (this.#gone) return Promise.reject(this.#gone);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      // A write in flight keeps the process alive until it is durable; an idle writer never does.
      if (this.#pending.size === 1) this.#worker.ref();
      this.#worker.postMessage({ ...message, id });
    });
  }

  async head(instance: string): Promise<ChainHead | undefined> {
    const row = (await this.#call({ op: 'head', instance })) as { seq: number; hash: string } | undefined;
    return row ? { seq: row.seq, hash: row.hash } : undefined;
  }

  async append(events: readonly ChainedEvent[], checkpoint: StoredCheckpoint | undefined): Promise<void> {
    if (this.#writer) {
      // Synchronous: the batch is in the WAL when this returns (a throw rejects, and nothing of it is stored).
      this.#writer.append(events, checkpoint);
      return;
    }
    await this.#call({
      op: 'append',
      // Two strings, not an array of rows: structured cloning rows cost more than the SQLite inserts.
      texts: events.map((e) => e.text).join('\n'),
      hashes: events.map((e) => e.hash).join('\n'),
      checkpoint: checkpoint ? [checkpoint.instance, checkpoint.seq, checkpoint.hash, checkpoint.note] : null,
    });
  }

  async publishKey(verifierKey: string): Promise<void> {
    await this.#call({ op: 'key', vkey: verifierKey });
  }

  async close(): Promise<void> {
    this.#writer?.close();
    if (this.#gone) return;
    // The worker's connection closes last, which checkpoints the WAL into the database.
    await this.#call({ op: 'close' });
    await this.#worker.terminate();
  }
}
