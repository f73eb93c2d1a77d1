// The audit tables, as SQLite and PostgreSQL both read them. `record` is the event's JSON as written; the other
// event columns repeat parts of it for queries, and the verifier checks that they agree with it. SQLite keeps no
// secondary index: each would be one more B-tree written per event, on the serving thread; `mrtr audit show` scans
// instead, and an operator who wants the index can add it.
export const AUDIT_TABLES = Object.freeze({
  events: 'mrtr_audit_events',
  checkpoints: 'mrtr_audit_checkpoints',
  keys: 'mrtr_audit_keys',
});

/**
 * The query columns, each with the path of the record member it copies: the one rule the sinks write by and the
 * verifier checks by, so a column cannot be written without being checked. A path (not a function) because the
 * SQLite worker thread, which gets this table as data, derives the same values. A new column is one line here plus
 * its line in the two schemas below (the verifier and both sinks follow this table).
 */
export const QUERY_COLUMNS: ReadonlyArray<{ readonly column: string; readonly path: readonly string[] }> =
  Object.freeze([
    { column: 'time', path: ['time'] },
    { column: 'flow_id', path: ['flowId'] },
    { column: 'target', path: ['target'] },
    { column: 'principal', path: ['principal', 'sub'] },
    { column: 'outcome', path: ['outcome'] },
  ]);

/** All columns of an event row, in insert order: where it sits in the chain, its hash, its text, then the queries. */
export const EVENT_COLUMNS: readonly string[] = Object.freeze([
  'instance',
  'seq',
  'hash',
  'record',
  ...QUERY_COLUMNS.map((c) => c.column),
]);

/**
 * A query column's value as derived from the record: the member at `path`, or null where the record has none. Written
 * the same way in the worker's source (sqlite-sink.ts): change both or neither.
 */
export function columnValue(record: unknown, path: readonly string[]): string | null {
  let value: unknown = record;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return null;
    value = (value as Record<string, unknown>)[key];
  }
  return value === undefined || value === null ? null : String(value);
}

/** The stored query columns of a row read back, by column name, for the verifier. */
export function queryColumnsOf(row: Readonly<Record<string, unknown>>): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const { column } of QUERY_COLUMNS) {
    const v = row[column];
    out[column] = v === undefined || v === null ? null : String(v);
  }
  return out;
}

/** The first query column whose stored value is not what the record says, or undefined. */
export function columnDiffering(
  record: unknown,
  stored: Readonly<Record<string, string | null>>,
): string | undefined {
  // A column missing from what was read counts as differing: a reader that forgot one must not pass silently.
  for (const { column, path } of QUERY_COLUMNS)
    if (!(column in stored) || stored[column] !== columnValue(record, path)) return column;
  return undefined;
}

/** The SELECT list of an event row: what the readers read and the verifier needs. */
export const EVENT_SELECT = EVENT_COLUMNS.join(', ');

/** `INSERT INTO mrtr_audit_events (…) VALUES (?, …)` for SQLite. */
export const SQLITE_INSERT_EVENT = `INSERT INTO mrtr_audit_events (${EVENT_SELECT}) VALUES (${EVENT_COLUMNS.map(() => '?').join(', ')})`;

export const SQLITE_AUDIT_SCHEMA = `
CREATE TABLE IF NOT EXISTS mrtr_audit_events (
  instance  TEXT    NOT NULL,
  seq       INTEGER NOT NULL,
  hash      TEXT    NOT NULL,
  record    TEXT    NOT NULL,
  time      TEXT    NOT NULL,
  flow_id   TEXT,
  target    TEXT,
  principal TEXT,
  outcome   TEXT    NOT NULL,
  PRIMARY KEY (instance, seq)
);
CREATE TABLE IF NOT EXISTS mrtr_audit_checkpoints (
  instance TEXT    NOT NULL,
  seq      INTEGER NOT NULL,
  hash     TEXT    NOT NULL,
  note     TEXT    NOT NULL,
  PRIMARY KEY (instance, seq)
);
CREATE TABLE IF NOT EXISTS mrtr_audit_keys (vkey TEXT PRIMARY KEY);
`;

/** The event columns in insert order (EVENT_COLUMNS), from a chained event. */
export function eventRow(e: {
  record: { instance: string; seq: number };
  hash: string;
  text: string;
}): Array<string | number | null> {
  const r = e.record;
  return [r.instance, r.seq, e.hash, e.text, ...QUERY_COLUMNS.map((c) => columnValue(r, c.path))];
}
