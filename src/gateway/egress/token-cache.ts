// Exchanged tokens, kept until shortly before they expire so a caller's every upstream request does not cost a
// round trip to the issuer: bounded (least recently used goes first), and one exchange for many concurrent asks.

export interface CachedToken {
  readonly token: string;
  /** When to stop using it (ms since the epoch); undefined: use it for this request only, never keep it. */
  readonly until: number | undefined;
}

export class TokenCache {
  /** Map keeps insertion order: the first key is the least recently used. */
  readonly #kept = new Map<string, { token: string; until: number }>();
  readonly #pending = new Map<string, Promise<CachedToken>>();

  constructor(private readonly maxEntries: number) {}

  get size(): number {
    return this.#kept.size;
  }

  /**
   * The token kept for `key`, else the one `fetch` gets. Callers asking for the same key while a fetch runs share
   * it; a failed fetch is not kept, so the next ask tries again.
   */
  get(key: string, fetch: () => Promise<CachedToken>): Promise<string> {
    const kept = this.#kept.get(key);
    if (kept) {
      this.#kept.delete(key);
      if (Date.now() < kept.until) {
        this.#kept.set(key, kept);
        return Promise.resolve(kept.token);
      }
    }
    let pending = this.#pending.get(key);
    if (!pending) {
      pending = fetch().then(
        (got) => {
          this.#pending.delete(key);
          if (got.until !== undefined && Date.now() < got.until) this.#keep(key, got.token, got.until);
          return got;
        },
        (error: unknown) => {
          this.#pending.delete(key);
          throw error;
        },
      );
      this.#pending.set(key, pending);
    }
    return pending.then((got) => got.token);
  }

  #keep(key: string, token: string, until: number): void {
    this.#kept.delete(key);
    while (this.#kept.size >= this.maxEntries) this.#kept.delete(this.#kept.keys().next().value as string);
    this.#kept.set(key, { token, until });
  }
}
