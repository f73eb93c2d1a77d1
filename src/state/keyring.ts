import { createSecretKey, hkdfSync, type KeyObject, randomBytes } from 'node:crypto';
import { MrtrError } from '../protocol/index.js';
import { isCanonicalBase64url } from './base64url.js';
import { StateUsageError } from './errors.js';
import { hmacSha256 } from './signing.js';

/** Version of the sealed token format; part of every key derivation and authenticated in every token. */
export const STATE_FORMAT_VERSION = 1;
/** Minimum length of a master secret, in bytes. */
export const MIN_SECRET_BYTES = 32;
/** Key ids are short so they fit in every token: 1–16 characters of A–Z a–z 0–9 _ -. */
export const KID_PATTERN = /^[A-Za-z0-9_-]{1,16}$/;

const HKDF_SALT = 'mrtr/requestState';

/** A configuration error in a key spec or key list. Messages name the key id, never the secret. */
export class KeySpecError extends MrtrError {
  override readonly name = 'KeySpecError';
  declare readonly code: 'ERR_KEY_SPEC';
  constructor(message: string) {
    super('ERR_KEY_SPEC', message);
  }
}

/** One master secret and its id. */
export interface StateKey {
  kid: string;
  secret: Uint8Array;
}

/** @internal Derived key material for one kid. Never leaves src/state. */
export interface DerivedKey {
  readonly kid: string;
  readonly kidBytes: Buffer;
  /** Root of the one-message AES-256-GCM keys (HMAC key). */
  readonly enc: KeyObject;
  /** HMAC-SHA256 key for the binding tags sealed inside the token. */
  readonly bind: KeyObject;
}

interface KeyringInternals {
  readonly current: DerivedKey;
  readonly byKid: ReadonlyMap<string, DerivedKey>;
  readonly pseudonym: KeyObject;
  /** The raw secrets, current first, for keys of other purposes (purposeKeys). */
  readonly secrets: ReadonlyArray<{ kid: string; secret: Uint8Array }>;
}

// Derived keys live here rather than on the instance so that logging or inspecting a Keyring shows nothing secret.
const internals = new WeakMap<Keyring, KeyringInternals>();

function derive(secret: Uint8Array, info: string): KeyObject {
  return createSecretKey(Buffer.from(hkdfSync('sha256', secret, HKDF_SALT, info, 32)));
}

function deriveKey(kid: string, secret: Uint8Array): DerivedKey {
  // The kid is part of the info string: the same secret filed under two ids yields unrelated keys.
  return {
    kid,
    kidBytes: Buffer.from(kid, 'latin1'),
    enc: derive(secret, `mrtr/requestState/v${STATE_FORMAT_VERSION}/aes-256-gcm/${kid}`),
    bind: derive(secret, `mrtr/requestState/v${STATE_FORMAT_VERSION}/binding/${kid}`),
  };
}

function derivePseudonymKey(secret: Uint8Array): KeyObject {
  return derive(secret, `mrtr/principal/v${STATE_FORMAT_VERSION}`);
}

function checkKey(kid: unknown, secret: unknown, where: string): void {
  if (typeof kid !== 'string' || !KID_PATTERN.test(kid)) {
    throw new KeySpecError(`${where}: key id must be 1-16 characters of A-Z a-z 0-9 _ -`);
  }
  if (!(secret instanceof Uint8Array)) throw new KeySpecError(`key "${kid}": secret must be bytes`);
  if (secret.byteLength < MIN_SECRET_BYTES) {
    throw new KeySpecError(
      `key "${kid}": secret is ${secret.byteLength} bytes; at least ${MIN_SECRET_BYTES} random bytes are required ` +
        `(generate one with "mrtr keys generate")`,
    );
  }
}

/**
 * The keys a server seals and opens requestState with. The first key is **current** (it seals); every key,
 * current included, is **accepted** (it opens). Immutable: rotate by building a new Keyring.
 */
export class Keyring {
  /** Id of the key that seals new state. */
  readonly currentKid: string;
  /** Ids of every key that opens state, current first. */
  readonly kids: readonly string[];
  /** True for a random per-process keyring: state sealed here opens on no other process. */
  readonly ephemeral: boolean;

