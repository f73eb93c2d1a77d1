// A pending connect: one per (flow, connection) in the shared store, its id derived from the flow id (as step-up's),
// so every instance and every round of the call finds the same one. The authorization requests each one starts are
// kept by connect-pending.ts.
import { createHash } from 'node:crypto';
import { StoreContendedError } from '../protocol/index.js';
import type { SharedStore } from '../stores/index.js';
import type { ConnectionRefusedReason } from './errors.js';
import type { ConnectionOwner } from './types.js';

export interface ConnectRecord {
  readonly id: string;
  readonly connection: string;
  readonly flowId: string;
  /** Who the question was minted for: only they may use the link. */
  readonly owner: ConnectionOwner;
  readonly createdAt: number;
  readonly state: 'pending' | 'done' | 'failed';
  readonly settledAt?: number;
  /** Why the authorization server gave no token (state `failed`). */
  readonly reason?: ConnectionRefusedReason;
  readonly message?: string;
}

const recordKey = (id: string) => `mrtr/connect/${id}`;

export const connectIdOf = (flowId: string, connection: string): string =>
  createHash('sha256').update(`mrtr/connect\n${flowId}\n${connection}`).digest('base64url').slice(0, 22);

export const isConnectId = (id: string): boolean => /^[A-Za-z0-9_-]{22}$/.test(id);

export async function readConnect(store: SharedStore, id: string): Promise<ConnectRecord | undefined> {
  if (!isConnectId(id)) return undefined;
  const entry = await store.get(recordKey(id));
  return entry ? (JSON.parse(entry.value) as ConnectRecord) : undefined;
}

/** The pending connect for (flow, connection), created when there is none yet. */
export async function openConnect(
  store: SharedStore,
  fresh: Omit<ConnectRecord, 'id' | 'state'>,
  ttlMs: number,
): Promise<ConnectRecord> {
  const id = connectIdOf(fresh.flowId, fresh.connection);
  const existing = await readConnect(store, id);
  if (existing) return existing;
  const record: ConnectRecord = { ...fresh, id, state: 'pending' };
  await store.create(recordKey(id), JSON.stringify(record), ttlMs);
  // Another round may have created it first: theirs is the one.
  return (await readConnect(store, id)) ?? record;
}

/** Move the record to `next` (done, failed, or pending again); false when it is gone (expired). */
export async function settleConnect(
  store: SharedStore,
  id: string,
  next: Pick<ConnectRecord, 'state' | 'reason' | 'message' | 'settledAt'>,
  ttlMs: number,
): Promise<boolean> {
  for (let i = 0; i < 10; i++) {
    const entry = await store.get(recordKey(id));
    if (!entry) return false;
    const { reason: _r, message: _m, settledAt: _s, ...current } = JSON.parse(entry.value) as ConnectRecord;
    const updated: ConnectRecord = { ...current, ...withoutUndefined(next) };
    if (await store.replace(recordKey(id), entry.version, JSON.stringify(updated), ttlMs)) return true;
  }
  throw new StoreContendedError('connect record could not be updated');
}

const withoutUndefined = <T extends object>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
