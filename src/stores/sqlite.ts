// The embedded store: one SQLite file in WAL mode, safe for several processes on one machine. Every operation is a
// single SQL statement, so each is atomic without an explicit transaction; expired rows read as absent and are
// swept in small batches as writes go by.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { checkEntry, type SharedStore, type StoredEntry, StoreUnavailableError } from './contract.js';

export interface SqliteStoreOptions {
  /** The clock (ms since the epoch); tests pass a fake one. */
  now?: () => number;
  /** How long a write waits for another process's lock before the store counts as unavailable (default 5 s). */
  busyTimeoutMs?: number;
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
  #writes = 0;

  constructor(path: string, options: SqliteStoreOptions = {}) {
    this.description = `sqlite:${path}`;
    this.#now = options.now ?? Date.now;
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.#db = new Database(path);
    // WAL lets readers and one writer work at once across processes; NORMAL sync keeps every committed write
    // through a process crash (an OS crash may lose the last ones — a replay record is short-lived anyway).
    this.#db.pragma('journal_mode = WAL');
    this.#db.pragma('synchronous = NORMAL');
    this.#db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    this.#db.exec(SCHEMA);
    this.#sql = prepare(this.#db);
  }

  async get(key: string): Promise<StoredEntry | undefined> {
    checkEntry(key);
    const row = this.#run(() => this.#sql.get.get(key, this.#now())) as
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
    this.#db.close();
  }

  #write<T>(operation: () => T): T {
    const result = this.#run(operation);
    if (++this.#writes % SWEEP_EVERY_WRITES === 0) this.#run(() => this.#sql.sweep.run(this.#now()));
    return result;
  }

  #run<T>(operation: () => T): T {
    try {
      return operation();
    } catch (error) {
      throw new StoreUnavailableError(this.description, error);
    }
  }
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
