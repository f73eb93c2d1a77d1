// The authorization requests on their way to a third party, each kept in the shared store under its `state` until
// the callback takes it, once. They hold the PKCE verifier, so each is sealed with the server's keyring (its own
// purpose, beside the vault's). A person holds a few at a time per connection: opening the link again (another tab,
// a reload) past that drops their oldest, so the newest always works and the store never fills.
import { createHash } from 'node:crypto';
import { StoreContendedError } from '../protocol/index.js';
import type { Keyring } from '../state/index.js';
import type { SharedStore } from '../stores/index.js';
import { isBox, SealedBox } from './sealed-box.js';
import type { ConnectionOwner, PendingAuthorization } from './types.js';

/** An authorization request on its way, and the connect it is for. */
export interface AuthorizationOnItsWay {
  readonly id: string;
  readonly pending: PendingAuthorization;
}

const PURPOSE = 'mrtr/connections-pending';
const FORMAT = 1;
const ATTEMPTS = 10;

const digest = (...parts: string[]) => createHash('sha256').update(JSON.stringify(parts)).digest('base64url');
// The state is the third party's echo, of any length: its digest keeps the key short and the state out of key lists.
const authorizationKey = (state: string) => `mrtr/connect-auth/${digest(state)}`;
const ownerKey = (owner: ConnectionOwner, connection: string) =>
  `mrtr/connect-auth-of/${digest(owner.issuer, owner.subject, connection)}`;

export interface PendingOptions {
  /** How long a request waits for its callback. */
  ttlMs: number;
  /** Requests one person keeps at a time for one connection; the oldest goes first. */
  perPerson: number;
  now: () => number;
}

export class PendingAuthorizations {
  readonly #box: SealedBox;

  constructor(
    private readonly store: SharedStore,
    keyring: Keyring,
    private readonly o: PendingOptions,
  ) {
    this.#box = new SealedBox(keyring, PURPOSE, FORMAT);
  }

  /** Keep a request of `owner` for `connection` until its callback (or its time) comes. */
  async keep(owner: ConnectionOwner, connection: string, onItsWay: AuthorizationOnItsWay): Promise<void> {
    const key = authorizationKey(onItsWay.pending.state);
    const sealed = { v: FORMAT, ...this.#box.seal([key], JSON.stringify(onItsWay)) };
    if (!(await this.store.create(key, JSON.stringify(sealed), this.o.ttlMs)))
      throw new StoreContendedError('an authorization request with this state is already on its way');
    let dropped: string[];
    try {
      dropped = await this.#note(ownerKey(owner, connection), key);
    } catch (error) {
      // Not on the person's list, it could never be dropped: a burst of parallel opens must not leave such requests.
      const made = await this.store.get(key);
      if (made) await this.store.remove(key, made.version);
      throw error;
    }
    for (const older of dropped) {
      const entry = await this.store.get(older);
      if (entry) await this.store.remove(older, entry.version);
    }
  }

  /**
   * The request `state` names, taken out of the store: once. A second callback with the same state (a replay, a
   * double click) finds nothing, as does one whose request expired, was dropped, or does not open here.
   */
  async take(state: string): Promise<AuthorizationOnItsWay | undefined> {
    const key = authorizationKey(state);
    const entry = await this.store.get(key);
    if (!entry) return undefined;
    let stored: unknown;
    try {
      stored = JSON.parse(entry.value);
    } catch {
      return undefined;
    }
    const opened = isBox(stored) ? this.#box.open(stored, [key]) : undefined;
    // One that does not open (sealed under a key this instance lacks, or edited) is left to expire, not taken.
    if (opened === undefined || !(await this.store.remove(key, entry.version))) return undefined;
    return JSON.parse(opened) as AuthorizationOnItsWay;
  }

  /** Add `key` to the owner's list of requests; the ones past the limit, oldest first, to drop. */
  async #note(listKey: string, key: string): Promise<string[]> {
    const now = this.o.now();
    for (let i = 0; i < ATTEMPTS; i++) {
      const entry = await this.store.get(listKey);
      const alive = parseList(entry?.value).filter(([, until]) => until > now);
      alive.push([key, now + this.o.ttlMs]);
      const dropped = alive.splice(0, Math.max(0, alive.length - this.o.perPerson)).map(([k]) => k);
      const value = JSON.stringify(alive);
      const written = entry
        ? await this.store.replace(listKey, entry.version, value, this.o.ttlMs)
        : await this.store.create(listKey, value, this.o.ttlMs);
      if (written) return dropped;
    }
    throw new StoreContendedError('the list of authorization requests could not be updated');
  }
}

function parseList(value: string | undefined): Array<[string, number]> {
  try {
    const list: unknown = JSON.parse(value ?? '[]');
    return Array.isArray(list)
      ? list.filter(
          (e): e is [string, number] =>
            Array.isArray(e) && typeof e[0] === 'string' && typeof e[1] === 'number',
        )
      : [];
  } catch {
    return [];
  }
}
