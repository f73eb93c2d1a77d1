// Reading an SQLite audit file back (the CLI, the verifier): a read-only connection on the serving thread is fine,
// since nothing here serves requests.
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { StoredCheckpoint } from './checkpoint.js';
import { AuditError } from './errors.js';
import { keyPages, mapPages } from './key-pages.js';
import type { AuditReader, EventFilter, StoredEvent } from './sink.js';
import { EVENT_SELECT, queryColumnsOf } from './tables.js';

interface EventRow extends Record<string, unknown> {
  instance: string;
  seq: number;
  hash: string;
  record: string;
}

export class SqliteAuditReader implements AuditReader {
  readonly description: string;
  readonly #db: Database.Database;

  constructor(path: string) {
    this.description = `sqlite:${path}`;
    if (!existsSync(path)) throw new AuditError('ERR_AUDIT_CONFIG', `no audit database at ${path}`);
    this.#db = new Database(path, { readonly: true, fileMustExist: true });
  }

  async events(filter: EventFilter = {}): Promise<StoredEvent[]> {
    const where: string[] = [];
    const params: string[] = [];
    if (filter.flowId !== undefined) {
      where.push('flow_id = ?');
      params.push(filter.flowId);
    }
    if (filter.since !== undefined) {
      where.push('time >= ?');
      params.push(filter.since);
    }
    const rows = this.#db
      .prepare(
        `SELECT ${EVENT_SELECT} FROM mrtr_audit_events
         ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY instance, seq`,
      )
      .all(...params) as EventRow[];
    return rows.map(storedEvent);
  }

  eventPages(pageSize: number): AsyncIterable<StoredEvent[]> {
    const first = this.#db.prepare(
      `SELECT ${EVENT_SELECT} FROM mrtr_audit_events ORDER BY instance, seq LIMIT ?`,
    );
    // A row value walks the (instance, seq) key: each page starts where the last one ended, at the cost of one seek.
    const next = this.#db.prepare(
      `SELECT ${EVENT_SELECT} FROM mrtr_audit_events WHERE (instance, seq) >= (?, ?) ORDER BY instance, seq LIMIT ?`,
    );
    return mapPages(
      keyPages<EventRow>(
        (from, limit) => (from ? next.all(from.instance, from.seq, limit) : first.all(limit)) as EventRow[],
        pageSize,
      ),
      storedEvent,
    );
  }

  async checkpoints(): Promise<StoredCheckpoint[]> {
    return this.#db
      .prepare('SELECT instance, seq, hash, note FROM mrtr_audit_checkpoints ORDER BY instance, seq')
      .all() as StoredCheckpoint[];
  }

  async publishedKeys(): Promise<string[]> {
    return (this.#db.prepare('SELECT vkey FROM mrtr_audit_keys').all() as Array<{ vkey: string }>).map(
      (r) => r.vkey,
    );
  }

  async close(): Promise<void> {
    this.#db.close();
  }
}

function storedEvent(r: EventRow): StoredEvent {
  return { instance: r.instance, seq: r.seq, hash: r.hash, text: r.record, columns: queryColumnsOf(r) };
}
