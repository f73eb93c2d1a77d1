// AES-256-GCM under the keys a keyring derives for one purpose: the current key seals, every key opens. The stored
// form names its key id; the additional data is the purpose, the format, the key id and the caller's binding, so a
// box copied to another place or purpose, or edited, does not open. The vault's grants and the connect pages'
// authorization requests are both kept in such boxes.
import { createCipheriv, createDecipheriv, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import { type Keyring, purposeKeys } from '../state/index.js';

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A sealed secret: the key it was sealed under, the nonce and the ciphertext with its tag (base64url). */
export interface Box {
  readonly kid: string;
  readonly iv: string;
  readonly ct: string;
}

export class SealedBox {
  // Private fields: inspecting or serializing the owner shows no key.
  readonly #keys: ReadonlyMap<string, KeyObject>;
  readonly currentKid: string;

  constructor(
    keyring: Keyring,
    private readonly purpose: string,
    private readonly format: number,
  ) {
    const keys = purposeKeys(keyring, purpose);
    this.#keys = new Map(keys.map(({ kid, key }) => [kid, createSecretKey(key)]));
    this.currentKid = keys[0]!.kid;
  }

  /** True when a box under `kid` may be opened here. */
  knows(kid: string): boolean {
    return this.#keys.has(kid);
  }

  /** Seal `secret`, bound to `binding`, under the current key. */
  seal(binding: readonly unknown[], secret: string): Box {
    const kid = this.currentKid;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#keys.get(kid)!, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(this.#additionalData(kid, binding));
    const ct = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return { kid, iv: iv.toString('base64url'), ct: ct.toString('base64url') };
  }

  /** The secret in `box` if it was sealed for `binding` under a key held here; else undefined, never a throw. */
  open(box: Box, binding: readonly unknown[]): string | undefined {
    const key = this.#keys.get(box.kid);
    if (!key) return undefined;
    const iv = Buffer.from(box.iv, 'base64url');
    const ct = Buffer.from(box.ct, 'base64url');
    if (iv.length !== IV_BYTES || ct.length < TAG_BYTES) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(this.#additionalData(box.kid, binding));
      decipher.setAuthTag(ct.subarray(ct.length - TAG_BYTES));
      return Buffer.concat([
        decipher.update(ct.subarray(0, ct.length - TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      // A failed tag check is the expected outcome of an edited or misplaced box: it reads as none.
      return undefined;
    }
  }

  /** The binding as unambiguous bytes (a JSON array). */
  #additionalData(kid: string, binding: readonly unknown[]): Buffer {
    return Buffer.from(JSON.stringify([this.purpose, this.format, kid, ...binding]), 'utf8');
  }
}

/** A box as stored, if `value` has the shape of one (whatever else the record holds). */
export function isBox(value: unknown): value is Box {
  if (value === null || typeof value !== 'object') return false;
  const { kid, iv, ct } = value as Record<string, unknown>;
  return typeof kid === 'string' && typeof iv === 'string' && typeof ct === 'string';
}
