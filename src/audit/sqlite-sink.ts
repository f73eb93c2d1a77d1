// The embedded audit sink: one SQLite file in WAL mode with synchronous=NORMAL, written on the serving thread in
// the store room's way — a batch is one transaction whose commit is a write to the WAL, never a wait for the disk,
// and the WAL checkpoints that do wait run on the stores' checkpointer thread. A committed event survives any crash
// of the process (kill -9 included), not necessarily a power cut or an OS crash: for that, `synchronous: 'full'`
// (`sqlite:PATH?synchronous=full`) gives the fsync-per-batch sink on its own thread.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteCheckpointer } from '../stores/index.js';
import type { ChainedEvent, ChainHead } from './chain.js';
import type { StoredCheckpoint } from './checkpoint.js';
import { AuditError } from './errors.js';
import type { AuditSink } from './sink.js';
import { SqliteFsyncAuditSink } from './sqlite-fsync-sink.js';
import { eventRow, SQLITE_AUDIT_SCHEMA } from './tables.js';

export interface SqliteAuditSinkOptions {
  /** `normal` (default): durable through a crash of the process. `full`: through a power cut too, one fsync per batch. */
  synchronous?: 'normal' | 'full';
  /** How long a write waits for another process's lock (default 5 s). */
  busyTimeoutMs?: number;
  /** How often the checkpointer thread folds the WAL into the database (default 1 s). */
  checkpointIntervalMs?: number;
}

type Row = ReturnType<typeof eventRow>;

export class SqliteAuditSink implements AuditSink {
  readonly description: string;
  readonly durable = true;
  readonly #db: Database.Database;
  readonly #checkpointer: SqliteCheckpointer | undefined;
  readonly #append: (rows: Row[], checkpoint: StoredCheckpoint | undefined) => void;
  readonly #head: Database.Statement;
  readonly #key: Database.Statement;

  private constructor(path: string, options: SqliteAuditSinkOptions) {
    this.description = `sqlite:${path}`;
    this.#db = new Database(path);
    this.#db.pragma('journal_mode = WAL');
    this.#db.pragma('synchronous = NORMAL');
    this.#db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    this.#db.exec(SQLITE_AUDIT_SCHEMA);
    if (path !== ':memory:') {
      this.#db.pragma('wal_autocheckpoint = 0');
      this.#checkpointer = new SqliteCheckpointer(path, options.checkpointIntervalMs ?? 1000);
    }
    const insertEvent = this.#db.prepare(
      'INSERT INTO mrtr_audit_events (instance, seq, hash, record, time, flow_id, target, principal, outcome) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const insertCheckpoint = this.#db.prepare(
      'INSERT INTO mrtr_audit_checkpoints (instance, seq, hash, note) VALUES (?, ?, ?, ?)',
    );
    this.#append = this.#db.transaction((rows: Row[], checkpoint: StoredCheckpoint | undefined) => {
      for (const row of rows) insertEvent.run(row);
      if (checkpoint)
        insertCheckpoint.run(checkpoint.instance, checkpoint.seq, checkpoint.hash, checkpoint.note);
    });
    this.#head = this.#db.prepare(
      'SELECT seq, hash FROM mrtr_audit_events WHERE instance = ? ORDER BY seq DESC LIMIT 1',
    );
    this.#key = this.#db.prepare('INSERT OR IGNORE INTO mrtr_audit_keys (vkey) VALUES (?)');
  }

  static async open(path: string, options: SqliteAuditSinkOptions = {}): Promise<AuditSink> {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    if (options.synchronous === 'full') return SqliteFsyncAuditSink.open(path, options);
    try {
      return new SqliteAuditSink(path, options);
    } catch (error) {
      throw new AuditError(
        'ERR_AUDIT_UNAVAILABLE',
        `cannot open the audit database ${path}: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
  }

  async head(instance: string): Promise<ChainHead | undefined> {
    const row = this.#head.get(instance) as { seq: number; hash: string } | undefined;
    return row ? { seq: row.seq, hash: row.hash } : undefined;
  }

  async append(events: readonly ChainedEvent[], checkpoint: StoredCheckpoint | undefined): Promise<void> {
    // A busy or broken database throws: the promise rejects and none of the batch took effect.
    this.#append(events.map(eventRow), checkpoint);
  }

  async publishKey(verifierKey: string): Promise<void> {
    this.#key.run(verifierKey);
  }

  async close(): Promise<void> {
    if (!this.#db.open) return;
    await this.#checkpointer?.stop();
    this.#db.close();
  }
}
