// Each person's passkeys (WebAuthn credentials) in the shared store, so every instance's step-up page knows them: one
// record per person, changed by compare-and-set, and single-use challenges for the ceremonies.
import { createHash, randomBytes } from 'node:crypto';
import { StoreContendedError } from '../protocol/index.js';
import type { SharedStore } from '../stores/index.js';
import type { Person } from './approval-book.js';

export interface Passkey {
  /** The credential id (base64url), as the authenticator made it. */
  readonly id: string;
  /** The COSE public key (base64url). */
  readonly publicKey: string;
  /** The authenticator's signature counter: a clone shows as a counter that does not grow. */
  readonly counter: number;
  readonly transports: readonly string[];
  readonly label: string;
  readonly createdAt: number;
  readonly lastUsedAt?: number;
}

/** What a ceremony's challenge is bound to: who, which browser session, and for a step-up which one. */
export interface PasskeyChallenge {
  readonly kind: 'register' | 'step_up';
  readonly challenge: string;
  readonly subject: string;
  readonly issuer: string;
  readonly sid: string;
  readonly stepUpId?: string;
}

export const PASSKEY_DEFAULTS = Object.freeze({
  /** Passkeys one person may hold: a few devices and a spare. */
  maxPerPerson: 10,
  /** How long a ceremony may take, from the options to the answer: a person finds their phone. */
  challengeTtlMs: 5 * 60_000,
  /** A person's passkeys are kept as long as they are used; a year of silence forgets them. */
  recordTtlMs: 365 * 24 * 60 * 60_000,
});

/** The store's key for a person: a digest, so no name or issuer shows in a store's keys. */
export const personKey = (p: Pick<Person, 'subject' | 'issuer'>): string =>
  createHash('sha256').update(`${p.issuer}\n${p.subject}`).digest('base64url');

const KEY = (p: Pick<Person, 'subject' | 'issuer'>) => `mrtr/passkeys/${personKey(p)}`;
const CHALLENGE = (id: string) => `mrtr/passkey-challenge/${id}`;

export class PasskeyBook {
  constructor(
    private readonly store: SharedStore,
    private readonly now: () => number = Date.now,
  ) {}

  async list(person: Pick<Person, 'subject' | 'issuer'>): Promise<Passkey[]> {
    const entry = await this.store.get(KEY(person));
    return entry ? (JSON.parse(entry.value) as Passkey[]) : [];
  }

  /** Change a person's list by compare-and-set; `change` returns the new list (or throws to refuse). */
  async update(
    person: Pick<Person, 'subject' | 'issuer'>,
    change: (keys: Passkey[]) => Passkey[],
  ): Promise<Passkey[]> {
    for (let i = 0; i < 20; i++) {
      const entry = await this.store.get(KEY(person));
      const next = change(entry ? (JSON.parse(entry.value) as Passkey[]) : []);
      const value = JSON.stringify(next);
      const done = entry
        ? await this.store.replace(KEY(person), entry.version, value, PASSKEY_DEFAULTS.recordTtlMs)
        : await this.store.create(KEY(person), value, PASSKEY_DEFAULTS.recordTtlMs);
      if (done) return next;
    }
    throw new StoreContendedError('passkeys record is contended');
  }

  /** Remember a ceremony's challenge; returns its handle (the browser sends it back with the answer). */
  async challenge(c: PasskeyChallenge): Promise<string> {
    const id = randomBytes(16).toString('base64url');
    await this.store.create(CHALLENGE(id), JSON.stringify(c), PASSKEY_DEFAULTS.challengeTtlMs);
    return id;
  }

  /** Take a challenge once: a second answer with the same handle finds nothing. */
  async takeChallenge(id: string): Promise<PasskeyChallenge | undefined> {
    if (!/^[\w-]{22}$/.test(id)) return undefined;
    const entry = await this.store.get(CHALLENGE(id));
    if (!entry || !(await this.store.remove(CHALLENGE(id), entry.version))) return undefined;
    return JSON.parse(entry.value) as PasskeyChallenge;
  }

  get clock(): () => number {
    return this.now;
  }
}
