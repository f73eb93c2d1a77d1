import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBase64urlStrict, isCanonicalBase64url } from '../../src/state/index.js';

describe('strict base64url', () => {
  it('accepts exactly what Buffer emits', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 200 }), (bytes) => {
        const s = Buffer.from(bytes).toString('base64url');
        expect(decodeBase64urlStrict(s)?.equals(Buffer.from(bytes))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('rejects every other spelling', () => {
    const s = randomBytes(31).toString('base64url'); // 42 chars, 2 spare bits
    for (const bad of [
      '',
      `${s}=`,
      ` ${s}`,
      `${s}\n`,
      s.replace(/./, '+'),
      s.replace(/./, '/'),
      s.slice(0, 41),
      `${s}AAA`,
    ]) {
      expect(isCanonicalBase64url(bad)).toBe(false);
    }
    expect(isCanonicalBase64url('AB')).toBe(false); // non-zero trailing bits: same byte as 'AA'
    expect(isCanonicalBase64url('AA')).toBe(true);
    expect(isCanonicalBase64url(1 as unknown as string)).toBe(false);
  });
});
