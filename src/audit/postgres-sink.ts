// PostgreSQL: many instances writing into one database, each with its own chain (its rows never conflict with
// another writer's, so a fleet never serialises on one chain). A batch is one INSERT statement (events and
// checkpoint through one CTE), atomic on its own, and durable once PostgreSQL answers (synchronous_commit on).
import type pg from 'pg';
import type { ChainedEvent, ChainHead } from './chain.js';
import type { StoredCheckpoint } from './checkpoint.js';
import { AuditError } from './errors.js';
import { eventsOfPages, keyPages } from './key-pages.js';
import type { AuditReader, AuditSink, EventFilter, StoredEvent } from './sink.js';
import { EVENT_COLUMNS, EVENT_SELECT, eventRow, queryColumnsOf } from './tables.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS mrtr_audit_events (
  instance  TEXT   NOT NULL,
  seq       BIGINT NOT NULL,
  hash      TEXT   NOT NULL,
  record    TEXT   NOT NULL,
  time      TEXT   NOT NULL,
  flow_id   TEXT,
  target    TEXT,
  principal TEXT,
  outcome   TEXT   NOT NULL,
  PRIMARY KEY (instance, seq)
);
CREATE INDEX IF NOT EXISTS mrtr_audit_events_flow ON mrtr_audit_events (flow_id);
CREATE INDEX IF NOT EXISTS mrtr_audit_events_time ON mrtr_audit_events (time);
CREATE TABLE IF NOT EXISTS mrtr_audit_checkpoints (
  instance TEXT   NOT NULL,
  seq      BIGINT NOT NULL,
  hash     TEXT   NOT NULL,
  note     TEXT   NOT NULL,
  PRIMARY KEY (instance, seq)
);
CREATE TABLE IF NOT EXISTS mrtr_audit_keys (vkey TEXT PRIMARY KEY);
`;

// One array parameter per column of EVENT_COLUMNS (seq is the one number), then the checkpoint's four.
const EVENT_TYPES = EVENT_COLUMNS.map((c) => (c === 'seq' ? 'bigint' : 'text'));
const CHECKPOINT_FIRST = EVENT_COLUMNS.length + 1;
const APPEND = `
WITH events AS (
  INSERT INTO mrtr_audit_events (${EVENT_SELECT})
  SELECT * FROM unnest(${EVENT_TYPES.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})
  RETURNING 1
), checkpoint AS (
  INSERT INTO mrtr_audit_checkpoints (instance, seq, hash, note)
  SELECT * FROM unnest($${CHECKPOINT_FIRST}::text[], $${CHECKPOINT_FIRST + 1}::bigint[], $${CHECKPOINT_FIRST + 2}::text[],
                       $${CHECKPOINT_FIRST + 3}::text[])
  RETURNING 1
)
SELECT (SELECT count(*) FROM events) AS events, (SELECT count(*) FROM checkpoint) AS checkpoints`;

/** The URL without its password, for messages. */
function described(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}

async function connect(url: string): Promise<pg.Client> {
  // Loaded on first connect: a server or gateway with another sink never pays for the driver.
  const { default: driver } = await import('pg');
  const client = new driver.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  // A connection that breaks later fails the writes in flight, not the process.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SET client_min_messages = warning');
    await client.query(SCHEMA);
  } catch (error) {
    await client.end().catch(() => undefined);
    throw new AuditError(
      'ERR_AUDIT_UNAVAILABLE',
      `cannot open the audit database ${described(url)}: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  return client;
}

export class PostgresAuditSink implements AuditSink {
  readonly durable = true;
  private constructor(
    readonly description: string,
    private readonly client: pg.Client,
  ) {}

  static async connect(url: string): Promise<PostgresAuditSink> {
    return new PostgresAuditSink(described(url), await connect(url));
  }

  async head(instance: string): Promise<ChainHead | undefined> {
    const { rows } = await this.client.query<{ seq: string; hash: string }>(
      'SELECT seq, hash FROM mrtr_audit_events WHERE instance = $1 ORDER BY seq DESC LIMIT 1',
      [instance],
    );
    return rows[0] ? { seq: Number(rows[0].seq), hash: rows[0].hash } : undefined;
  }

  async append(events: readonly ChainedEvent[], checkpoint: StoredCheckpoint | undefined): Promise<void> {
    const rows = events.map(eventRow);
    const column = (i: number) => rows.map((r) => r[i]);
    const cp = checkpoint
      ? [[checkpoint.instance], [checkpoint.seq], [checkpoint.hash], [checkpoint.note]]
      : [[], [], [], []];
    await this.client.query(APPEND, [...EVENT_COLUMNS.map((_, i) => column(i)), ...cp]);
  }

  async publishKey(verifierKey: string): Promise<void> {
    await this.client.query('INSERT INTO mrtr_audit_keys (vkey) VALUES ($1) ON CONFLICT DO NOTHING', [
      verifierKey,
    ]);
  }

  async close(): Promise<void> {
    await this.client.end();
  }
}

export class PostgresAuditReader implements AuditReader {
  private constructor(
    readonly description: string,
    private readonly client: pg.Client,
  ) {}

  static async connect(url: string): Promise<PostgresAuditReader> {
    return new PostgresAuditReader(described(url), await connect(url));
  }

  async events(filter: EventFilter = {}): Promise<StoredEvent[]> {
    const where: string[] = [];
    const params: string[] = [];
    if (filter.flowId !== undefined) {
      params.push(filter.flowId);
      where.push(`flow_id = $${params.length}`);
    }
    if (filter.since !== undefined) {
      params.push(filter.since);
      where.push(`time >= $${params.length}`);
    }
    const { rows } = await this.client.query<EventRow>(
      `SELECT ${EVENT_SELECT} FROM mrtr_audit_events
       ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY instance, seq`,
      params,
    );
    return rows.map(storedEvent);
  }

  eventPages(pageSize: number): AsyncIterable<StoredEvent[]> {
    // A row comparison walks the primary key's index: each page starts where the last one ended.
    const read = async (from: EventRow | undefined, limit: number) =>
      (
        await this.client.query<EventRow>(
          from
            ? `SELECT ${EVENT_SELECT} FROM mrtr_audit_events WHERE (instance, seq) >= ($1, $2) ORDER BY instance, seq LIMIT $3`
            : `SELECT ${EVENT_SELECT} FROM mrtr_audit_events ORDER BY instance, seq LIMIT $1`,
          from ? [from.instance, from.seq, limit] : [limit],
        )
      ).rows;
    return eventsOfPages(keyPages<EventRow>(read, pageSize), storedEvent);
  }

  async checkpoints(): Promise<StoredCheckpoint[]> {
    const { rows } = await this.client.query<{ instance: string; seq: string; hash: string; note: string }>(
      'SELECT instance, seq, hash, note FROM mrtr_audit_checkpoints ORDER BY instance, seq',
    );
    return rows.map((r) => ({ instance: r.instance, seq: Number(r.seq), hash: r.hash, note: r.note }));
  }

  async publishedKeys(): Promise<string[]> {
    const { rows } = await this.client.query<{ vkey: string }>('SELECT vkey FROM mrtr_audit_keys');
    return rows.map((r) => r.vkey);
  }

  async close(): Promise<void> {
    await this.client.end();
  }
}

type EventRow = Record<string, unknown> & { instance: string; seq: string; hash: string; record: string };

function storedEvent(r: EventRow): StoredEvent {
  return {
    instance: r.instance,
    seq: Number(r.seq),
    hash: r.hash,
    text: r.record,
    columns: queryColumnsOf(r),
  };
}
