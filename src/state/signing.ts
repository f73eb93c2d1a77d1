// HMAC-SHA256 signing, once for every value the server hands out and must know again: requestState's binding tags
// and session keys, 2025 session ids, sign-in cookies. One MAC, one constant-time check, one `kid.body.mac` format.
import { createHmac, createSecretKey, type KeyObject, timingSafeEqual } from 'node:crypto';
import { InvalidArgumentError } from '../protocol/index.js';

/** One key of a set that signs; its id travels in the token, so a value signed before a rotation still verifies. */
export interface SigningKey {
  kid: string;
  key: Uint8Array;
}

/** HMAC-SHA256 of `parts` fed in order, nothing between them: a caller that needs separators writes them itself. */
export function hmacSha256(
  key: KeyObject | Uint8Array,
  ...parts: ReadonlyArray<string | Uint8Array>
): Buffer {
  const hmac = createHmac('sha256', key);
  for (const part of parts) hmac.update(part);
  return hmac.digest();
}

/** Whether `given` is `expected`, compared in constant time; another length is false at once (lengths are public). */
export function macMatches(given: Uint8Array, expected: Uint8Array): boolean {
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** A key for one use, derived as HMAC-SHA256(parent, label): requestState's per-session AEAD keys. */
export function deriveSubkey(parent: KeyObject | Uint8Array, label: string | Uint8Array): KeyObject {
  return createSecretKey(hmacSha256(parent, label));
}

/** Longest token `KidSigner.verify` reads; anything longer is refused before any work. */
export const MAX_SIGNED_TOKEN_BYTES = 4096;

/**
 * Tokens `kid.body.mac`: `body` is the caller's (base64url, so no dot), `mac` the base64url HMAC-SHA256 of
 * `macInput(kid, body)` under the key `kid` names. Signs with the first key; verifies with any of them.
 */
export class KidSigner {
  readonly #keys: readonly SigningKey[];
  readonly #byKid: ReadonlyMap<string, SigningKey>;
  readonly #macInput: (kid: string, body: string) => string;

  constructor(keys: readonly SigningKey[], macInput: (kid: string, body: string) => string) {
    if (keys.length === 0) throw new InvalidArgumentError('KidSigner: at least one key');
    this.#keys = keys;
    this.#byKid = new Map(keys.map((k) => [k.kid, k]));
    this.#macInput = macInput;
  }

  /** The key that signs: the first one. */
  get current(): SigningKey {
    return this.#keys[0]!;
  }

  sign(body: string): string {
    const { kid, key } = this.current;
    return `${kid}.${body}.${hmacSha256(key, this.#macInput(kid, body)).toString('base64url')}`;
  }

  /**
   * The body of an authentic token and the key that signed it; `malformed` for anything not `kid.body.mac` or too
   * long, `forged` for an unknown kid or a MAC that does not match (compared as text: one spelling per MAC).
   */
  verify(token: string): { body: string; key: SigningKey } | 'malformed' | 'forged' {
    if (token.length > MAX_SIGNED_TOKEN_BYTES) return 'malformed';
    const parts = token.split('.');
    if (parts.length !== 3) return 'malformed';
    const [kid, body, mac] = parts as [string, string, string];
    if (kid === '' || body === '' || mac === '') return 'malformed';
    const key = this.#byKid.get(kid);
    if (!key) return 'forged';
    const expected = Buffer.from(hmacSha256(key.key, this.#macInput(kid, body)).toString('base64url'));
    if (!macMatches(Buffer.from(mac), expected)) return 'forged';
    return { body, key };
  }
}
