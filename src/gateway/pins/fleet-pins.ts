// Pins shared by a fleet of gateways over their store (Redis): one pin per tool for the whole fleet, so a rug pull
// withheld on one instance is withheld on all, and an admin's accept on one is served by all.
//
// Why the lock file stays and the store joins it: the lock file is what people review in git and deploy, so it
// stays the source an instance starts from and the place `mrtr gateway pin --accept` writes. The store holds what
// the fleet applies between deploys: first-sight pins (the first instance to see a tool pins it for everyone) and
// accepts made on a running instance (the console, or SIGHUP after editing the lock file). Each instance writes what
// it takes from the store into its own lock file, so the file on any instance shows what the fleet serves.
//
// Which pin wins when the book and the store disagree on a tool:
// - an accept or a SIGHUP's edit on this instance: the instance's, always (an admin asked for it now);
// - otherwise the later one: the book's pinnedAt against the time the store's pin was shared. A lock file deployed
//   with a newer accept wins; an instance started from an older lock file takes the fleet's.
import { createHash, randomUUID } from 'node:crypto';
import type { SharedStore, StoreChannel } from '../../stores/index.js';
import { GatewayPinsError, type PinnedTool, readPinnedEntry } from './lock-file.js';
import type { PinBook } from './pin-book.js';
import type { SeenTool } from './pin-command.js';
import { pinKey, splitPinKey } from './pin-key.js';

/** The topic on which an instance tells the others that it shared pins. */
export const PINS_TOPIC = 'mrtr:gateway:pins';

/** A shared pin outlives any deploy; one that expires is shared again by the next instance that holds it. */
const SHARED_PIN_TTL_MS = 400 * 24 * 3600 * 1000;

/** How often a write lost to another instance's is retried before the listing gives up on the store. */
const ATTEMPTS = 3;

/** A pin as the store holds it. */
interface SharedPin {
  readonly pin: PinnedTool;
  /** When it was shared (ms): what a book's pinnedAt is compared with. */
  readonly at: number;
  /** Pinned at first sight (no admin saw it): a `--locked` instance does not take it. */
  readonly firstSight: boolean;
}

interface PinsMessage {
  readonly from: string;
  readonly keys: readonly string[];
}

export interface FleetPinsOptions {
  readonly store: SharedStore;
  /** The store's channel (Redis pub/sub): how the others hear of an accept at once. */
  readonly channel: StoreChannel;
  /** The book in force (a reload swaps it). */
  readonly book: () => PinBook;
  /** A `--locked` instance: it pins nothing at first sight and takes no first-sight pin of the fleet. */
  readonly locked: boolean;
  /** Another instance shared pins of these upstreams (`<upstream>` or `<upstream>#<kind>`): list them again. */
  readonly heard: (upstreams: readonly string[]) => void;
  readonly log: (line: string) => void;
  readonly now?: () => number;
}

export class FleetPins {
  readonly #self = randomUUID();
  readonly #now: () => number;
  /** The last accept or reload being shared: a listing waits for it, so it never undoes what is being shared. */
  #sharing: Promise<void> = Promise.resolve();
  #listening: Promise<void> | undefined;
  #stop: (() => Promise<void>) | undefined;

  constructor(private readonly options: FleetPinsOptions) {
    this.#now = options.now ?? Date.now;
  }

