// Header value encoding (streamable-http.mdx "Value Encoding"): one text per value, both ways.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeHeaderValue, encodeHeaderValue } from '../../src/protocol/index.js';

describe('header values', () => {
  it('decode what encode wrote, for any string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (value) => {
        const encoded = encodeHeaderValue(value);
        // Lone surrogates have no UTF-8 form; every well-formed string round-trips.
        if (Buffer.from(value, 'utf8').toString('utf8') !== value) return;
        expect(decodeHeaderValue(encoded)).toBe(value);
      }),
    );
  });

  it('refuses a Base64 body that is not the one encoding of its bytes', () => {
    expect(decodeHeaderValue('=?base64?YQ==?=')).toBe('a');
    expect(decodeHeaderValue('=?base64?YR==?=')).toBeUndefined();
    expect(decodeHeaderValue('=?base64?cXVlcnl=?=')).toBeUndefined();
    expect(decodeHeaderValue('=?base64?cXVlcnk=?=')).toBe('query');
    expect(decodeHeaderValue('=?base64?YQ?=')).toBeUndefined();
  });
});
