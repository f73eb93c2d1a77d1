// The audit tables, as SQLite and PostgreSQL both read them. `record` is the event's JSON as written; the other
// event columns repeat parts of it for queries, and the verifier checks that they agree with it. SQLite keeps no
// secondary index: each would be one more B-tree written per event, on the serving thread; `mrtr audit show` scans
// instead, and an operator who wants the index can add it.
export const AUDIT_TABLES = Object.freeze({
  events: 'mrtr_audit_events',
  checkpoints: 'mrtr_audit_checkpoints',
  keys: 'mrtr_audit_keys',
});

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

/** The event columns in insert order, from a chained event. */
export function eventRow(e: {
  record: {
    instance: string;
    seq: number;
    time: string;
    flowId: string | null;
    target: string | null;
    principal: { sub: string } | null;
    outcome: string;
  };
  hash: string;
  text: string;
}): [string, number, string, string, string, string | null, string | null, string | null, string] {
  const r = e.record;
  return [r.instance, r.seq, e.hash, e.text, r.time, r.flowId, r.target, r.principal?.sub ?? null, r.outcome];
}
