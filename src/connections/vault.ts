// The token vault over a shared store: each person's grant for each connection, sealed with the server's keyring
// (vault-seal.ts), findable again by every instance that shares the store and the keys (vault-records.ts).
import { inspect } from 'node:util';
import { Keyring } from '../state/index.js';
import type { SharedStore } from '../stores/index.js';
import { ConnectionsUsageError } from './errors.js';
import type { ConnectionOwner, ConnectionSummary, HeldTokens, TokenGrant, TokenVault } from './types.js';
import {
  addToIndex,
  dropFromIndex,
  grantKey,
  indexed,
  indexKey,
  readCounts,
  UNCHANGED,
  update,
} from './vault-records.js';
import { type OpenedRecord, VaultSeal } from './vault-seal.js';

/** A grant unused for this long leaves the store (renewed by each put, and by the first read of each day). */
export const DEFAULT_VAULT_TTL_MS = 400 * 24 * 3600 * 1000;
/** A read marks the grant used (and renews it) at most this often: one write a day, not one per call. */
const USE_MARK_MS = 24 * 3600 * 1000;
const CONNECTION_NAME = /^[a-z0-9][a-z0-9-]{0,31}$/;

export interface StoreVaultOptions {
  /** The clock (ms since the epoch); tests pass a fake one. */
  now?: () => number;
  /** How long a grant is kept without a put or a read (default 400 days). */
  ttlMs?: number;
}

/** The sealed part of a record: the tokens and the times only the owner needs. */
interface SealedGrant {
  a: string;
  r?: string;
  e?: number;
  c: number;
  f?: number;
  u?: number;
}

type Owner = { ownerIssuer: string; ownerSubject: string; connection: string };

/**
 * A TokenVault keeping grants in `store`, encrypted with AES-256-GCM under the keyring's keys: the current key seals,
 * every key opens, and a read or put re-seals an older key's record with the current one.
 */
export function storeVault(
  store: SharedStore,
  keyring: Keyring,
  options: StoreVaultOptions = {},
): StoreVault {
  return new StoreVault(store, keyring, options);
}

export class StoreVault implements TokenVault {
  readonly description: string;
  readonly #store: SharedStore;
  readonly #seal: VaultSeal;
  readonly #now: () => number;
  readonly #ttlMs: number;

  constructor(store: SharedStore, keyring: Keyring, options: StoreVaultOptions = {}) {
    if (store === null || typeof store !== 'object' || typeof store.get !== 'function')
      throw new ConnectionsUsageError('storeVault needs a SharedStore to keep grants in');
    if (!(keyring instanceof Keyring))
      throw new ConnectionsUsageError("storeVault needs the server's keyring (a Keyring) to encrypt grants");
    const { now = Date.now, ttlMs = DEFAULT_VAULT_TTL_MS } = options;
    if (!(Number.isInteger(ttlMs) && ttlMs > 0))
      throw new ConnectionsUsageError(`storeVault ttlMs must be a positive integer of ms, got ${ttlMs}`);
    this.#store = store;
    this.#seal = new VaultSeal(keyring);
    this.#now = now;
    this.#ttlMs = ttlMs;
    this.description = `connections vault in ${store.description}`;
  }

  async get(
    owner: ConnectionOwner,
    connection: string,
  ): Promise<(TokenGrant & ConnectionSummary) | undefined> {
    const who = ownerOf(owner, connection);
    const key = grantKey(who.ownerIssuer, who.ownerSubject, connection);
    const entry = await this.#store.get(key);
    if (!entry) return undefined;
    const opened = this.#open(entry.value, who);
    if (!opened) {
      await this.#discard(who, key, entry);
      return undefined;
    }
    const { record, sealed } = opened;
    const now = this.#now();
    if (record.kid !== this.#seal.currentKid || now - (sealed.u ?? 0) >= USE_MARK_MS) {
      sealed.u = now;
      await this.#markUsed(who, key, entry.version, record, sealed);
    }
    return { ...grantOf(record, sealed), ...summaryOf(connection, record, sealed) };
  }

