// The vault's encryption: one AES-256-GCM record per grant, under a key of the server's keyring. The record names its
// key id; the additional data is the binding (owner, connection, granting issuer, scopes), so a record copied to
// another person's or connection's place, or edited, does not open.
import { createCipheriv, createDecipheriv, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import { type Keyring, purposeKeys } from '../state/index.js';

const PURPOSE = 'mrtr/connections-vault';
const FORMAT = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** What a record is bound to: who owns it, for which connection, and what the grant is (issuer and scopes). */
export interface VaultBinding {
  readonly ownerIssuer: string;
  readonly ownerSubject: string;
  readonly connection: string;
  readonly issuer: string;
  readonly scopes: readonly string[];
}

/** A record opened: its secret part, the key id it was sealed under, and the binding's grant half. */
export interface OpenedRecord {
  readonly kid: string;
  readonly issuer: string;
  readonly scopes: string[];
  readonly secret: string;
}

/** The stored form: the grant's issuer and scopes in the clear (they are the binding, not secrets), the rest sealed. */
interface SealedRecord {
  v: number;
  kid: string;
  iss: string;
  scopes: string[];
  iv: string;
  ct: string;
}

export class VaultSeal {
  // Private fields: inspecting or serializing the vault shows no key.
  readonly #keys: ReadonlyMap<string, KeyObject>;
  readonly currentKid: string;

  constructor(keyring: Keyring) {
    const keys = purposeKeys(keyring, PURPOSE);
    this.#keys = new Map(keys.map(({ kid, key }) => [kid, createSecretKey(key)]));
    this.currentKid = keys[0]!.kid;
  }

  /** Seal `secret` for `binding` under the current key. */
  seal(binding: VaultBinding, secret: string): string {
    const kid = this.currentKid;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#keys.get(kid)!, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(additionalData(kid, binding));
    const ct = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    const record: SealedRecord = {
      v: FORMAT,
      kid,
      iss: binding.issuer,
      scopes: [...binding.scopes],
      iv: iv.toString('base64url'),
      ct: ct.toString('base64url'),
    };
    return JSON.stringify(record);
  }

  /**
   * True for a well-formed record sealed under a key this keyring does not hold: a newer key another instance already
   * has (a rotation under way), or a retired one. Neither this instance nor anyone may tell which, so it is left alone.
   */
  sealedUnderUnknownKey(stored: string): boolean {
    const record = parse(stored);
    return record !== undefined && !this.#keys.has(record.kid);
  }

  /** The record opened for (owner, connection), or undefined: malformed, another binding, edited, or an unknown key. */
  open(stored: string, owner: Omit<VaultBinding, 'issuer' | 'scopes'>): OpenedRecord | undefined {
    const record = parse(stored);
    const key = record && this.#keys.get(record.kid);
    if (!record || !key) return undefined;
    const iv = Buffer.from(record.iv, 'base64url');
    const ct = Buffer.from(record.ct, 'base64url');
    if (iv.length !== IV_BYTES || ct.length < TAG_BYTES) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(additionalData(record.kid, { ...owner, issuer: record.iss, scopes: record.scopes }));
      decipher.setAuthTag(ct.subarray(ct.length - TAG_BYTES));
      const secret = Buffer.concat([
        decipher.update(ct.subarray(0, ct.length - TAG_BYTES)),
        decipher.final(),
      ]);
      return { kid: record.kid, issuer: record.iss, scopes: record.scopes, secret: secret.toString('utf8') };
    } catch {
      // A failed tag check is the expected outcome of an edited or misplaced record: it reads as none.
      return undefined;
    }
  }
}

/** The binding as unambiguous bytes (a JSON array); scopes sorted, so their order is not part of it. */
function additionalData(kid: string, b: VaultBinding): Buffer {
  const scopes = [...b.scopes].sort();
  return Buffer.from(
    JSON.stringify([PURPOSE, FORMAT, kid, b.ownerIssuer, b.ownerSubject, b.connection, b.issuer, scopes]),
    'utf8',
  );
}

function parse(stored: string): SealedRecord | undefined {
  let r: unknown;
  try {
    r = JSON.parse(stored);
  } catch {
    return undefined;
  }
  if (r === null || typeof r !== 'object') return undefined;
  const { v, kid, iss, scopes, iv, ct } = r as Record<string, unknown>;
  const ok =
    v === FORMAT &&
    typeof kid === 'string' &&
    typeof iss === 'string' &&
    Array.isArray(scopes) &&
    scopes.every((s) => typeof s === 'string') &&
    typeof iv === 'string' &&
    typeof ct === 'string';
  return ok ? (r as SealedRecord) : undefined;
}
