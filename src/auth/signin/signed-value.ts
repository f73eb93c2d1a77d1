// Small signed, expiring values (the session cookie, the sign-in transaction): `kid.payload.mac`, HMAC-SHA256 over
// purpose, kid and payload, keys from the server's keyring so any instance opens what another one signed. Signed, not
// encrypted: nothing secret goes in (who is signed in, a PKCE verifier that is useless without the code).
import { KidSigner, type SigningKey } from '../../state/internal.js';

export type { SigningKey };

export class SignedValues {
  private readonly signer: KidSigner;
  constructor(
    keys: readonly SigningKey[],
    /** Separates the purposes that share the keys: a value made for one never opens as another. */
    purpose: string,
  ) {
    this.signer = new KidSigner(keys, (kid, payload) => `${purpose}\n${kid}\n${payload}`);
  }

  /** Sign `value` (JSON) so that it opens until `expiresAt` (ms since the epoch). */
  sign(value: Record<string, unknown>, expiresAt: number): string {
    return this.signer.sign(Buffer.from(JSON.stringify({ ...value, exp: expiresAt })).toString('base64url'));
  }

  /** The value, or undefined for anything forged, edited, signed under an unknown key, or expired. */
  open(token: string | undefined, now = Date.now()): Record<string, unknown> | undefined {
    if (!token) return undefined;
    const signed = this.signer.verify(token);
    if (typeof signed === 'string') return undefined;
    let value: unknown;
    try {
      value = JSON.parse(Buffer.from(signed.body, 'base64url').toString('utf8'));
    } catch {
      return undefined;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    const record = value as Record<string, unknown>;
    if (typeof record.exp !== 'number' || record.exp <= now) return undefined;
    return record;
  }
}