  async put(
    owner: ConnectionOwner,
    connection: string,
    grant: TokenGrant,
    replacing?: HeldTokens,
  ): Promise<boolean> {
    const who = ownerOf(owner, connection);
    checkGrant(grant);
    const binding = { ...who, issuer: grant.issuer, scopes: [...grant.scopes] };
    const key = grantKey(who.ownerIssuer, who.ownerSubject, connection);
    const now = this.#now();
    let written = false;
    await update(this.#store, key, (current) => {
      const prior = current === undefined ? undefined : this.#open(current, who)?.sealed;
      written = replacing === undefined || holds(prior, replacing);
      if (!written) return UNCHANGED;
      const sealed: SealedGrant = { a: grant.accessToken, c: prior?.c ?? now };
      if (grant.refreshToken !== undefined) sealed.r = grant.refreshToken;
      if (grant.expiresAt !== undefined) sealed.e = grant.expiresAt;
      if (prior) sealed.f = now;
      if (prior?.u !== undefined) sealed.u = prior.u;
      return [this.#seal.seal(binding, JSON.stringify(sealed)), this.#ttlMs];
    });
    if (written) await addToIndex(this.#store, this.#indexOf(who), connection, now + this.#ttlMs, now);
    return written;
  }

  async remove(owner: ConnectionOwner, connection: string, holding?: HeldTokens): Promise<boolean> {
    const who = ownerOf(owner, connection);
    let removed = false;
    let kept = false;
    await update(this.#store, grantKey(who.ownerIssuer, who.ownerSubject, connection), (current) => {
      // Another instance's newer key: not connected here, and not this instance's to remove. A grant whose tokens
      // changed since the caller read them (a refresh, a new connect) is not the one it meant.
      kept =
        current !== undefined &&
        (this.#seal.sealedUnderUnknownKey(current) ||
          (holding !== undefined && !holds(this.#open(current, who)?.sealed, holding)));
      removed = current !== undefined && !kept;
      return removed ? undefined : UNCHANGED;
    });
    if (!kept) await dropFromIndex(this.#store, this.#indexOf(who), connection, this.#now());
    return removed;
  }

  async list(owner: ConnectionOwner): Promise<ConnectionSummary[]> {
    checkOwner(owner);
    const names = await indexed(this.#store, indexKey(owner.issuer, owner.subject), this.#now());
    const valid = names.filter((name) => CONNECTION_NAME.test(name));
    const summaries = await Promise.all(valid.map((name) => this.#summary(owner, name)));
    return summaries.filter((s): s is ConnectionSummary => s !== undefined);
  }

  async counts(): Promise<Record<string, number>> {
    return readCounts(this.#store, this.#now());
  }

  toString(): string {
    return this.description;
  }

  toJSON(): { description: string } {
    return { description: this.description };
  }

  [inspect.custom](): string {
    return `StoreVault { ${this.description} }`;
  }

  /** One indexed connection's summary; an index entry whose record is gone or does not open is cleaned away. */
  async #summary(owner: ConnectionOwner, connection: string): Promise<ConnectionSummary | undefined> {
    const who = ownerOf(owner, connection);
    const key = grantKey(who.ownerIssuer, who.ownerSubject, connection);
    const entry = await this.#store.get(key);
    const opened = entry && this.#open(entry.value, who);
    if (opened) return summaryOf(connection, opened.record, opened.sealed);
    if (entry) await this.#discard(who, key, entry);
    else await dropFromIndex(this.#store, this.#indexOf(who), connection, this.#now());
    return undefined;
  }

  #open(stored: string, who: Owner): { record: OpenedRecord; sealed: SealedGrant } | undefined {
    const record = this.#seal.open(stored, who);
    const sealed = record && parseSealed(record.secret);
    return sealed && { record, sealed };
  }

  /**
   * A record that does not open (edited, misplaced) is removed and uncounted. One sealed under a key this instance
   * does not hold is left as it is: in a rolling rotation it is another instance's newer key, and the person's grant.
   */
  async #discard(who: Owner, key: string, entry: { value: string; version: number }): Promise<void> {
    if (this.#seal.sealedUnderUnknownKey(entry.value)) return;
    // Only the version read: a grant put since then is not this record.
    if (await this.#store.remove(key, entry.version))
      await dropFromIndex(this.#store, this.#indexOf(who), who.connection, this.#now());
  }

  /** Re-seal under the current key with the new last use, and renew the record and the owner's index. */
  async #markUsed(
    who: Owner,
    key: string,
    version: number,
    record: OpenedRecord,
    sealed: SealedGrant,
  ): Promise<void> {
    const binding = { ...who, issuer: record.issuer, scopes: record.scopes };
    // Another writer came first (a put, a remove): its record stands, and this read's mark is dropped.
    if (
      !(await this.#store.replace(
        key,
        version,
        this.#seal.seal(binding, JSON.stringify(sealed)),
        this.#ttlMs,
      ))
    )
      return;
    const now = this.#now();
    await addToIndex(this.#store, this.#indexOf(who), who.connection, now + this.#ttlMs, now);
  }

  #indexOf(who: Owner): string {
    return indexKey(who.ownerIssuer, who.ownerSubject);
  }
}

function grantOf(record: OpenedRecord, sealed: SealedGrant): TokenGrant {
  const grant: { -readonly [K in keyof TokenGrant]: TokenGrant[K] } = {
    accessToken: sealed.a,
    scopes: record.scopes,
    issuer: record.issuer,
  };
  if (sealed.r !== undefined) grant.refreshToken = sealed.r;
  if (sealed.e !== undefined) grant.expiresAt = sealed.e;
  return grant;
}

function summaryOf(connection: string, record: OpenedRecord, sealed: SealedGrant): ConnectionSummary {
  const summary: { -readonly [K in keyof ConnectionSummary]: ConnectionSummary[K] } = {
    connection,
    issuer: record.issuer,
    scopes: record.scopes,
    connectedAt: sealed.c,
  };
  if (sealed.f !== undefined) summary.refreshedAt = sealed.f;
  if (sealed.u !== undefined) summary.lastUsedAt = sealed.u;
  if (sealed.e !== undefined) summary.expiresAt = sealed.e;
  return summary;
}

function holds(sealed: SealedGrant | undefined, tokens: HeldTokens): boolean {
  return sealed !== undefined && sealed.a === tokens.accessToken && sealed.r === tokens.refreshToken;
}

function parseSealed(secret: string): SealedGrant | undefined {
  try {
    const s = JSON.parse(secret) as SealedGrant;
    return typeof s?.a === 'string' && typeof s.c === 'number' ? s : undefined;
  } catch {
    return undefined;
  }
}

function checkOwner(owner: ConnectionOwner): void {
  if (owner === null || typeof owner !== 'object')
    throw new ConnectionsUsageError(
      'a connection needs an owner (issuer and subject): an anonymous caller has none',
    );
  if (typeof owner.issuer !== 'string' || owner.issuer === '')
    throw new ConnectionsUsageError(
      "a connection's owner needs an issuer: a principal without one cannot connect",
    );
  if (typeof owner.subject !== 'string' || owner.subject === '')
    throw new ConnectionsUsageError("a connection's owner needs a subject");
}

function ownerOf(owner: ConnectionOwner, connection: string): Owner {
  checkOwner(owner);
  if (typeof connection !== 'string' || !CONNECTION_NAME.test(connection))
    throw new ConnectionsUsageError(
      `connection name ${JSON.stringify(String(connection)).slice(0, 40)} is not 1-32 characters of a-z 0-9 - (starting with a letter or digit)`,
    );
  return { ownerIssuer: owner.issuer, ownerSubject: owner.subject, connection };
}

/** A grant to keep: the messages name the field at fault, never its value (it may be a token). */
function checkGrant(grant: TokenGrant): void {
  const bad = (what: string) => new ConnectionsUsageError(`a grant to keep needs ${what}`);
  if (grant === null || typeof grant !== 'object') throw bad('to be an object');
  if (typeof grant.accessToken !== 'string' || grant.accessToken === '')
    throw bad('an accessToken (a string)');
  if (
    grant.refreshToken !== undefined &&
    (typeof grant.refreshToken !== 'string' || grant.refreshToken === '')
  )
    throw bad('a refreshToken that is a string, or none');
  if (grant.expiresAt !== undefined && !Number.isFinite(grant.expiresAt))
    throw bad('an expiresAt that is epoch ms, or none');
  if (typeof grant.issuer !== 'string' || grant.issuer === '')
    throw bad('the issuer that granted it (a string)');
  if (!Array.isArray(grant.scopes) || !grant.scopes.every((s) => typeof s === 'string'))
    throw bad('its scopes (an array of strings)');
}
