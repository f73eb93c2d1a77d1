// The embedded audit sink: one SQLite file in WAL mode, written by a worker thread, so that no commit and no WAL
// checkpoint (the steps that may wait for the disk) ever runs on the serving thread — better-sqlite3 is synchronous,
// and there that wait would stall every request. The serving thread posts a batch and goes on serving; the batch's
// rounds are answered when the worker says it has committed. While it commits, the next batch grows (group commit).
//
// Durability: with synchronous=NORMAL (the default) a committed event is in the WAL file, so it survives any crash of
// the process (kill -9 included) but not necessarily a power cut or an OS crash; synchronous=FULL
// (`sqlite:PATH?synchronous=full`) also waits for fsync on every commit, which survives those too.
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ChainedEvent, ChainHead } from './chain.js';
import type { StoredCheckpoint } from './checkpoint.js';
import { AuditError } from './errors.js';
import type { AuditSink } from './sink.js';
import { SQLITE_AUDIT_SCHEMA } from './tables.js';

// Plain CommonJS evaluated in the worker: no file to resolve, so it runs the same from src/ (tests) and dist/.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
let db, insertEvent, insertCheckpoint, insertKey, head, append;
try {
  const Database = require(workerData.driver);
  db = new Database(workerData.path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = ' + workerData.synchronous);
  db.pragma('busy_timeout = ' + workerData.busyTimeoutMs);
  db.exec(workerData.schema);
  insertEvent = db.prepare('INSERT INTO mrtr_audit_events (instance, seq, hash, record, time, flow_id, target, principal, outcome) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)');
  insertCheckpoint = db.prepare('INSERT INTO mrtr_audit_checkpoints (instance, seq, hash, note) VALUES (?, ?, ?, ?)');
  insertKey = db.prepare('INSERT OR IGNORE INTO mrtr_audit_keys (vkey) VALUES (?)');
  head = db.prepare('SELECT seq, hash FROM mrtr_audit_events WHERE instance = ? ORDER BY seq DESC LIMIT 1');
  // Records arrive as their JSON texts joined by newlines (JSON text has none unescaped): cheaper to send than rows.
  append = db.transaction((texts, hashes, checkpoint) => {
    const records = texts === '' ? [] : texts.split('\\n');
    const hashList = hashes.split('\\n');
    for (let i = 0; i < records.length; i++) {
      const r = JSON.parse(records[i]);
      insertEvent.run(r.instance, r.seq, hashList[i], records[i], r.time, r.flowId, r.target, r.principal ? r.principal.sub : null, r.outcome);
    }
    if (checkpoint) insertCheckpoint.run(checkpoint);
  });
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
}

export class SqliteAuditSink implements AuditSink {
  readonly description: string;
  readonly durable = true;
  readonly #worker: Worker;
  readonly #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  #nextId = 1;
  #gone: Error | undefined;

  private constructor(path: string, worker: Worker, full: boolean) {
    this.description = `sqlite:${path}${full ? '?synchronous=full' : ''}`;
    this.#worker = worker;
    worker.on('message', (reply: Reply) => {
      const waiting = this.#pending.get(reply.id);
      if (!waiting) return;
      this.#pending.delete(reply.id);
      if (this.#pending.size === 0) worker.unref();
      if (reply.error !== undefined) waiting.reject(new Error(reply.error));
      else waiting.resolve(reply.result);
    });
    const fail = (error: unknown) => {
      this.#gone = error instanceof Error ? error : new Error(String(error));
      for (const waiting of this.#pending.values()) waiting.reject(this.#gone);
      this.#pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', () => fail(new Error('the SQLite audit writer thread ended')));
  }

  static async open(path: string, options: SqliteAuditSinkOptions = {}): Promise<SqliteAuditSink> {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        driver,
        path,
        schema: SQLITE_AUDIT_SCHEMA,
        synchronous: options.synchronous === 'full' ? 'FULL' : 'NORMAL',
        busyTimeoutMs: options.busyTimeoutMs ?? 5000,
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
    return new SqliteAuditSink(path, worker, options.synchronous === 'full');
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
    if (this.#gone) return;
    await this.#call({ op: 'close' });
    await this.#worker.terminate();
  }
}
