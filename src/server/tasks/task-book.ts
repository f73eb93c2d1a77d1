// Task records in the shared store, so any instance answers tasks/get and takes a task's next round. Every change is
// a compare-and-set on the record, so two instances (or a round ending while a cancel arrives) never lose a write.
import { randomBytes } from 'node:crypto';
import { CorruptDataError, StoreContendedError } from '../../protocol/index.js';
import type { SharedStore } from '../../stores/index.js';
import type { TaskRecord } from './record.js';

const KEY = (id: string) => `mrtr:task:${id}`;
/** A conflicting writer per attempt at most; more means something is wrong, not busy. */
const MAX_ATTEMPTS = 16;

/**
 * 32 random bytes: a task id is a bearer handle for whoever holds it, so nobody may guess or enumerate one. Never
 * one that starts with `-`: a person pastes it into `mrtr task get <id>`, where it would read as an option (one id
 * in 64 did; a test caught it). Drawing again costs a fiftieth of a bit.
 */
export function newTaskId(): string {
  for (;;) {
    const id = randomBytes(32).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

/** Task ids are 43 base64url characters; anything else is not a task of this server, refused before the store. */
export function looksLikeTaskId(id: unknown): id is string {
  return typeof id === 'string' && /^[A-Za-z0-9_-]{43}$/.test(id);
}

export class TaskBook {
  constructor(
    private readonly store: SharedStore,
    private readonly now: () => number = Date.now,
  ) {}

  /** Stored durably before the creating call is answered: tasks/get for its id resolves at once, anywhere. */
  async create(record: TaskRecord): Promise<void> {
    if (!(await this.store.create(KEY(record.id), JSON.stringify(record), this.ttlOf(record))))
      throw new CorruptDataError(`task id collision: ${record.id}`);
  }

  /** Take back a record whose task was refused after it was written (nobody was told its id; it never ran). */
  async discard(id: string): Promise<void> {
    const entry = await this.store.get(KEY(id));
    if (entry) await this.store.remove(KEY(id), entry.version);
  }

  async get(id: string): Promise<TaskRecord | undefined> {
    const entry = await this.store.get(KEY(id));
    return entry ? (JSON.parse(entry.value) as TaskRecord) : undefined;
  }

  /**
   * Change a record with `change` (which returns the new record, or undefined to leave it): read, change, and
   * compare-and-set, again on a conflicting write. Returns the record as stored afterwards and whether this call
   * changed it; undefined when the task is gone (expired).
   */
  async update(
    id: string,
    change: (record: TaskRecord) => TaskRecord | undefined,
  ): Promise<{ record: TaskRecord; changed: boolean } | undefined> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const entry = await this.store.get(KEY(id));
      if (!entry) return undefined;
      const record = JSON.parse(entry.value) as TaskRecord;
      const next = change(record);
      if (next === undefined) return { record, changed: false };
      const ttl = this.ttlOf(next);
      if (await this.store.replace(KEY(id), entry.version, JSON.stringify(next), ttl))
        return { record: next, changed: true };
    }
    throw new StoreContendedError(`task ${id}: too many conflicting writes`);
  }

  /** The record lives as long as the task's ttlMs from its creation (at least a millisecond more to be stored). */
  private ttlOf(record: TaskRecord): number {
    return Math.max(1, record.createdAt + record.ttlMs - this.now());
  }
}
