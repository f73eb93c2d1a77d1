// The embedded store: one SQLite file in WAL mode, safe for several processes on one machine. Every operation is a
// single SQL statement, so each is atomic on its own; expired rows read as absent and are swept in small batches as
// writes go by. Operations that arrive together are run in one transaction (group commit): a commit costs far more
// than a statement, and rounds in flight at once share it.
import { createRequire } from 'node:module';
import type Database from 'better-sqlite3';
import { makeParentDirectory, switchToWal } from '../files/index.js';
import { checkEntry, type SharedStore, type StoredEntry, StoreUnavailableError } from './contract.js';
import { SqliteCheckpointer } from './sqlite-checkpointer.js';

export interface SqliteStoreOptions {
  /** The clock (ms since the epoch); tests pass a fake one. */
  now?: () => number;
  /** How long a write waits for another process's lock before the store counts as unavailable (default 5 s). */
  busyTimeoutMs?: number;
  /** How often the checkpointer thread folds the WAL into the database (default 1 s). */
  checkpointIntervalMs?: number;
}

const SWEEP_EVERY_WRITES = 512;
const SWEEP_BATCH = 1000;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS mrtr_store (
  key        TEXT PRIMARY KEY,
  value      TEXT NOT NULL,
  version    INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS mrtr_store_expiry ON mrtr_store (expires_at);
`;

export class SqliteStore implements SharedStore {
  readonly description: string;
  readonly #db: Database.Database;
  readonly #now: () => number;
  readonly #sql: ReturnType<typeof prepare>;
  readonly #inOneTransaction: (batch: Pending[]) => void;
  readonly #checkpointer: SqliteCheckpointer | undefined;
  #queue: Pending[] = [];
  #writes = 0;

  constructor(path: string, options: SqliteStoreOptions = {}) {
    this.description = `sqlite:${path}`;
    this.#now = options.now ?? Date.now;
    if (path !== ':memory:') makeParentDirectory(path);
    this.#db = new (openDriver())(path);
    // WAL lets readers and one writer work at once across processes; NORMAL sync keeps every committed write
    // through a process crash (an OS crash may lose the last ones — a replay record is short-lived anyway).
    const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    this.#db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    switchToWal(this.#db, { timeoutMs: busyTimeoutMs });
    this.#db.pragma('synchronous = NORMAL');
    this.#db.exec(SCHEMA);
    if (path !== ':memory:') {
      // Checkpoints (the only step that waits for the disk) run on their own thread, never inside a request.
      this.#db.pragma('wal_autocheckpoint = 0');
      this.#checkpointer = new SqliteCheckpointer(path, options.checkpointIntervalMs ?? 1000);
    }
    this.#sql = prepare(this.#db);
    this.#inOneTransaction = this.#db.transaction((batch: Pending[]) => {
      for (const pending of batch) pending.result = pending.operation();
    });
  }

  async get(key: string): Promise<StoredEntry | undefined> {
    checkEntry(key);
    const row = (await this.#run(() => this.#sql.get.get(key, this.#now()))) as
      | { value: string; version: number }
      | undefined;
    return row && { value: row.value, version: row.version };
  }

  async create(key: string, value: string, ttlMs: number): Promise<boolean> {
    checkEntry(key, value, ttlMs);
    const now = this.#now();
    return this.#write(() => this.#sql.create.run({ key, value, expires: now + ttlMs, now }).changes === 1);
  }

  async replace(key: string, version: number, value: string, ttlMs: number): Promise<boolean> {
    checkEntry(key, value, ttlMs);
    const now = this.#now();
    return this.#write(
      () => this.#sql.replace.run({ value, expires: now + ttlMs, key, version, now }).changes === 1,
    );
  }

  async remove(key: string, version: number): Promise<boolean> {
    checkEntry(key);
    return this.#write(() => this.#sql.remove.run(key, version, this.#now()).changes === 1);
  }

  async increment(key: string, ttlMs: number): Promise<number> {
    checkEntry(key, undefined, ttlMs);
    const now = this.#now();
    return this.#write(
      () => (this.#sql.increment.get({ key, expires: now + ttlMs, now }) as { version: number }).version,
    );
  }

  async close(): Promise<void> {
    this.#flush();
    await this.#checkpointer?.stop();
    this.#db.close();
  }

  #write<T>(operation: () => T): Promise<T> {
    // The sweep rides in the same transaction; a failed one is retried by a later write.
    if (++this.#writes % SWEEP_EVERY_WRITES === 0)
      this.#run(() => this.#sql.sweep.run(this.#now())).catch(() => undefined);
    return this.#run(operation);
  }

  /** Queue the statement for this turn's transaction; it settles when that transaction has committed. */
  #run<T>(operation: () => T): Promise<T> {
    if (!this.#db.open) return Promise.reject(new StoreUnavailableError(this.description, 'store is closed'));
    return new Promise<T>((resolve, reject) => {
      if (this.#queue.length === 0) setImmediate(() => this.#flush());
      this.#queue.push({
        operation,
        resolve: resolve as (value: unknown) => void,
        reject,
        result: undefined,
      });
    });
  }

  #flush(): void {
    const batch = this.#queue;
    if (batch.length === 0) return;
    this.#queue = [];
    try {
      this.#inOneTransaction(batch);
    } catch (error) {
      // A busy or broken database fails the whole batch: none of its statements took effect.
      const unavailable = new StoreUnavailableError(this.description, error);
      for (const pending of batch) pending.reject(unavailable);
      return;
    }
    for (const pending of batch) pending.resolve(pending.result);
  }
}

interface Pending {
  operation: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  result: unknown;
}

function prepare(db: Database.Database) {
  return {
    get: db.prepare('SELECT value, version FROM mrtr_store WHERE key = ? AND expires_at > ?'),
    // An expired row counts as absent: the insert takes its place.
    create: db.prepare(`
      INSERT INTO mrtr_store (key, value, version, expires_at) VALUES (@key, @value, 1, @expires)
      ON CONFLICT (key) DO UPDATE SET value = excluded.value, version = 1, expires_at = excluded.expires_at
      WHERE mrtr_store.expires_at <= @now`),
    replace: db.prepare(`
      UPDATE mrtr_store SET value = @value, version = version + 1, expires_at = @expires
      WHERE key = @key AND version = @version AND expires_at > @now`),
    remove: db.prepare('DELETE FROM mrtr_store WHERE key = ? AND version = ? AND expires_at > ?'),
    increment: db.prepare(`
      INSERT INTO mrtr_store (key, value, version, expires_at) VALUES (@key, '', 1, @expires)
      ON CONFLICT (key) DO UPDATE SET
        version    = CASE WHEN mrtr_store.expires_at <= @now THEN 1 ELSE mrtr_store.version + 1 END,
        expires_at = CASE WHEN mrtr_store.expires_at <= @now THEN excluded.expires_at ELSE mrtr_store.expires_at END
      RETURNING version`),
    sweep: db.prepare(
      `DELETE FROM mrtr_store WHERE key IN (SELECT key FROM mrtr_store WHERE expires_at <= ? LIMIT ${SWEEP_BATCH})`,
    ),
  };
}

let driver: typeof Database | undefined;
/** The SQLite driver, loaded when the first store opens: a server without a SQLite store never pays its memory. */
function openDriver(): typeof Database {
  driver ??= createRequire(import.meta.url)('better-sqlite3') as typeof Database;
  return driver;
}
