// keyPages: every row of a table read by its (instance, seq) key, once and in order, whatever the page size, even
// where someone has stored two rows under one key (the verifier must see both).
import { describe, expect, it } from 'vitest';
import { keyPages } from '../../src/audit/key-pages.js';

interface Row {
  instance: string;
  seq: number;
  n: number;
}

/** A table read as SQL would: rows at or after `from`'s key, in key order, at most `limit`. */
function table(rows: Row[]) {
  const sorted = [...rows].sort((a, b) =>
    a.instance < b.instance ? -1 : a.instance > b.instance ? 1 : a.seq - b.seq || a.n - b.n,
  );
  const reads: number[] = [];
  const read = (from: Row | undefined, limit: number) => {
    reads.push(limit);
    const at = from
      ? sorted.filter(
          (r) => r.instance > from.instance || (r.instance === from.instance && r.seq >= from.seq),
        )
      : sorted;
    return at.slice(0, limit);
  };
  return { sorted, read, reads };
}

async function all(pages: AsyncIterable<Row[]>, pageSize: number): Promise<Row[]> {
  const out: Row[] = [];
  for await (const page of pages) {
    expect(page.length).toBeGreaterThan(0);
    expect(page.length).toBeLessThanOrEqual(pageSize);
    out.push(...page);
  }
  return out;
}

const rows = (spec: Array<[string, number]>): Row[] =>
  spec.map(([instance, seq], n) => ({ instance, seq, n }));

describe('keyPages', () => {
  it('gives every row once, in order, at every page size', async () => {
    // Neighbours of two writers under the same seq (a 1, b 1; c 2, d 2): a key is both parts.
    const t = table(
      rows([
        ['a', 1],
        ['b', 1],
        ['b', 2],
        ['c', 1],
        ['c', 2],
        ['d', 2],
        ['d', 3],
      ]),
    );
    for (let size = 1; size <= 8; size++) expect(await all(keyPages(t.read, size), size)).toEqual(t.sorted);
  });

  it('gives both rows stored under one key, wherever a page ends, and a run of them longer than a page', async () => {
    const t = table(
      rows([
        ['a', 1],
        ['a', 2],
        ['a', 2],
        ['a', 3],
        ['b', 1],
        ['b', 1],
        ['b', 1],
        ['b', 1],
        ['b', 2],
      ]),
    );
    for (let size = 1; size <= 10; size++) {
      const got = await all(keyPages(t.read, size), size);
      expect(
        got.map((r) => r.n).sort((x, y) => x - y),
        `page size ${size}`,
      ).toEqual(t.sorted.map((r) => r.n).sort((x, y) => x - y));
      expect(got.map((r) => `${r.instance}${r.seq}`)).toEqual(t.sorted.map((r) => `${r.instance}${r.seq}`));
    }
  });

  it('reads nothing more once a page comes back short, and an empty table in one read', async () => {
    const t = table(
      rows([
        ['a', 1],
        ['a', 2],
        ['a', 3],
      ]),
    );
    await all(keyPages(t.read, 2), 2);
    expect(t.reads).toEqual([2, 3]);
    const empty = table([]);
    expect(await all(keyPages(empty.read, 5), 5)).toEqual([]);
    expect(empty.reads).toEqual([5]);
  });

  it('refuses a table that does not read back in its key order, instead of dropping rows', async () => {
    const given = rows([
      ['a', 1],
      ['a', 2],
    ]);
    // The second read starts at another key than the one the first ended at: its writer, its seq, or both differ.
    for (const [instance, seq] of [
      ['b', 2],
      ['a', 3],
      ['b', 1],
    ] as const) {
      const read = (from: Row | undefined) => (from ? [{ instance, seq, n: 9 }, given[1]!] : given);
      await expect(all(keyPages(read, 2), 2), `${instance} ${seq}`).rejects.toThrow(
        'the events table does not read back in (instance, seq) order at "a" #2: it was edited',
      );
    }
  });
});
