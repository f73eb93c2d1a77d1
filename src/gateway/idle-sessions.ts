// A 2025 upstream's sessions that ended their call well, kept open for the next call: it then costs one request, not
// an initialize handshake first. Kept by credential and by caller (a session holds state, so one caller's never serves
// another), bounded, and closed once idle too long, so a burst long past does not keep the upstream's sessions open.

/** What the pool keeps: anything it can close (an McpClient, one session each). */
export interface Closable {
  close(): Promise<void>;
}

interface Idle<T> {
  readonly key: string;
  readonly session: T;
  readonly since: number;
}

export interface IdleSessionsOptions {
  /** Sessions kept in all, every credential together; past it the longest idle is closed. */
  readonly max: number;
  /** A session idle this long is closed instead of reused (ms). */
  readonly maxIdleMs: number;
  readonly now?: () => number;
}

export class IdleSessions<T extends Closable> {
  /** Oldest first: the next call takes the newest of its key (warm), the bound closes the oldest. */
  #idle: Array<Idle<T>> = [];
  readonly #now: () => number;

  constructor(private readonly options: IdleSessionsOptions) {
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#idle.length;
  }

  /** The most recently idle session kept for `key` (taken out of the pool), else undefined. */
  take(key: string, usable: (session: T) => boolean = () => true): T | undefined {
    this.#closeStale();
    for (let i = this.#idle.length - 1; i >= 0; i--) {
      const idle = this.#idle[i] as Idle<T>;
      if (idle.key !== key) continue;
      this.#idle.splice(i, 1);
      if (usable(idle.session)) return idle.session;
    }
    return undefined;
  }

  /** Keep `session` for `key`'s next call. `beyondBound`: kept even past `max` (a call waits for one right now). */
  put(key: string, session: T, beyondBound = false): void {
    this.#idle.push({ key, session, since: this.#now() });
    this.#closeStale();
    while (this.#idle.length > this.options.max && !beyondBound) close(this.#idle.shift()?.session);
  }

  /** Take `session` out without closing it (its process died; someone else closes it). */
  remove(session: T): void {
    this.#idle = this.#idle.filter((i) => i.session !== session);
  }

  /** Every session kept, taken out (to be closed by the caller). */
  drain(): T[] {
    const all = this.#idle.map((i) => i.session);
    this.#idle = [];
    return all;
  }

  #closeStale(): void {
    const oldest = this.#now() - this.options.maxIdleMs;
    while (this.#idle.length > 0 && (this.#idle[0] as Idle<T>).since < oldest)
      close(this.#idle.shift()?.session);
  }
}

const close = (session: Closable | undefined) => void session?.close().catch(() => {});
