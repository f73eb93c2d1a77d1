import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { argumentsDigest, canonicalJson, NotJsonError } from '../../src/state/index.js';

function shuffleKeys(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((v, i) => shuffleKeys(v, seed + i));
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    // deterministic rotation of the entry order
    const r = entries.length === 0 ? 0 : seed % entries.length;
    const rotated = [...entries.slice(r), ...entries.slice(0, r)].reverse();
    return Object.fromEntries(rotated.map(([k, v], i) => [k, shuffleKeys(v, seed + i)]));
  }
  return value;
}

describe('canonicalJson', () => {
  it('sorts object keys at every depth', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('is independent of key insertion order', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.nat(), (v, seed) => {
        expect(canonicalJson(shuffleKeys(v, seed))).toBe(canonicalJson(v));
        expect(argumentsDigest(shuffleKeys(v, seed))).toBe(argumentsDigest(v));
      }),
      { numRuns: 300 },
    );
  });

  it('parses back to the same value as JSON.stringify does', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(JSON.parse(canonicalJson(v))).toEqual(JSON.parse(JSON.stringify(v)));
      }),
      { numRuns: 300 },
    );
  });

  it('sorts keys by UTF-16 code units, not code points or locale', () => {
    // U+FF61 (one unit 0xFF61) sorts after U+1F600 (surrogates 0xD83D 0xDE00) by code units.
    const v = { '\uff61': 1, '\u{1f600}': 2, a: 3, B: 4, é: 5 };
    expect(canonicalJson(v)).toBe('{"B":4,"a":3,"é":5,"😀":2,"｡":1}');
  });

  it('serializes strings as JSON does: minimal escapes, lowercase hex, unicode kept', () => {
    expect(canonicalJson('a"b\\c\n\t\u0001\u007f€😀')).toBe('"a\\"b\\\\c\\n\\t\\u0001\u007f€😀"');
    expect(canonicalJson('\ud800')).toBe('"\\ud800"');
  });

  it('serializes numbers in ECMAScript shortest form (RFC 8785 §3.2.2.3)', () => {
    const cases: [number, string][] = [
      [0, '0'],
      [-0, '0'],
      [1, '1'],
      [-1.5, '-1.5'],
      [1e21, '1e+21'],
      [1e-7, '1e-7'],
      [123456789012345680000, '123456789012345680000'],
      [0.1 + 0.2, '0.30000000000000004'],
      [Number.MAX_SAFE_INTEGER, '9007199254740991'],
      [5e-324, '5e-324'],
      [1.7976931348623157e308, '1.7976931348623157e+308'],
    ];
    for (const [n, text] of cases) expect(canonicalJson(n)).toBe(text);
  });

  it('omits undefined members and rejects what JSON cannot say', () => {
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
    expect(() => canonicalJson(Number.NaN)).toThrow(NotJsonError);
    expect(() => canonicalJson(Number.POSITIVE_INFINITY)).toThrow(NotJsonError);
    expect(() => canonicalJson(10n)).toThrow(NotJsonError);
    expect(() => canonicalJson(undefined)).toThrow(NotJsonError);
    expect(() => canonicalJson([() => 1])).toThrow(NotJsonError);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(/nesting/);
  });
});

describe('argumentsDigest', () => {
  it('tells undefined, null and {} apart', () => {
    const ds = new Set([argumentsDigest(undefined), argumentsDigest(null), argumentsDigest({})]);
    expect(ds.size).toBe(3);
  });

  it('is a 43-character base64url SHA-256', () => {
    expect(argumentsDigest({ a: 1 })).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('changes when any argument changes', () => {
    expect(argumentsDigest({ env: 'prod' })).not.toBe(argumentsDigest({ env: 'prd' }));
    expect(argumentsDigest([1, 2])).not.toBe(argumentsDigest([2, 1]));
    expect(argumentsDigest({ n: 1 })).not.toBe(argumentsDigest({ n: '1' }));
  });
});