  /**
   * @param keys current key first, then the other accepted keys.
   * @throws KeySpecError for an empty list, a bad or duplicate kid, a short or reused secret.
   */
  constructor(keys: readonly StateKey[], options: { ephemeral?: boolean } = {}) {
    if (!Array.isArray(keys) || keys.length === 0) throw new KeySpecError('a keyring needs at least one key');
    const byKid = new Map<string, DerivedKey>();
    const secrets: Buffer[] = [];
    keys.forEach((k, i) => {
      checkKey(k?.kid, k?.secret, `key ${i + 1}`);
      if (byKid.has(k.kid)) throw new KeySpecError(`key id "${k.kid}" appears more than once`);
      const raw = Buffer.from(k.secret.buffer, k.secret.byteOffset, k.secret.byteLength);
      const twin = secrets.findIndex((s) => s.equals(raw));
      if (twin >= 0) throw new KeySpecError(`keys "${keys[twin]?.kid}" and "${k.kid}" share the same secret`);
      secrets.push(raw);
      byKid.set(k.kid, deriveKey(k.kid, k.secret));
    });
    const first = keys[0]!;
    this.currentKid = first.kid;
    this.kids = Object.freeze(keys.map((k) => k.kid));
    this.ephemeral = options.ephemeral === true;
    internals.set(this, {
      current: byKid.get(first.kid)!,
      byKid,
      pseudonym: derivePseudonymKey(first.secret),
      secrets: keys.map((k) => ({ kid: k.kid, secret: Uint8Array.from(k.secret) })),
    });
    Object.freeze(this);
  }

  /** Parses an `MRTR_STATE_KEYS` value (`kid:secret,kid2:secret2`, first = current). */
  static fromSpec(spec: string): Keyring {
    return new Keyring(parseKeySpec(spec));
  }

  /** True when state sealed under `kid` may be opened. */
  accepts(kid: string): boolean {
    return internals.get(this)!.byKid.has(kid);
  }

  toJSON(): { currentKid: string; kids: readonly string[]; ephemeral: boolean } {
    return { currentKid: this.currentKid, kids: this.kids, ephemeral: this.ephemeral };
  }
}

/**
 * 32-byte keys for another purpose than requestState (e.g. `mrtr/page-session`), one per key of the keyring, current
 * first: whatever they protect rotates with the keyring, and opens on every instance that shares it. The purpose is
 * part of the derivation, so no two purposes — and never requestState — share a key.
 */
export function purposeKeys(keyring: Keyring, purpose: string): Array<{ kid: string; key: Uint8Array }> {
  if (typeof purpose !== 'string' || purpose === '' || purpose.startsWith('mrtr/requestState'))
    throw new KeySpecError('purposeKeys: name a purpose of your own (not requestState)');
  return keyringInternals(keyring).secrets.map(({ kid, secret }) => ({
    kid,
    key: new Uint8Array(hkdfSync('sha256', secret, HKDF_SALT, `${purpose}/${kid}`, 32)),
  }));
}

/** @internal */
export function keyringInternals(keyring: Keyring): KeyringInternals {
  const k = internals.get(keyring);
  if (k === undefined) throw new StateUsageError('not a Keyring');
  return k;
}

/**
 * Parses `kid:secret,kid2:secret2` (whitespace around entries is ignored). The first entry is the current key.
 * Secrets are unpadded base64url of at least 32 bytes.
 * @throws KeySpecError naming the entry or kid at fault (never echoing a secret).
 */
