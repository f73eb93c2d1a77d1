// Where the vault keeps things in a SharedStore, which has no listing: a record per (owner, connection), an index per
// owner (the connections they hold), and one record of how many owners hold each connection, for the admin. Index and
// counts change by compare-and-set; whoever adds a name to an owner's index counts it, whoever takes it out uncounts
// it, so the counts follow the indexes however many instances write at once. Both note the day each grant expires,
// so a grant nobody comes back for leaves the counts by itself.
import { createHash } from 'node:crypto';
import { StoreContendedError } from '../protocol/index.js';
import type { SharedStore } from '../stores/index.js';

const PREFIX = 'mrtr:connections-vault';
/** Conflicting writers one change outlasts; more means something is wrong, not busy. */
const MAX_ATTEMPTS = 64;
const DAY_MS = 24 * 3600 * 1000;

// Store keys are digests, never the raw subject: the store's keys show in its tools and logs. The digest is not keyed
// by the keyring, so the same person's records are found again after a key rotation.
function digest(...parts: string[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url');
}

/** The store key of (owner, connection)'s grant. */
export function grantKey(issuer: string, subject: string, connection: string): string {
  return `${PREFIX}:grant:${digest(`${PREFIX}/grant`, issuer, subject, connection)}`;
}

/** The store key of an owner's index (the names of the connections they hold). */
export function indexKey(issuer: string, subject: string): string {
  return `${PREFIX}:owner:${digest(`${PREFIX}/owner`, issuer, subject)}`;
}

export const COUNTS_KEY = `${PREFIX}:counts`;

/** `change` returns this to leave the entry as it is (no write). */
export const UNCHANGED = Symbol('unchanged');

/**
 * Compare-and-set `key` to `change(current)`, read again and retried when another writer came first. `change` returns
 * the new value and its time to live, undefined to remove the entry, or UNCHANGED. True when this call wrote.
 */
export async function update(
  store: SharedStore,
  key: string,
  change: (current: string | undefined) => [value: string, ttlMs: number] | undefined | typeof UNCHANGED,
): Promise<boolean> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const entry = await store.get(key);
    const next = change(entry?.value);
    if (next === UNCHANGED) return false;
    if (next === undefined && !entry) return false;
    const written =
      next === undefined
        ? await store.remove(key, entry!.version)
        : entry
          ? await store.replace(key, entry.version, ...next)
          : await store.create(key, ...next);
    if (written) return true;
  }
  throw new StoreContendedError(`connections vault: too many conflicting writes to ${key}`);
}

/** An owner's index: each connection they hold, and the day its grant expires (see `dayOf`). */
type Index = Record<string, number>;
/** The counts: for each connection, how many grants expire on each day. */
type Counts = Record<string, Record<string, number>>;

/**
 * The day a grant expiring at `expiresAt` ends: counted until that day is over, so a grant that expires unread leaves
 * the counts within a day, with nobody to take it out. A day, not the instant, keeps the counts record small.
 */
function dayOf(expiresAt: number): number {
  return Math.ceil(expiresAt / DAY_MS);
}

function parseObject(value: string | undefined): Record<string, unknown> {
  if (value === undefined) return {};
  try {
    const parsed: unknown = JSON.parse(value);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** The entries of an index or a counts bucket still alive at `now`. Own properties only, whatever the name. */
function liveDays(value: Record<string, unknown>, now: number): Record<string, number> {
  return Object.fromEntries(
    Object.entries(value).filter(
      (e): e is [string, number] => Number.isInteger(e[1]) && (e[1] as number) * DAY_MS > now,
    ),
  );
}

/** Until the last of `days` is over: how long a record of them must live. */
function ttlFor(days: number[], now: number): number {
  return Math.max(1, Math.max(...days) * DAY_MS - now);
}

/** The connection names in an owner's index whose grants may still be alive. */
export async function indexed(store: SharedStore, key: string, now: number): Promise<string[]> {
  return Object.keys(liveDays(parseObject((await store.get(key))?.value), now)).sort();
}

/** Note in the index at `key` that the owner holds `connection` until `expiresAt`, and count it on that day. */
export async function addToIndex(
  store: SharedStore,
  key: string,
  connection: string,
  expiresAt: number,
  now: number,
): Promise<void> {
  const day = dayOf(expiresAt);
  let before: number | undefined;
  await update(store, key, (current) => {
    const index: Index = liveDays(parseObject(current), now);
    before = index[connection];
    // The same day: the index already lives long enough, and the counts are right.
    if (before === day) return UNCHANGED;
    index[connection] = day;
    return [JSON.stringify(index), ttlFor(Object.values(index), now)];
  });
  if (before !== day) await count(store, connection, before, day, now);
}

/** Take `connection` out of the index at `key`; uncounted when this call took it out. */
export async function dropFromIndex(
  store: SharedStore,
  key: string,
  connection: string,
  now: number,
): Promise<void> {
  let before: number | undefined;
  await update(store, key, (current) => {
    const index: Index = liveDays(parseObject(current), now);
    before = index[connection];
    if (before === undefined) return UNCHANGED;
    delete index[connection];
    const days = Object.values(index);
    return days.length === 0 ? undefined : [JSON.stringify(index), ttlFor(days, now)];
  });
  if (before !== undefined) await count(store, connection, before, undefined, now);
}

/** How many owners hold each connection now. */
export async function readCounts(store: SharedStore, now: number): Promise<Record<string, number>> {
  const counts = parseCounts((await store.get(COUNTS_KEY))?.value, now);
  const totals: Array<[string, number]> = Object.entries(counts).map(([connection, days]) => [
    connection,
    Object.values(days).reduce((sum, n) => sum + n, 0),
  ]);
  return Object.fromEntries(totals.filter(([, n]) => n > 0));
}

/** Move one owner of `connection` from the day `from` to the day `to` (either absent: counted in, or out). */
async function count(
  store: SharedStore,
  connection: string,
  from: number | undefined,
  to: number | undefined,
  now: number,
): Promise<void> {
  await update(store, COUNTS_KEY, (current) => {
    const counts = parseCounts(current, now);
    const days = counts[connection] ?? {};
    if (from !== undefined && (days[from] ?? 0) > 0) days[from] = days[from]! - 1;
    if (to !== undefined && to * DAY_MS > now) days[to] = (days[to] ?? 0) + 1;
    const left = Object.entries(days).filter(([, n]) => n > 0);
    if (left.length > 0) counts[connection] = Object.fromEntries(left);
    else delete counts[connection];
    const last = Object.values(counts).flatMap((d) => Object.keys(d).map(Number));
    return last.length === 0 ? undefined : [JSON.stringify(counts), ttlFor(last, now)];
  });
}

function parseCounts(value: string | undefined, now: number): Counts {
  const counts: Counts = {};
  for (const [connection, days] of Object.entries(parseObject(value))) {
    if (days === null || typeof days !== 'object') continue;
    const alive = Object.entries(days as Record<string, unknown>).filter(
      (e): e is [string, number] =>
        Number(e[0]) * DAY_MS > now && Number.isInteger(e[1]) && (e[1] as number) > 0,
    );
    if (alive.length > 0) counts[connection] = Object.fromEntries(alive);
  }
  return counts;
}
