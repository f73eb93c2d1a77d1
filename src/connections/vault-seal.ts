// The vault's encryption: one AES-256-GCM record per grant, under a key of the server's keyring (a SealedBox). The
// record names its key id; the additional data is the binding (owner, connection, granting issuer, scopes), so a
// record copied to another person's or connection's place, or edited, does not open.
import type { Keyring } from '../state/index.js';
import { isBox, SealedBox } from './sealed-box.js';

const PURPOSE = 'mrtr/connections-vault';
const FORMAT = 1;

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
  readonly #box: SealedBox;
  readonly currentKid: string;

  constructor(keyring: Keyring) {
    this.#box = new SealedBox(keyring, PURPOSE, FORMAT);
    this.currentKid = this.#box.currentKid;
  }

  /** Seal `secret` for `binding` under the current key. */
  seal(binding: VaultBinding, secret: string): string {
    const record: SealedRecord = {
      v: FORMAT,
      ...this.#box.seal(bound(binding), secret),
      iss: binding.issuer,
      scopes: [...binding.scopes],
    };
    return JSON.stringify(record);
  }

  /**
   * True for a well-formed record sealed under a key this keyring does not hold: a newer key another instance already
   * has (a rotation under way), or a retired one. Neither this instance nor anyone may tell which, so it is left alone.
   */
  sealedUnderUnknownKey(stored: string): boolean {
    const record = parse(stored);
    return record !== undefined && !this.#box.knows(record.kid);
  }

  /** The record opened for (owner, connection), or undefined: malformed, another binding, edited, or an unknown key. */
  open(stored: string, owner: Omit<VaultBinding, 'issuer' | 'scopes'>): OpenedRecord | undefined {
    const record = parse(stored);
    if (!record) return undefined;
    const secret = this.#box.open(record, bound({ ...owner, issuer: record.iss, scopes: record.scopes }));
    return secret === undefined
      ? undefined
      : { kid: record.kid, issuer: record.iss, scopes: record.scopes, secret };
  }
}

/** The binding in a fixed order; scopes sorted, so their order is not part of it. */
function bound(b: VaultBinding): unknown[] {
  return [b.ownerIssuer, b.ownerSubject, b.connection, b.issuer, [...b.scopes].sort()];
}

function parse(stored: string): SealedRecord | undefined {
  let r: unknown;
  try {
    r = JSON.parse(stored);
  } catch {
    return undefined;
  }
  if (r === null || typeof r !== 'object') return undefined;
  const { v, iss, scopes } = r as Record<string, unknown>;
  const ok =
    v === FORMAT &&
    isBox(r) &&
    typeof iss === 'string' &&
    Array.isArray(scopes) &&
    scopes.every((s) => typeof s === 'string');
  return ok ? (r as SealedRecord) : undefined;
}
