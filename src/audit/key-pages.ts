// Reading a table of events a page at a time by its key, (instance, seq). Each page starts at the last key read —
// not after it — and leaves out the rows with that key it has already given. A key is unique in the table as mrtr
// makes it, but someone who edits the database can drop that constraint and add a second row under a key: starting
// after the key would then skip that row whenever it fell at a page's edge, and the verifier would never see it.
// This way every row is given, and a duplicate always reaches the verifier beside the row it copies.
import { AuditError } from './errors.js';
import type { StoredEvent } from './sink.js';

export interface KeyedRow {
  instance: string;
  seq: unknown;
}

/**
 * Pages of the rows `read` returns in (instance, seq) order: `read(from, limit)` gives at most `limit` rows whose key
 * is at or after `from` (all rows when `from` is undefined).
 */
export async function* keyPages<R extends KeyedRow>(
  read: (from: R | undefined, limit: number) => Promise<R[]> | R[],
  pageSize: number,
): AsyncIterable<R[]> {
  let from: R | undefined;
  /** Rows with `from`'s key given already: the next page's first rows. */
  let given = 0;
  for (;;) {
    const limit = pageSize + given;
    const rows = await read(from, limit);
    // The rows given already lead the page; anything else means the table does not read back in its key's order.
    for (let i = 0; i < given; i++)
      if (rows[i]?.instance !== from?.instance || rows[i]?.seq !== from?.seq)
        throw new AuditError(
          'ERR_AUDIT_CORRUPT',
          `the events table does not read back in (instance, seq) order at ${JSON.stringify(from?.instance)} #${String(from?.seq)}: it was edited`,
        );
    const fresh = rows.slice(given);
    if (fresh.length > 0) yield fresh;
    if (rows.length < limit) return;
    const last = rows.at(-1)!;
    let sameKey = 0;
    for (
      let i = rows.length - 1;
      i >= 0 && rows[i]!.instance === last.instance && rows[i]!.seq === last.seq;
      i--
    )
      sameKey++;
    from = last;
    given = sameKey;
  }
}

/**
 * Rows as events, a page at a time, ending after the first event with a problem: its reader's own (a key that does
 * not read back) or a second row under the key of the row before it. Reading on past a duplicate would only cost
 * more (each page re-reads the rows under its first key), and the verifier stops at the first bad event anyway.
 * `whole` runs only when every row was read with none.
 */
export async function* eventsOfPages<R extends KeyedRow>(
  pages: AsyncIterable<R[]>,
  toEvent: (row: R) => StoredEvent,
  whole?: (events: number) => void,
): AsyncIterable<StoredEvent[]> {
  let previous: R | undefined;
  let read = 0;
  for await (const rows of pages) {
    const events: StoredEvent[] = [];
    for (const row of rows) {
      const event = toEvent(row);
      if (!event.problem && previous?.instance === row.instance && previous.seq === row.seq)
        event.problem = `a second event is stored as #${event.seq} (inserted)`;
      events.push(event);
      read++;
      previous = row;
      if (event.problem) {
        yield events;
        return;
      }
    }
    yield events;
  }
  whole?.(read);
}
