// Strict base64url (RFC 4648 §5, no padding). Buffer.from(s, 'base64url') silently skips foreign characters,
// accepts '+', '/', '=' and whitespace, and ignores non-zero trailing bits, so several strings would decode to
// the same bytes; we accept exactly one spelling per byte string. Node's encoder emits only that spelling, so
// "decodes and re-encodes to itself" is the whole check — and it is ~5x faster than a per-character loop.

/** Decodes non-empty, canonical, unpadded base64url; returns undefined for anything else. */
export function decodeBase64urlStrict(s: string): Buffer | undefined {
  if (s.length === 0) return undefined;
  const bytes = Buffer.from(s, 'base64url');
  return bytes.toString('base64url') === s ? bytes : undefined;
}

/** True when `s` is non-empty, canonical, unpadded base64url (the only form `Buffer#toString('base64url')` emits). */
export function isCanonicalBase64url(s: string): boolean {
  return typeof s === 'string' && decodeBase64urlStrict(s) !== undefined;
}
