// The gateway's memory of which tool definitions people approved: one pin per upstream tool, kept in a lock file.
import type { JsonObject } from '../../protocol/index.js';
import { definitionDigest, pinnedDefinition, pinnedKindOf } from './digest.js';
import { describeDrift } from './drift.js';
import { type PinnedTool, readLockFile, writeLockFile } from './lock-file.js';
import { pinKey, pinPattern, splitPinKey } from './pin-key.js';

/** How a listed definition compares with its pin. */
export type PinCheck =
  | { readonly status: 'pinned' }
  | { readonly status: 'new' }
  | { readonly status: 'changed'; readonly pinned: string; readonly seen: string };

/** A pinned tool listed with a different definition: withheld until an admin accepts it. */
export interface PinDrift {
  readonly upstream: string;
  readonly tool: string;
  /** The pinned digest and the one seen. */
  readonly pinned: string;
  readonly seen: string;
  /** The definition seen (its bound fields): what accepting it pins. */
  readonly definition: JsonObject;
  /** describeDrift's lines, pinned → seen. */
  readonly changes: readonly string[];
}

export interface PinBookOptions {
  /** For pinnedAt (default Date.now). */
  now?: () => number;
}

/**
 * Pinned tool definitions, the defence against a "rug pull": an upstream we do not control changing a tool's
 * description or schema after people approved it.
 *
 * The policy the gateway applies on each listing (see GatewayCatalog):
 * - `new` — in `first-sight` mode (the default) the tool is pinned and the book saved, then served; in `locked`
 *   mode (a lock file given with `--locked`) it is withheld: only what the lock file names is served.
 * - `changed` — never served, in either mode, until an admin accepts the change (`mrtr gateway pin --accept`, or
 *   `accept()`); meanwhile it is listed by drift().
 * - `pinned` — served.
 *
 * Several gateways may share one lock file: saving replaces it atomically, and the last to save wins. A fleet
 * sharing a Redis store shares its pins there too (fleet-pins.ts).
 */
export class PinBook {
  /** The lock file, or undefined for a book kept in memory only. */
  readonly path: string | undefined;
  readonly #pins: Map<string, PinnedTool>;
  readonly #drift = new Map<string, PinDrift>();
  readonly #now: () => number;

  private constructor(path: string | undefined, pins: Map<string, PinnedTool>, options: PinBookOptions) {
    this.path = path;
    this.#pins = pins;
    this.#now = options.now ?? Date.now;
  }

  /**
   * The book in a lock file; a file that does not exist yet is an empty book (save() creates it).
   * @throws MrtrError ERR_GATEWAY_PINS naming the file and what is wrong with it.
   */
  static load(path: string, options: PinBookOptions = {}): PinBook {
    return new PinBook(path, readLockFile(path), options);
  }

  /** An empty book with no file: pins last as long as the process (a gateway run without a lock file). */
  static inMemory(options: PinBookOptions = {}): PinBook {
    return new PinBook(undefined, new Map(), options);
  }

  /** The same pins and drift in a book of their own (same file): changes to one do not touch the other. */
  clone(): PinBook {
    const copy = new PinBook(this.path, new Map(this.#pins), { now: this.#now });
    for (const [key, drift] of this.#drift) copy.#drift.set(key, drift);
    return copy;
  }

  /** How `definition` compares with the pin; a change is remembered in drift() until accepted or undone. */
  check(upstream: string, tool: string, definition: JsonObject): PinCheck {
    const key = pinKey(upstream, tool);
    const pin = this.#pins.get(key);
    if (!pin) return { status: 'new' };
    const kind = pinnedKindOf(upstream);
    const seen = definitionDigest(definition, kind);
    if (seen === pin.digest) {
      // The upstream went back to what was approved: nothing is waiting for an admin any more.
      this.#drift.delete(key);
      return { status: 'pinned' };
    }
    if (this.#drift.get(key)?.seen !== seen) {
      const bound = pinnedDefinition(definition, kind);
      this.#drift.set(key, {
        upstream,
        tool,
        pinned: pin.digest,
        seen,
        definition: bound,
        changes: describeDrift(pin.definition, bound),
      });
    }
    return { status: 'changed', pinned: pin.digest, seen };
  }

  /** Pin `definition` (first sight, or an admin's accept); pinning the definition already pinned changes nothing. */
  pin(upstream: string, tool: string, definition: JsonObject): void {
    const key = pinKey(upstream, tool);
    this.#drift.delete(key);
    if (this.#pins.get(key)?.digest === definitionDigest(definition, pinnedKindOf(upstream))) return;
    this.#pins.set(key, this.pinOf(upstream, definition));
  }

  /** The pin `definition` would get now, without pinning it. */
  pinOf(upstream: string, definition: JsonObject): PinnedTool {
    const kind = pinnedKindOf(upstream);
    return {
      digest: definitionDigest(definition, kind),
      pinnedAt: new Date(this.#now()).toISOString(),
      definition: pinnedDefinition(definition, kind),
    };
  }

  /** Take a pin made elsewhere as it is (the fleet's, fleet-pins.ts): its drift, if any, is judged afresh. */
  adopt(upstream: string, tool: string, pin: PinnedTool): void {
    const key = pinKey(upstream, tool);
    this.#drift.delete(key);
    this.#pins.set(key, pin);
  }

  /**
   * Pin the definitions seen for every drifted tool whose `<upstream>/<tool>` matches `pattern` (a glob: `files/*`).
   * Returns the keys accepted; save() to keep them.
   * @throws MrtrError ERR_INVALID_ARGUMENT for a pattern that is not `<upstream>/<tool>`.
   */
  accept(pattern: string): string[] {
    const matches = pinPattern(pattern);
    const accepted: string[] = [];
    for (const [key, drift] of [...this.#drift]) {
      if (!matches(key)) continue;
      this.pin(drift.upstream, drift.tool, drift.definition);
      accepted.push(key);
    }
    return accepted.sort();
  }

  /** Tools seen changed since their pin, by key. */
  drift(): PinDrift[] {
    return [...this.#drift.keys()].sort().map((key) => this.#drift.get(key) as PinDrift);
  }

  /** The pin of one tool, if any. */
  get(upstream: string, tool: string): PinnedTool | undefined {
    return this.#pins.get(pinKey(upstream, tool));
  }

  /** Every pin, by key. */
  pins(): Array<{ upstream: string; tool: string; pin: PinnedTool }> {
    return [...this.#pins.keys()].sort().map((key) => {
      const { upstream, tool } = splitPinKey(key) as { upstream: string; tool: string };
      return { upstream, tool, pin: this.#pins.get(key) as PinnedTool };
    });
  }

  /**
   * Write the lock file (atomically); a book in memory has nothing to write.
   * @throws MrtrError ERR_GATEWAY_PINS when the file cannot be written.
   */
  save(): void {
    if (this.path !== undefined) writeLockFile(this.path, this.#pins);
  }
}
