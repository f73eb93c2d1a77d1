import { createHash } from 'node:crypto';
import { MrtrError } from '../protocol/index.js';

// Hand-written rather than a dependency: it is ~40 lines, sits on the hot path of every seal/open, and we want
// hard failures (non-finite numbers, bigint, cycles via a depth cap) instead of a library's silent choices.
// Follows RFC 8785 (JCS): object members sorted by UTF-16 code units, ECMAScript number serialization
// (what JSON.stringify emits for finite numbers), JSON.stringify string escaping. One deviation: lone
// surrogates are escaped as \udXXX (JSON.stringify's well-formed output) instead of being rejected.

const MAX_DEPTH = 1000;

/** The value has no canonical JSON form. */
export class NotJsonError extends MrtrError {
  override readonly name = 'NotJsonError';
  declare readonly code: 'ERR_NOT_JSON';
  constructor(message: string) {
    super('ERR_NOT_JSON', message);
  }
}

/**
 * Canonical JSON text of a JSON value (RFC 8785 style). Equal values give equal text regardless of key order.
 * Object members whose value is `undefined` are omitted, as in JSON.stringify.
 * @throws NotJsonError for non-finite numbers, bigint, functions, symbols, `undefined` at the top or in arrays,
 *   and nesting deeper than 1000 levels (which also catches cycles).
 */
export function canonicalJson(value: unknown): string {
  return write(value, 0);
}

function write(value: unknown, depth: number): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new NotJsonError(`canonicalJson: ${value} is not a JSON number`);
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (depth >= MAX_DEPTH)
        throw new NotJsonError(`canonicalJson: nesting deeper than ${MAX_DEPTH} levels`);
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out += ',';
          out += write(value[i], depth + 1);
        }
        return out + ']';
      }
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj).sort();
      let out = '{';
      let first = true;
      for (const k of keys) {
        const v = obj[k];
        if (v === undefined) continue;
        if (!first) out += ',';
        first = false;
        out += JSON.stringify(k) + ':' + write(v, depth + 1);
      }
      return out + '}';
    }
    default:
      throw new NotJsonError(`canonicalJson: ${typeof value} is not a JSON value`);
  }
}

/**
 * SHA-256 of the canonical JSON of request arguments, base64url (43 characters). Unkeyed, for audit records;
 * the sealed state itself binds arguments with a keyed tag. `undefined` (no arguments) digests the empty
 * string, so it differs from `null` and from `{}`.
 */
export function argumentsDigest(args: unknown): string {
  return createHash('sha256')
    .update(args === undefined ? '' : canonicalJson(args))
    .digest('base64url');
}
