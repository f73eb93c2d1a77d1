// Reading a table of events a page at a time by its key, (instance, seq). Each page starts at the last key read —
// not after it — and leaves out the rows with that key it has already given. A key is unique in the table as mrtr
// makes it, but someone who edits the database can drop that constraint and add a second row under a key: starting
// after the key would then skip that row whenever it fell at a page's edge, and the verifier would never see it.
// This way every row is given, and a duplicate always reaches the verifier beside the row it copies.
import { AuditError } from './errors.js';

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

/** The same pages, each row mapped. */
export async function* mapPages<R, T>(pages: AsyncIterable<R[]>, map: (row: R) => T): AsyncIterable<T[]> {
  for await (const page of pages) yield page.map(map);
}
