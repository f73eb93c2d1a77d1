// Reading an SQLite audit file back (the CLI, the verifier): a read-only connection on the serving thread is fine,
// since nothing here serves requests.
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { StoredCheckpoint } from './checkpoint.js';
import { AuditError } from './errors.js';
import { eventsOfPages, keyPages } from './key-pages.js';
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
  /** How the file stores text: what an instance's bytes are compared with. */
  readonly #encoding: string;

  constructor(path: string) {
    this.description = `sqlite:${path}`;
    if (!existsSync(path)) throw new AuditError('ERR_AUDIT_CONFIG', `no audit database at ${path}`);
    this.#db = new Database(path, { readonly: true, fileMustExist: true });
    this.#encoding = this.#db.pragma('encoding', { simple: true }) as string;
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
    return rows.map((row) => storedEvent(row, this.#encoding));
  }

  async *eventPages(pageSize: number): AsyncIterable<StoredEvent[]> {
    const kind = this.#db
      .prepare("SELECT type FROM sqlite_schema WHERE name = 'mrtr_audit_events'")
      .pluck()
      .get();
    if (kind !== 'table')
      throw new AuditError(
        'ERR_AUDIT_CORRUPT',
        `${this.description}: mrtr_audit_events is ${kind ? `a ${kind}` : 'missing'}, not a table: the file was edited`,
      );
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
    // One snapshot for every page (and the count below): nothing written meanwhile can slip between two pages.
    const own = !this.#db.inTransaction;
    if (own) this.#db.exec('BEGIN');
    try {
      yield* eventsOfPages(
        pages,
        (row) => storedEvent(row, this.#encoding),
        (read) => {
          // Pages read the table through its key's index. A row the index does not know (an index rebuilt or edited
          // apart from its table) would be in the trail unread: the table itself, scanned, must hold as many.
          const stored = this.#db.prepare('SELECT count(*) FROM mrtr_audit_events NOT INDEXED').pluck().get();
          if (stored !== read)
            throw new AuditError(
              'ERR_AUDIT_CORRUPT',
              `${this.description}: the events table holds ${stored} rows, but ${read} are found by its key: the table or its index was edited (PRAGMA integrity_check names them)`,
            );
        },
      );
    } finally {
      if (own && this.#db.inTransaction) this.#db.exec('COMMIT');
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

function storedEvent(r: EventRow, encoding: string): StoredEvent {
  const event: StoredEvent = {
    instance: String(r.instance),
    seq: Number(r.seq),
    hash: r.hash,
    text: r.record,
    columns: queryColumnsOf(r),
  };
  const problem = keyProblem(r, encoding);
  if (problem) event.problem = problem;
  return event;
}

function keyProblem(r: EventRow, encoding: string): string | undefined {
  if (r.instance_type !== 'text') return `its instance is stored as ${r.instance_type}, not text (edited)`;
  if (!r.instance_bytes || !textBytes(r.instance, encoding).equals(r.instance_bytes))
    return `its instance is not ${encoding} text (edited)`;
  if (r.seq_type !== 'integer' || !Number.isSafeInteger(r.seq))
    return `its seq is stored as ${r.seq_type === 'integer' ? 'an integer beyond 2^53' : r.seq_type}, not a whole number (edited)`;
  return undefined;
}

/** `text` as a file of this encoding stores it (`PRAGMA encoding`). */
function textBytes(text: string, encoding: string): Buffer {
  if (encoding === 'UTF-16le') return Buffer.from(text, 'utf16le');
  if (encoding === 'UTF-16be') return Buffer.from(text, 'utf16le').swap16();
  return Buffer.from(text, 'utf8');
}
