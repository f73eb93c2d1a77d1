// Rate limits per rule, principal and tool, kept in the shared store so that every gateway instance draws on one
// bucket: behind a load balancer a per-instance limit would be multiplied by the number of instances.
//
// A token bucket: it holds up to `requests` tokens and refills continuously at `requests` per `perMs`; a call takes
// one token or is refused with the time until one is back. The bucket is one store entry updated by compare-and-set,
// so two instances taking at once cannot both spend the last token.
import { createHash } from 'node:crypto';
import { slowedRefusal } from '../held/index.js';
import {
  CorruptDataError,
  InvalidArgumentError,
  type RoundRefused,
  StoreContendedError,
} from '../protocol/index.js';
import type { SharedStore } from '../stores/index.js';

/** A limit: at most `requests` calls in any `perMs`, and bursts of up to `requests` after an idle spell. */
export interface RateLimit {
  readonly requests: number;
  readonly perMs: number;
}

export type RateDecision = { readonly ok: true } | { readonly ok: false; readonly retryAfterMs: number };

export interface RateLimiterOptions {
  /** The clock buckets refill by (default Date.now). Instances sharing a store should share a clock source (NTP). */
  now?: () => number;
}

/** Where buckets live in the store. */
export const RATE_KEY_PREFIX = 'mrtr/gateway/rate/';

/**
 * Compare-and-set attempts before giving up. Each round of contention lets at least one taker through (or shows the
 * bucket empty, which needs no write), so this many concurrent takers on one bucket always finish.
 */
const MAX_ATTEMPTS = 64;

/**
 * Tokens are fractions (4 s of a 6 s refill is 0.666…), and a fraction's rounding must not refuse a token that is
 * back or add a millisecond to the wait: below this, a difference is rounding, not time.
 */
const ROUNDING = 1e-9;

/** The key of a bucket made of several parts (rule, principal, tool): unambiguous whatever the parts hold. */
export function rateKey(...parts: readonly string[]): string {
  return JSON.stringify(parts);
}

/** What a bucket entry holds: the tokens left at `at` (ms on the limiter's clock). */
interface Bucket {
  readonly tokens: number;
  readonly at: number;
}

export class RateLimiter {
  readonly #store: SharedStore;
  readonly #now: () => number;

  constructor(store: SharedStore, options: RateLimiterOptions = {}) {
    this.#store = store;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Take one token from the bucket named `key` under `limit`.
   * @throws the store's error (StoreUnavailableError) when it fails: the caller refuses the round (fail closed).
   * @throws MrtrError ERR_STORE_CONTENDED when the bucket kept changing under every attempt, ERR_CORRUPT_DATA when
   *   its entry is not one this limiter wrote, ERR_INVALID_ARGUMENT for a limit that is not positive.
   */
  async take(key: string, limit: RateLimit): Promise<RateDecision> {
    checkLimit(limit);
    const storeKey = RATE_KEY_PREFIX + createHash('sha256').update(key).digest('base64url');
    // Idle buckets vanish once they would have refilled anyway: an absent bucket is a full one.
    const ttlMs = Math.max(1, Math.ceil(limit.perMs * 2));
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const entry = await this.#store.get(storeKey);
      const now = this.#now();
      const bucket = entry ? readBucket(entry.value, this.#store.description) : undefined;
      const tokens = bucket ? refilled(bucket, now, limit) : limit.requests;
      if (tokens < 1 - ROUNDING) {
        // Refused calls write nothing: a caller hammering an empty bucket costs one read each.
        const waitMs = ((1 - tokens) * limit.perMs) / limit.requests;
        return { ok: false, retryAfterMs: Math.max(1, Math.ceil(waitMs - ROUNDING)) };
      }
      // Never move `at` backwards: an instance whose clock lags must not make another count the same time twice.
      const value = JSON.stringify({
        tokens: Math.max(0, tokens - 1),
        at: Math.max(now, bucket?.at ?? now),
      } satisfies Bucket);
      const written = entry
        ? await this.#store.replace(storeKey, entry.version, value, ttlMs)
        : await this.#store.create(storeKey, value, ttlMs);
      if (written) return { ok: true };
    }
    throw new StoreContendedError(`rate-limit bucket kept changing over ${MAX_ATTEMPTS} attempts`);
  }
}

/** Tokens in the bucket at `now`: what was left plus the refill since, up to the capacity. */
function refilled(bucket: Bucket, now: number, limit: RateLimit): number {
  const elapsed = Math.max(0, now - bucket.at);
  return Math.min(limit.requests, bucket.tokens + (elapsed * limit.requests) / limit.perMs);
}

function readBucket(value: string, store: string): Bucket {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    parsed = undefined;
  }
  const bucket = parsed as Partial<Bucket> | undefined;
  if (!bucket || !Number.isFinite(bucket.tokens) || !Number.isFinite(bucket.at))
    throw new CorruptDataError(`a rate-limit bucket in store ${store} is not one mrtr wrote`);
  return bucket as Bucket;
}

function checkLimit(limit: RateLimit): void {
  if (!Number.isSafeInteger(limit.requests) || limit.requests < 1)
    throw new InvalidArgumentError(`rate limit requests must be a positive integer, got ${limit.requests}`);
  if (!Number.isFinite(limit.perMs) || limit.perMs <= 0)
    throw new InvalidArgumentError(`rate limit perMs must be a positive number, got ${limit.perMs}`);
}

/**
 * The refusal for a call past its limit: JSON-RPC Invalid Request whose message ends "retry in N s", with
 * `retryAfterSeconds` in its data, HTTP 429 and a `Retry-After` header, all in whole seconds (rounded up, at least 1:
 * a client told 0 would retry at once). The same refusal the held answers' fair shares give, so clients see one form of "slow down".
 */
export function rateLimited(retryAfterMs: number, message: string): RoundRefused {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  // In the message too: a person reads the message, and many clients show nothing else of an error.
  return slowedRefusal('rate_limited', `${message}; retry in ${seconds} s`, seconds);
}
