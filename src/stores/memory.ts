// The in-process store: one process only (tests, stdio servers). Entries expire lazily on read and by a sweep that
// runs every so many writes, so a flood of writes cannot grow the map past what is still alive.
import { checkEntry, type SharedStore, type StoredEntry, StoreUnavailableError } from './contract.js';

interface Slot {
  value: string;
  version: number;
  expiresAt: number;
}

export interface MemoryStoreOptions {
  /** The clock (ms since the epoch); tests pass a fake one. */
  now?: () => number;
}

const SWEEP_EVERY_WRITES = 1024;

export class MemoryStore implements SharedStore {
  readonly description = 'memory';
  readonly #slots = new Map<string, Slot>();
  readonly #now: () => number;
  #writes = 0;
  #closed = false;

  constructor(options: MemoryStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
  }

  /** Entries alive now (for tests of bounded storage). */
  get size(): number {
    this.#sweep();
    return this.#slots.size;
  }

  async get(key: string): Promise<StoredEntry | undefined> {
    this.#open();
    checkEntry(key);
    const slot = this.#live(key);
    return slot && { value: slot.value, version: slot.version };
  }

  async create(key: string, value: string, ttlMs: number): Promise<boolean> {
    this.#open();
    checkEntry(key, value, ttlMs);
    if (this.#live(key)) return false;
    this.#write(key, { value, version: 1, expiresAt: this.#now() + ttlMs });
    return true;
  }

  async replace(key: string, version: number, value: string, ttlMs: number): Promise<boolean> {
    this.#open();
    checkEntry(key, value, ttlMs);
    const slot = this.#live(key);
    if (!slot || slot.version !== version) return false;
    this.#write(key, { value, version: version + 1, expiresAt: this.#now() + ttlMs });
    return true;
  }

  async remove(key: string, version: number): Promise<boolean> {
    this.#open();
    checkEntry(key);
    const slot = this.#live(key);
    if (!slot || slot.version !== version) return false;
    this.#slots.delete(key);
    return true;
  }

  async increment(key: string, ttlMs: number): Promise<number> {
    this.#open();
    checkEntry(key, undefined, ttlMs);
    const slot = this.#live(key);
    if (slot) {
      slot.version++;
      return slot.version;
    }
    this.#write(key, { value: '', version: 1, expiresAt: this.#now() + ttlMs });
    return 1;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#slots.clear();
  }

  #open(): void {
    if (this.#closed) throw new StoreUnavailableError(this.description, 'store is closed');
  }

  #live(key: string): Slot | undefined {
    const slot = this.#slots.get(key);
    if (slot && slot.expiresAt <= this.#now()) {
      this.#slots.delete(key);
      return undefined;
    }
    return slot;
  }

  #write(key: string, slot: Slot): void {
    this.#slots.set(key, slot);
    if (++this.#writes % SWEEP_EVERY_WRITES === 0) this.#sweep();
  }

  #sweep(): void {
    const now = this.#now();
    for (const [key, slot] of this.#slots) if (slot.expiresAt <= now) this.#slots.delete(key);
  }
}
