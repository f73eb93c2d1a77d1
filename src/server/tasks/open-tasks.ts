// Each principal's unfinished tasks, counted in the shared store beside the tasks. A task lives a day by default and
// costs a record in the store and a timer on some instance; without a bound, one principal starting tasks in a loop
// fills the store for everyone. The count is one list per principal ([id, expiresAt] pairs), changed by
// compare-and-set, so every instance of a fleet sees the same count.
import { createHash } from 'node:crypto';
import { ErrorCode, RoundRefused, StoreContendedError } from '../../protocol/index.js';
import type { SharedStore } from '../../stores/index.js';
import type { Principal } from '../context.js';
import { isTerminal } from './record.js';
import type { TaskBook } from './task-book.js';

const KEY = (owner: string) => `mrtr:tasks-of:${owner}`;
/** A conflicting writer per attempt at most; more means something is wrong, not busy. */
const MAX_ATTEMPTS = 16;
/** How long a principal at its limit is asked to wait: a task ends when a person or a long job is done. */
const RETRY_AFTER_SECONDS = 30;
/** Principals whose full list this instance found all open, remembered at most (the oldest is forgotten first). */
const MAX_VERIFIED = 10_000;

type Entry = [id: string, expiresAt: number];

/**
 * The bucket a principal's tasks are counted in: the person (issuer and subject), whatever the client — a new
 * client_id is one dynamic registration away, so counting per client would let one person multiply the limit (a task
 * itself stays bound to its client too: task-service.ts). Callers without a principal (no authentication) share one
 * bucket, as they share the refusal limit's.
 */
export function ownerOf(principal: Principal | null | undefined): string {
  if (!principal) return 'anonymous';
  const who = JSON.stringify([principal.issuer ?? null, principal.subject]);
  return createHash('sha256').update(who).digest('base64url');
}

/** What a principal at its limit is told: 429 with Retry-After over HTTP, the count and the limit in the message. */
export function tooManyTasks(count: number, limit: number): RoundRefused {
  return new RoundRefused('too_many_tasks', {
    code: ErrorCode.InvalidRequest,
    message: `Too many unfinished tasks: ${count} of yours are still running or waiting here (limit ${limit}); let some finish or cancel them (tasks/cancel), then retry after ${RETRY_AFTER_SECONDS} s`,
    data: { retryAfterSeconds: RETRY_AFTER_SECONDS, limit },
    httpStatus: 429,
    httpHeaders: { 'retry-after': String(RETRY_AFTER_SECONDS) },
  });
}

export class OpenTasks {
  constructor(
    private readonly store: SharedStore,
    private readonly book: TaskBook,
    /** Unfinished tasks one principal may have. */
    readonly limit: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Lists this instance re-checked in full and found all open: the list's store version then, and until when that
   * stands. A principal at its limit calling again and again costs one read per call, not one per listed task; a
   * change to its list (a task ended or expired, on any instance) changes the version, and a task whose end was
   * never written is found at the next full re-check, at most Retry-After later.
   */
  private readonly verified = new Map<string, { version: number; until: number }>();

  /**
   * Refuse (tooManyTasks) when `owner` is at the limit already: a cheap read before a round runs, so a principal at
   * its limit is turned away before its call does any work. `add` decides for good.
   */
  async check(owner: string): Promise<void> {
    const entry = await this.store.get(KEY(owner));
    if (!entry) return;
    const live = this.unexpired(JSON.parse(entry.value) as Entry[]);
    if (live.length < this.limit) return;
    if (this.stillVerified(owner, entry.version)) throw tooManyTasks(live.length, this.limit);
    // Tasks that ended are dropped when they end; one whose end was not written (an instance died) is found here.
    const open = await this.stillOpen(live);
    if (open.length >= this.limit) throw this.full(owner, entry.version, open.length);
  }

  /** Count task `id` for `owner` until it ends or expires; tooManyTasks when `owner` is at the limit. */
  async add(owner: string, id: string, expiresAt: number): Promise<void> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const entry = await this.store.get(KEY(owner));
      let list = entry ? this.unexpired(JSON.parse(entry.value) as Entry[]) : [];
      if (entry && list.length >= this.limit) {
        if (this.stillVerified(owner, entry.version)) throw tooManyTasks(list.length, this.limit);
        list = await this.stillOpen(list);
        if (list.length >= this.limit) throw this.full(owner, entry.version, list.length);
      }
      list.push([id, expiresAt]);
      if (await this.write(owner, entry?.version, list)) return;
    }
    throw new StoreContendedError('task count: too many conflicting writes');
  }

  /** Stop counting task `id` (it ended). */
  async remove(owner: string, id: string): Promise<void> {
    this.verified.delete(owner);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const entry = await this.store.get(KEY(owner));
      if (!entry) return;
      const list = this.unexpired(JSON.parse(entry.value) as Entry[]).filter(([known]) => known !== id);
      if (await this.write(owner, entry.version, list)) return;
    }
    throw new StoreContendedError('task count: too many conflicting writes');
  }

  private stillVerified(owner: string, version: number): boolean {
    const known = this.verified.get(owner);
    if (known && known.version === version && known.until > this.now()) return true;
    if (known) this.verified.delete(owner);
    return false;
  }

  /** The list at `version` was re-checked and is all open: remembered, and the refusal to throw. */
  private full(owner: string, version: number, count: number): RoundRefused {
    this.verified.delete(owner);
    if (this.verified.size >= MAX_VERIFIED) {
      const oldest = this.verified.keys().next().value;
      if (oldest !== undefined) this.verified.delete(oldest);
    }
    this.verified.set(owner, { version, until: this.now() + RETRY_AFTER_SECONDS * 1000 });
    return tooManyTasks(count, this.limit);
  }

  private unexpired(list: Entry[]): Entry[] {
    const now = this.now();
    return list.filter(([, expiresAt]) => expiresAt > now);
  }

  /** The entries whose task is still in the store and not ended (one read each: only when at the limit). */
  private async stillOpen(list: Entry[]): Promise<Entry[]> {
    const open: Entry[] = [];
    for (const entry of list) {
      const record = await this.book.get(entry[0]);
      if (record && !isTerminal(record.status)) open.push(entry);
    }
    return open;
  }

  /** Compare-and-set the list (create it when there was none); it lives as long as its longest-lived task. */
  private write(owner: string, version: number | undefined, list: Entry[]): Promise<boolean> {
    const ttl = Math.max(1, ...list.map(([, expiresAt]) => expiresAt - this.now()));
    const value = JSON.stringify(list);
    return version === undefined
      ? this.store.create(KEY(owner), value, ttl)
      : this.store.replace(KEY(owner), version, value, ttl);
  }
}
