// Sensitive fields: their values never reach the audit trail. Each is replaced by a keyed digest (HMAC-SHA256 of its
// canonical JSON), so equal values still correlate across events and instances that share the key, while a reader
// of the trail cannot test guesses of a low-entropy secret (an OTP, a PIN) against an unkeyed hash.
import crypto, { createHash } from 'node:crypto';
import { canonicalJson } from '../state/index.js';
import { hmacSha256 } from '../state/internal.js';

// crypto.hash (Node >= 20.12): no Hash object per digest.
const oneShotHash = (crypto as { hash?: (algorithm: string, data: string, encoding: 'base64url') => string })
  .hash;

/** What a redacted value is recorded as. */
export const REDACTED = '$redacted';

export class Redactor {
  readonly #key: Buffer;
  constructor(key: Buffer) {
    this.#key = key;
  }
  /** `hmac-sha256:` + base64url, over the canonical JSON (`undefined` → the empty string). */
  keyed(value: unknown): string {
    return `hmac-sha256:${hmacSha256(this.#key, value === undefined ? '' : canonicalJson(value)).toString('base64url')}`;
  }
  /** `sha256:` + base64url, unkeyed: for arguments with nothing sensitive in them. */
  plain(value: unknown): string {
    const text = value === undefined ? '' : canonicalJson(value);
    return `sha256:${oneShotHash ? oneShotHash('sha256', text, 'base64url') : createHash('sha256').update(text).digest('base64url')}`;
  }
}

/**
 * A copy of `value` where every object member named in `names`, at any depth, is `{ "$redacted": keyed digest }`.
 * Values without such a member are returned as they are (no copy).
 */
export function redactFields(
  value: unknown,
  names: readonly string[],
  redactor: Redactor,
): { value: unknown; redacted: boolean } {
  let redacted = false;
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v !== 'object' || v === null || depth > 64) return v;
    if (Array.isArray(v)) {
      let copy: unknown[] | undefined;
      v.forEach((item, i) => {
        const next = walk(item, depth + 1);
        if (next === item) return;
        copy ??= [...v];
        copy[i] = next;
      });
      return copy ?? v;
    }
    let copy: Record<string, unknown> | undefined;
    for (const [key, item] of Object.entries(v)) {
      let next: unknown;
      if (names.includes(key)) {
        redacted = true;
        next = { [REDACTED]: redactor.keyed(item) };
      } else next = walk(item, depth + 1);
      if (next !== item) {
        // Null prototype: a client-chosen key named `__proto__` stays a plain member of the copy.
        copy ??= Object.assign(Object.create(null) as Record<string, unknown>, v);
        copy[key] = next;
      }
    }
    return copy ?? v;
  };
  const out = walk(value, 0);
  return { value: out, redacted };
}
