// Constrained retries: refused presentations (bad, replayed or stale state; answers invalid past their limit) are
// counted per principal in the shared store, so an agent stuck in a retry loop, or one probing states, is slowed
// across the whole fleet — not per instance, where a load balancer would spread its attempts thin.
import { createHash } from 'node:crypto';
import { ErrorCode, RoundRefused } from '../protocol/index.js';
import { OPEN_FAILURE_REASONS } from '../state/index.js';
import type { SharedStore } from '../stores/index.js';
import type { GuardPrincipal, ScreenedRound } from './guarded.js';

export interface RefusalLimitOptions {
  /** Refusals a principal may collect per window before its rounds get 429 (default 30). */
  maxRefusals?: number;
  /** The window, fixed and aligned to the clock (default 60 s). */
  windowMs?: number;
  now?: () => number;
}

export const REFUSAL_LIMIT_DEFAULTS = Object.freeze({
  /** A person mistyping or a client retrying a dropped connection stays far below; a loop or a prober does not. */
  maxRefusals: 30,
  windowMs: 60_000,
});

/**
 * What counts against a caller: a state that did not open, a replayed, stale or finished one, and answers invalid
 * past their limit. Not an outage of ours (store_unavailable), a slow first attempt (still_running), or the limit
 * itself.
 */
export const COUNTED_REFUSALS: ReadonlySet<string> = new Set([
  ...OPEN_FAILURE_REASONS,
  'replayed',
  'stale_round',
  'flow_completed',
  'invalid_answers',
]);

/** Principals' bucket keys already hashed: every round of a caller asks for the same one. Bounded: cleared when full. */
const hashedKeys = new Map<string, string>();
const HASHED_KEYS_MAX = 4096;

/** One bucket per principal; callers without one (no authentication configured) share the `anonymous` bucket. */
function principalKey(principal: GuardPrincipal | undefined): string {
  if (!principal) return 'anonymous';
  const who = `${principal.issuer ?? ''}\n${principal.subject}`;
  let key = hashedKeys.get(who);
  if (key === undefined) {
    key = createHash('sha256').update(who).digest('base64url').slice(0, 22);
    if (hashedKeys.size >= HASHED_KEYS_MAX) hashedKeys.clear();
    hashedKeys.set(who, key);
  }
  return key;
}

export class RefusalLimit {
  readonly #store: SharedStore;
  readonly #max: number;
  readonly #windowMs: number;
  readonly #now: () => number;

  constructor(store: SharedStore, options: RefusalLimitOptions = {}) {
    this.#store = store;
    this.#max = options.maxRefusals ?? REFUSAL_LIMIT_DEFAULTS.maxRefusals;
    this.#windowMs = options.windowMs ?? REFUSAL_LIMIT_DEFAULTS.windowMs;
    this.#now = options.now ?? Date.now;
  }

  /** Before the round's state is opened: a principal past its limit is slowed with 429 and Retry-After. */
  async screen(round: ScreenedRound): Promise<void> {
    const { key, retryAfterMs } = this.#bucket(round.principal);
    let count: number;
    try {
      count = (await this.#store.get(key))?.version ?? 0;
    } catch (error) {
      throw new RoundRefused(
        'store_unavailable',
        { code: ErrorCode.InternalError, message: 'Internal error: replay store unavailable' },
        { cause: error },
      );
    }
    if (count < this.#max) return;
    const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
    throw new RoundRefused('rate_limited', {
      code: ErrorCode.InvalidRequest,
      message: `Too many refused requests: ${count} in the current ${this.#windowMs / 1000} s window (limit ${this.#max}); retry after ${seconds} s`,
      data: { limit: this.#max, windowMs: this.#windowMs, retryAfterSeconds: seconds },
      httpStatus: 429,
      httpHeaders: { 'retry-after': String(seconds) },
    });
  }

  /** Count one refusal against the round's principal. Never throws: counting must not change the answer. */
  async refused(round: ScreenedRound, reason: string): Promise<void> {
    if (!COUNTED_REFUSALS.has(reason)) return;
    const { key, retryAfterMs } = this.#bucket(round.principal);
    try {
      await this.#store.increment(key, retryAfterMs);
    } catch {
      // The store is down: the refusal stands and rounds fail closed until it is back.
    }
  }

  #bucket(principal: GuardPrincipal | undefined): { key: string; retryAfterMs: number } {
    const now = this.#now();
    const window = Math.floor(now / this.#windowMs);
    return {
      key: `mrtr:refusals:${principalKey(principal)}:${window}`,
      retryAfterMs: (window + 1) * this.#windowMs - now,
    };
  }
}
