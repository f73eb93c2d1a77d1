// Reading an SQLite audit file back (the CLI, the verifier): a read-only connection on the serving thread is fine,
// since nothing here serves requests.
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { StoredCheckpoint } from './checkpoint.js';
import { AuditError } from './errors.js';
import { keyPages } from './key-pages.js';
import type { AuditReader, EventFilter, StoredEvent } from './sink.js';
import { EVENT_SELECT, queryColumnsOf } from './tables.js';

interface EventRow extends Record<string, unknown>, KeyChecks {
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
        `SELECT ${EVENT_SELECT}, ${KEY_CHECKS} FROM mrtr_audit_events
         ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY instance, seq`,
      )
      .all(...params) as EventRow[];
    return rows.map(storedEvent);
  }

  async *eventPages(pageSize: number): AsyncIterable<StoredEvent[]> {
    const first = this.#db.prepare(
      `SELECT ${EVENT_SELECT}, ${KEY_CHECKS} FROM mrtr_audit_events ORDER BY instance, seq LIMIT ?`,
    );
    // A row value walks the (instance, seq) key: each page starts at the last key read, at the cost of one seek. The
    // key is bound back as read, which is exact because a row whose key would not be is where the pages stop.
    const next = this.#db.prepare(
      `SELECT ${EVENT_SELECT}, ${KEY_CHECKS} FROM mrtr_audit_events WHERE (instance, seq) >= (?, ?) ORDER BY instance, seq LIMIT ?`,
    );
    const pages = keyPages<EventRow>(
      (from, limit) => (from ? next.all(from.instance, from.seq, limit) : first.all(limit)) as EventRow[],
      pageSize,
    );
    for await (const rows of pages) {
      const events: StoredEvent[] = [];
      for (const row of rows) {
        const event = storedEvent(row);
        events.push(event);
        if (event.problem) {
          yield events;
          return;
        }
      }
      yield events;
    }
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

// What the row's key is stored as. better-sqlite3 reads text that is not UTF-8 with U+FFFD in place of the bad bytes
// and an integer beyond 2^53 rounded: such a key, bound back, names another place in the table than the row's own.
const KEY_CHECKS =
  'typeof(instance) AS instance_type, CAST(instance AS BLOB) AS instance_bytes, typeof(seq) AS seq_type';

interface KeyChecks {
  instance_type: string;
  instance_bytes: Buffer | null;
  seq_type: string;
}

function storedEvent(r: EventRow): StoredEvent {
  const event: StoredEvent = {
    instance: String(r.instance),
    seq: Number(r.seq),
    hash: r.hash,
    text: r.record,
    columns: queryColumnsOf(r),
  };
  const problem = keyProblem(r);
  if (problem) event.problem = problem;
  return event;
}

function keyProblem(r: EventRow): string | undefined {
  if (r.instance_type !== 'text') return `its instance is stored as ${r.instance_type}, not text (edited)`;
  if (!r.instance_bytes || !Buffer.from(r.instance, 'utf8').equals(r.instance_bytes))
    return 'its instance is not UTF-8 text (edited)';
  if (r.seq_type !== 'integer' || !Number.isSafeInteger(r.seq))
    return `its seq is stored as ${r.seq_type === 'integer' ? 'an integer beyond 2^53' : r.seq_type}, not a whole number (edited)`;
  return undefined;
}