export function parseKeySpec(spec: string): StateKey[] {
  if (typeof spec !== 'string' || spec.trim() === '') {
    throw new KeySpecError('MRTR_STATE_KEYS is empty; expected kid:secret[,kid:secret...]');
  }
  const seen = new Set<string>();
  return spec.split(',').map((rawEntry, i) => {
    const entry = rawEntry.trim();
    const where = `MRTR_STATE_KEYS entry ${i + 1}`;
    if (entry === '') throw new KeySpecError(`${where} is empty`);
    const colon = entry.indexOf(':');
    if (colon < 0) throw new KeySpecError(`${where} is not of the form kid:secret`);
    const kid = entry.slice(0, colon).trim();
    const text = entry.slice(colon + 1).trim();
    if (!KID_PATTERN.test(kid))
      throw new KeySpecError(`${where}: key id must be 1-16 characters of A-Z a-z 0-9 _ -`);
    if (seen.has(kid)) throw new KeySpecError(`key id "${kid}" appears more than once in MRTR_STATE_KEYS`);
    seen.add(kid);
    if (!isCanonicalBase64url(text)) {
      throw new KeySpecError(`key "${kid}": secret must be unpadded base64url (A-Z a-z 0-9 - _)`);
    }
    const secret = new Uint8Array(Buffer.from(text, 'base64url'));
    checkKey(kid, secret, where);
    return { kid, secret };
  });
}

/**
 * A fresh `kid:secret` entry (32 random bytes) for MRTR_STATE_KEYS. Without a kid, one is made of
 * 'k' and 6 random hex digits.
 */
export function generateKeySpec(options: { kid?: string } = {}): string {
  const kid = options.kid ?? `k${randomBytes(3).toString('hex')}`;
  if (!KID_PATTERN.test(kid)) throw new KeySpecError('key id must be 1-16 characters of A-Z a-z 0-9 _ -');
  return `${kid}:${randomBytes(32).toString('base64url')}`;
}

/**
 * A random single-key keyring for a process with no configured keys. State it seals opens only in this process
 * and dies with it; a fleet needs a shared MRTR_STATE_KEYS.
 */
export function createEphemeralKeyring(): Keyring {
  return new Keyring([{ kid: `e${randomBytes(3).toString('hex')}`, secret: randomBytes(32) }], {
    ephemeral: true,
  });
}

/** The identity a state is bound to. Only a keyed digest of it ever leaves the process. */
export interface Principal {
  subject: string;
  issuer?: string;
  clientId?: string;
  /*
   * What the token says besides who: for handlers and guards to decide on. Not bound into requestState — a client
   * that refreshes its token between rounds, with other scopes, is still the same principal, and every round's
   * scopes are checked afresh.
   */
  readonly name?: string;
  readonly roles?: readonly string[];
  readonly scopes?: readonly string[];
}

/** @internal Unambiguous text form of a principal, for keyed digests. */
export function principalText(p: Principal): string {
  if (p === null || typeof p !== 'object' || typeof p.subject !== 'string') {
    throw new StateUsageError('principal.subject must be a string');
  }
  const issuer = p.issuer ?? null;
  const clientId = p.clientId ?? null;
  if (issuer !== null && typeof issuer !== 'string')
    throw new StateUsageError('principal.issuer must be a string');
  if (clientId !== null && typeof clientId !== 'string')
    throw new StateUsageError('principal.clientId must be a string');
  return JSON.stringify([issuer, p.subject, clientId]);
}

/**
 * A keyed pseudonym of a principal (base64url, 22 characters) for logs and audit records: the raw identity never
 * needs to be written down. With a Keyring the key derives from its *current* key, so the pseudonym changes when
 * the current key rotates; pass a dedicated secret (>= 32 bytes, or its base64url) for pseudonyms that must stay
 * stable across rotations. Do not use it as the codec's principal binding across a rotation; give the codec the
 * Principal object instead (it keys the binding per kid).
 */
export function principalDigest(key: Keyring | Uint8Array | string, principal: Principal): string {
  let k: KeyObject;
  if (key instanceof Keyring) {
    k = keyringInternals(key).pseudonym;
  } else {
    let secret: Uint8Array | undefined;
    if (typeof key === 'string') {
      secret = isCanonicalBase64url(key) ? Buffer.from(key, 'base64url') : undefined;
    } else if (key instanceof Uint8Array) {
      secret = key;
    }
    if (secret === undefined || secret.byteLength < MIN_SECRET_BYTES) {
      throw new KeySpecError(
        `principalDigest needs a Keyring or a secret of at least ${MIN_SECRET_BYTES} bytes`,
      );
    }
    k = derivePseudonymKey(secret);
  }
  return hmacSha256(k, principalText(principal)).subarray(0, 16).toString('base64url');
}