  /** Resolves once this instance hears the others' pins (subscribing at the first call); never rejects. */
  listening(): Promise<void> {
    this.#listening ??= this.options.channel
      .subscribe(PINS_TOPIC, (text) => this.#heard(text))
      .then(
        (stop) => {
          this.#stop = stop;
        },
        (error: unknown) => {
          // Missed news costs only time: every listing reads the shared pins anyway.
          this.#listening = undefined;
          this.options.log(
            `pins: cannot listen for the fleet's accepts (${(error as Error).message}); they apply at the next listing`,
          );
        },
      );
    return this.#listening;
  }

  /** Stop listening, if listening (not waited for: the store may be down; closing it ends the rest). */
  async close(): Promise<void> {
    await this.#stop?.().catch(() => {});
  }

  /** Settles once the last share() is in the store and told to the fleet (or failed, logged). */
  get shared(): Promise<void> {
    return this.#sharing;
  }

  /**
   * Make the book agree with the fleet on the definitions an upstream lists now, before they are checked: take the
   * fleet's pin, share this instance's, or pin a new one at first sight for everyone. Saves the book when it changed.
   * Resolves false when the store failed: the listing then pins nothing at first sight (a pin made alone could
   * differ from the fleet's, and a rug pull would pass on this instance).
   */
  async settle(listed: readonly SeenTool[]): Promise<boolean> {
    await this.#sharing;
    const book = this.options.book();
    let changed = false;
    try {
      const results = await Promise.all(listed.map((seen) => this.#settleOne(book, seen)));
      changed = results.includes(true);
      return true;
    } catch (error) {
      this.options.log(
        `pins: cannot read the fleet's pins in store ${this.options.store.description}: ${(error as Error).message}; new definitions are withheld until it answers`,
      );
      return false;
    } finally {
      if (changed) this.#save(book);
    }
  }

  /**
   * Put this instance's pins of `keys` in the store, whatever the store held, and tell the fleet: what an accept and
   * a SIGHUP's changed lines do. Runs after the previous share; see `shared`.
   */
  share(keys: readonly string[]): void {
    if (keys.length === 0) return;
    this.#sharing = this.#sharing.then(async () => {
      const book = this.options.book();
      try {
        for (const key of keys) {
          const { upstream, tool } = splitPinKey(key) as { upstream: string; tool: string };
          const pin = book.get(upstream, tool);
          if (pin) await this.#put(key, { pin, at: this.#now(), firstSight: false });
        }
        await this.#tell(keys);
      } catch (error) {
        this.options.log(
          `pins: ${keys.join(', ')}: served here, but not shared with the fleet (store ${this.options.store.description}: ${(error as Error).message}); accept again once it answers`,
        );
      }
    });
  }

  /** True when the book took a pin from the store (or pinned a new one at first sight). */
  async #settleOne(book: PinBook, seen: SeenTool): Promise<boolean> {
    const key = pinKey(seen.upstream, seen.tool);
    const storeKey = sharedPinKey(key);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const entry = await this.options.store.get(storeKey);
      const mine = book.get(seen.upstream, seen.tool);
      if (!entry) {
        // Nobody shared it: this instance's pin, or, at first sight, the definition listed now.
        const firstSight = mine === undefined;
        if (firstSight && this.options.locked) return false;
        const pin = mine ?? book.pinOf(seen.upstream, seen.definition);
        const record: SharedPin = { pin, at: Date.parse(pin.pinnedAt), firstSight };
        if (await this.options.store.create(storeKey, JSON.stringify(record), SHARED_PIN_TTL_MS)) {
          if (firstSight) book.adopt(seen.upstream, seen.tool, pin);
          return firstSight;
        }
        continue; // another instance shared it first: take theirs
      }
      const shared = this.#read(key, entry.value);
      if (mine?.digest === shared.pin.digest) return false;
      if (mine !== undefined && Date.parse(mine.pinnedAt) > shared.at) {
        // This instance's lock file holds a later accept (deployed since it was shared): the fleet takes it.
        const record: SharedPin = { pin: mine, at: Date.parse(mine.pinnedAt), firstSight: false };
        if (
          await this.options.store.replace(storeKey, entry.version, JSON.stringify(record), SHARED_PIN_TTL_MS)
        ) {
          // The pin is shared; instances that miss the news take it at their next listing.
          await this.#tell([key]).catch((error: unknown) =>
            this.options.log(`pins: ${key}: shared, but the fleet was not told: ${(error as Error).message}`),
          );
          return false;
        }
        continue;
      }
      if (mine === undefined && this.options.locked && shared.firstSight) return false;
      book.adopt(seen.upstream, seen.tool, shared.pin);
      return true;
    }
    throw new GatewayPinsError(`the shared pin of ${key} kept changing while it was read`);
  }

  async #put(key: string, record: SharedPin): Promise<void> {
    const storeKey = sharedPinKey(key);
    const value = JSON.stringify(record);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const entry = await this.options.store.get(storeKey);
      const written = entry
        ? await this.options.store.replace(storeKey, entry.version, value, SHARED_PIN_TTL_MS)
        : await this.options.store.create(storeKey, value, SHARED_PIN_TTL_MS);
      if (written) return;
    }
    throw new GatewayPinsError(`the shared pin of ${key} kept changing while it was written`);
  }

  /** The store's record, checked as a lock file's entry is: a record that does not hold together is refused. */
  #read(key: string, value: string): SharedPin {
    const where = `store ${this.options.store.description}`;
    let parsed: Partial<SharedPin>;
    try {
      parsed = JSON.parse(value) as Partial<SharedPin>;
    } catch (error) {
      throw new GatewayPinsError(`${where}: the shared pin of ${key} is not JSON`, { cause: error });
    }
    const pin = readPinnedEntry(where, `the shared pin of ${JSON.stringify(key)}`, key, parsed?.pin);
    if (typeof parsed.at !== 'number')
      throw new GatewayPinsError(`${where}: the shared pin of ${key} has no time it was shared`);
    return { pin, at: parsed.at, firstSight: parsed.firstSight === true };
  }

  #tell(keys: readonly string[]): Promise<void> {
    const message: PinsMessage = { from: this.#self, keys };
    return this.options.channel.publish(PINS_TOPIC, JSON.stringify(message));
  }

  #heard(text: string): void {
    let message: Partial<PinsMessage> | undefined;
    try {
      message = JSON.parse(text) as Partial<PinsMessage>;
    } catch {
      return;
    }
    if (message?.from === this.#self || !Array.isArray(message?.keys)) return;
    const upstreams = new Set<string>();
    for (const key of message.keys) {
      const split = typeof key === 'string' ? splitPinKey(key) : undefined;
      if (split) upstreams.add(split.upstream);
    }
    if (upstreams.size > 0) this.options.heard([...upstreams]);
  }

  #save(book: PinBook): void {
    try {
      book.save();
    } catch (error) {
      // The fleet's pin is in force here all the same; only this instance's file lags behind it.
      this.options.log(`pins: ${(error as Error).message}`);
    }
  }
}

/** The store's key of a pin: hashed, since a resource's URI may be longer than a store key may be. */
function sharedPinKey(key: string): string {
  return `mrtr:gateway:pin:${createHash('sha256').update(key).digest('base64url')}`;
}
