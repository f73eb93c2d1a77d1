// The one contract every shared store keeps (memory, SQLite, Redis). Guards build their records on these few atomic
// operations, so a rule written once holds on every store, and a store is tested once by the contract suite.
import { InvalidArgumentError, MrtrError } from '../protocol/index.js';

/** A stored value and its version: a compare-and-set names the version it read. */
export interface StoredEntry {
  readonly value: string;
  readonly version: number;
}

export interface SharedStore {
  /** Shown in logs and start-up messages (`memory`, `sqlite:/path`, `redis://host:port/db`), never a password. */
  readonly description: string;
  /** The entry under `key`, or undefined when it is absent or expired. */
  get(key: string): Promise<StoredEntry | undefined>;
  /** Store `value` under `key` only if the key is absent (or expired); true when this call created it. */
  create(key: string, value: string, ttlMs: number): Promise<boolean>;
  /** Replace the entry only if its version is still `version`; true when replaced. The new version is version + 1. */
  replace(key: string, version: number, value: string, ttlMs: number): Promise<boolean>;
  /** Delete the entry only if its version is still `version`. */
  remove(key: string, version: number): Promise<boolean>;
  /**
   * Add one to a counter and return its new value. The counter's expiry is set when it is created and never
   * extended, so a fixed window ends on time however often it is counted.
   */
  increment(key: string, ttlMs: number): Promise<number>;
  /** Release connections and file handles. The store refuses every call afterwards. */
  close(): Promise<void>;
  /**
   * News between the instances sharing the store, at once (Redis pub/sub). Absent on stores one process or one
   * machine uses (memory, SQLite): there in-process news is all there is.
   */
  readonly channel?: StoreChannel;
}

/** Messages to every instance listening now: a message sent while one is not listening is lost to it. */
export interface StoreChannel {
  /** Tell every instance listening on `topic`, this one included. */
  publish(topic: string, message: string): Promise<void>;
  /** Listen on `topic`: resolves once listening, with the way to stop. */
  subscribe(topic: string, onMessage: (message: string) => void): Promise<() => Promise<void>>;
}

/** The store could not be reached or answered with an error: guarded rounds fail closed. */
export class StoreUnavailableError extends MrtrError {
  override readonly name = 'StoreUnavailableError';
  declare readonly code: 'ERR_STORE_UNAVAILABLE';
  constructor(description: string, cause: unknown) {
    super(
      'ERR_STORE_UNAVAILABLE',
      `store ${description} is unavailable: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
  }
}

/** Keys and values are strings of bounded size: a store is not a blob store. */
export const STORE_LIMITS = Object.freeze({
  maxKeyBytes: 512,
  /** Largest value a store accepts (a cached answer is capped below this by its guard). */
  maxValueBytes: 1024 * 1024,
});

/** Throws ERR_INVALID_ARGUMENT naming the problem when a caller breaks the contract (a bug, not an outage). */
export function checkEntry(key: string, value?: string, ttlMs?: number): void {
  if (typeof key !== 'string' || key.length === 0 || Buffer.byteLength(key) > STORE_LIMITS.maxKeyBytes)
    throw new InvalidArgumentError(
      `store key must be a non-empty string of at most ${STORE_LIMITS.maxKeyBytes} bytes`,
    );
  if (value !== undefined && Buffer.byteLength(value) > STORE_LIMITS.maxValueBytes)
    throw new InvalidArgumentError(`store value exceeds ${STORE_LIMITS.maxValueBytes} bytes`);
  if (ttlMs !== undefined && !(Number.isInteger(ttlMs) && ttlMs > 0))
    throw new InvalidArgumentError(`store ttlMs must be a positive integer, got ${ttlMs}`);
}
