// Small signed, expiring values (the session cookie, the sign-in transaction): `kid.payload.mac`, HMAC-SHA256 over
// kid and payload, keys from the server's keyring so any instance opens what another one signed. Signed, not
// encrypted: nothing secret goes in (who is signed in, a PKCE verifier that is useless without the code).
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface SigningKey {
  kid: string;
  key: Uint8Array;
}

export class SignedValues {
  private readonly byKid: Map<string, Uint8Array>;
  constructor(
    private readonly keys: readonly SigningKey[],
    /** Separates the purposes that share the keys: a value made for one never opens as another. */
    private readonly purpose: string,
  ) {
    // Internal assertion: BrowserSignIn refuses empty keys with a SignInConfigError before it gets here.
    if (keys.length === 0) throw new TypeError('SignedValues: at least one key');
    this.byKid = new Map(keys.map((k) => [k.kid, k.key]));
  }

  private mac(key: Uint8Array, kid: string, payload: string): Buffer {
    return createHmac('sha256', key).update(`${this.purpose}\n${kid}\n${payload}`).digest();
  }

  /** Sign `value` (JSON) so that it opens until `expiresAt` (ms since the epoch). */
  sign(value: Record<string, unknown>, expiresAt: number): string {
    const { kid, key } = this.keys[0]!;
    const payload = Buffer.from(JSON.stringify({ ...value, exp: expiresAt })).toString('base64url');
    return `${kid}.${payload}.${this.mac(key, kid, payload).toString('base64url')}`;
  }

  /** The value, or undefined for anything forged, edited, signed under an unknown key, or expired. */
  open(token: string | undefined, now = Date.now()): Record<string, unknown> | undefined {
    if (!token || token.length > 4096) return undefined;
    const [kid, payload, mac, extra] = token.split('.');
    if (extra !== undefined || !kid || !payload || !mac) return undefined;
    const key = this.byKid.get(kid);
    if (!key) return undefined;
    const given = Buffer.from(mac, 'base64url');
    const expected = this.mac(key, kid, payload);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return undefined;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    const record = value as Record<string, unknown>;
    if (typeof record.exp !== 'number' || record.exp <= now) return undefined;
    return record;
  }
}
