// Property-based attack suite: the codec must accept nothing it should not.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  Keyring,
  OPEN_FAILURE_REASONS,
  type StateBinding,
  StateCodec,
} from '../../src/state/index.js';
import { alice, binding, codec, flipBit, key, payload, T0, testClock } from './fixtures.js';

const RUNS = 300;
const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const b64Char = fc.constantFrom(...B64URL.split(''));
const b64String = (min: number, max: number) => fc.string({ unit: b64Char, minLength: min, maxLength: max });

const k1 = key('k1');
const k2 = key('k2');
const c = codec([k1, k2]);
const small = c.seal(payload, binding);
const zipped = c.seal(
  { journal: Array.from({ length: 30 }, (_, i) => ({ key: `q${i}`, ok: true })) },
  binding,
);
const tokens = fc.constantFrom(small, zipped);

function rejected(token: unknown, b: StateBinding = binding, codecUnderTest: StateCodec = c): string {
  const r = codecUnderTest.open(token, b);
  expect(r.ok).toBe(false);
  if (r.ok) return 'ok';
  expect(OPEN_FAILURE_REASONS).toContain(r.reason);
  return r.reason;
}

describe('attacks on the token bytes', () => {
  it('sanity: the untouched tokens open', () => {
    expect(c.open(small, binding).ok).toBe(true);
    expect(c.open(zipped, binding).ok).toBe(true);
  });

  it('rejects any single bit flip', () => {
    fc.assert(
      fc.property(tokens, fc.nat(), fc.nat(7), (t, i, bit) => {
        const reason = rejected(flipBit(t, i, bit));
        expect(['auth_failed', 'unknown_key', 'unsupported_version', 'malformed']).toContain(reason);
      }),
      { numRuns: RUNS },
    );
  });

  it('rejects every bit flip of the small token, exhaustively', () => {
    const n = Buffer.from(small, 'base64url').length;
    for (let i = 0; i < n; i++) for (let bit = 0; bit < 8; bit++) rejected(flipBit(small, i, bit));
  });

  it('rejects random multi-byte corruption', () => {
    fc.assert(
      fc.property(
        tokens,
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 8 }),
        (t, edits) => {
          const bytes = Buffer.from(t, 'base64url');
          const seen = new Set<number>();
          for (const [i, x] of edits) {
            const at = i % bytes.length;
            if (seen.has(at)) continue; // two edits at one byte could cancel out
            seen.add(at);
            bytes[at]! ^= x;
          }
          rejected(bytes.toString('base64url'));
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('rejects substituting any character, including non-canonical final characters', () => {
    fc.assert(
      fc.property(tokens, fc.nat(), b64Char, (t, i, ch) => {
        const at = i % t.length;
        fc.pre(t[at] !== ch);
        rejected(t.slice(0, at) + ch + t.slice(at + 1));
      }),
      { numRuns: RUNS },
    );
  });

  it('rejects a final character that decodes to the same bytes (malleable trailing bits)', () => {
    let tried = 0;
    for (const t of [
      small,
      zipped,
      ...Array.from({ length: 20 }, (_, i) => c.seal('x'.repeat(i), binding)),
    ]) {
      const rem = t.length % 4;
      if (rem === 0) continue;
      const v = B64URL.indexOf(t[t.length - 1]!);
      const spare = rem === 2 ? 0x0f : 0x03;
      for (let low = 1; low <= spare; low++) {
        const forged = t.slice(0, -1) + B64URL[v | low];
        expect(Buffer.from(forged, 'base64url').equals(Buffer.from(t, 'base64url'))).toBe(true);
        expect(rejected(forged)).toBe('malformed');
        tried++;
      }
    }
    expect(tried).toBeGreaterThan(0);
  });

  it('rejects truncation to any length', () => {
    for (const t of [small, zipped]) for (let n = 0; n < t.length; n++) rejected(t.slice(0, n));
  });

  it('rejects extension by any base64url suffix', () => {
    fc.assert(
      fc.property(tokens, b64String(1, 40), (t, suffix) => {
        rejected(t + suffix);
      }),
      { numRuns: RUNS },
    );
  });

  it('rejects splicing session, nonce, ciphertext or tag from another token', () => {
    // b comes from another process with the same keyring: another session, so every region differs.
    const a = Buffer.from(c.seal(payload, binding, { flowId: 'f' }), 'base64url');
    const b = Buffer.from(codec([k1, k2]).seal(payload, binding, { flowId: 'f' }), 'base64url');
    expect(a.length).toBe(b.length);
    const header = 4; // version, flags|kidlen, "k1"
    for (const [from, to] of [
      [header, header + 16], // session id
      [header + 16, header + 28], // nonce
      [header + 28, a.length - 16], // ciphertext
      [a.length - 16, a.length], // GCM tag
    ] as const) {
      const mix = Buffer.from(a);
      b.copy(mix, from, from, to);
      expect(mix.equals(a)).toBe(false);
      expect(rejected(mix.toString('base64url'))).toBe('auth_failed');
    }
  });

  it('gives every token its own nonce within a session', () => {
    const nonces = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const t = Buffer.from(c.seal(payload, binding, { flowId: 'f' }), 'base64url');
      nonces.add(t.toString('hex', 20, 32));
    }
    expect(nonces.size).toBe(200);
  });

  it('rejects flipping the compression flag (flags are authenticated)', () => {
    for (const t of [small, zipped]) {
      const bytes = Buffer.from(t, 'base64url');
      bytes[1]! ^= 0x10;
      expect(rejected(bytes.toString('base64url'))).toBe('auth_failed');
    }
  });

  it('rejects random base64url strings (forgeries)', () => {
    fc.assert(
      fc.property(b64String(0, 400), (s) => {
        rejected(s);
      }),
      { numRuns: RUNS },
    );
  });

  it('rejects forgeries built on a valid header', () => {
    const header = small.slice(0, 4); // 3 bytes: version, flags|kidlen, "k"
    fc.assert(
      fc.property(b64String(90, 300), (s) => {
        rejected(header + s);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('base64 alphabet tricks', () => {
  const tricks: [string, (t: string, i: number) => string][] = [
    ['padding', (t) => t + '='.repeat((4 - (t.length % 4)) % 4 || 1)],
    ['double padding', (t) => `${t}==`],
    ['"+" for "-"', (t, i) => t.slice(0, i) + '+' + t.slice(i + 1)],
    ['"/" for "_"', (t, i) => t.slice(0, i) + '/' + t.slice(i + 1)],
    ['a space', (t, i) => t.slice(0, i) + ' ' + t.slice(i)],
    ['a newline', (t, i) => t.slice(0, i) + '\n' + t.slice(i)],
    ['a tab', (t, i) => t.slice(0, i) + '\t' + t.slice(i)],
    ['a CR', (t, i) => t.slice(0, i) + '\r' + t.slice(i)],
    ['leading whitespace', (t) => ` ${t}`],
    ['trailing whitespace', (t) => `${t}\n`],
    ['a NUL', (t, i) => t.slice(0, i) + '\0' + t.slice(i)],
    ['a fullwidth letter', (t, i) => t.slice(0, i) + 'Ａ' + t.slice(i + 1)],
    ['a dot', (t, i) => t.slice(0, i) + '.' + t.slice(i)],
    ['a scheme prefix', (t) => `Bearer ${t}`],
    ['standard base64', (t) => Buffer.from(t, 'base64url').toString('base64')],
  ];
  for (const [name, mutate] of tricks) {
    it(`rejects ${name} as malformed`, () => {
      fc.assert(
        fc.property(tokens, fc.nat(), (t, i) => {
          const forged = mutate(t, i % t.length);
          fc.pre(forged !== t);
          expect(rejected(forged)).toBe('malformed');
        }),
        { numRuns: 50 },
      );
    });
  }

  it('rejects "+" and "/" even where Buffer would decode them to the same bytes', () => {
    const withDash = Array.from({ length: 200 }, () => c.seal(payload, binding)).find((t) => /[-_]/.test(t))!;
    const swapped = withDash.replace(/-/g, '+').replace(/_/g, '/');
    expect(Buffer.from(swapped, 'base64url').equals(Buffer.from(withDash, 'base64url'))).toBe(true);
    expect(rejected(swapped)).toBe('malformed');
  });
});

describe('keys', () => {
  it('rejects a swapped key id', () => {
    const bytes = Buffer.from(c.seal(payload, binding), 'base64url');
    expect(bytes.toString('latin1', 2, 4)).toBe('k1');
    bytes.write('k2', 2, 'latin1');
    expect(rejected(bytes.toString('base64url'))).toBe('auth_failed');
  });

  it('rejects an unknown key id', () => {
    fc.assert(
      fc.property(fc.string({ unit: b64Char, minLength: 1, maxLength: 16 }), (kid) => {
        fc.pre(kid !== 'k1' && kid !== 'k2');
        const other = codec([key(kid)]);
        expect(rejected(other.seal(payload, binding))).toBe('unknown_key');
      }),
      { numRuns: 100 },
    );
  });

  it('rejects the same kid with another secret', () => {
    expect(rejected(codec([key('k1')]).seal(payload, binding))).toBe('auth_failed');
  });

  it('rejects a retired key', () => {
    const old = key('old');
    const fresh = key('new');
    const t = codec([old]).seal(payload, binding);
    expect(rejected(t, binding, codec([fresh]))).toBe('unknown_key');
  });
});

describe('bindings under attack', () => {
  const text = fc.string({ unit: 'grapheme', maxLength: 20 });
  const principals = fc.record(
    { subject: text, issuer: text, clientId: text },
    { requiredKeys: ['subject'] },
  );

  it('rejects another principal', () => {
    fc.assert(
      fc.property(principals, principals, (p, q) => {
        fc.pre(
          JSON.stringify([p.issuer, p.subject, p.clientId]) !==
            JSON.stringify([q.issuer, q.subject, q.clientId]),
        );
        const t = c.seal(payload, { ...binding, principal: p });
        expect(rejected(t, { ...binding, principal: q })).toBe('wrong_principal');
      }),
      { numRuns: RUNS },
    );
  });

  it('rejects another tool, method or arguments', () => {
    fc.assert(
      fc.property(text, text, fc.jsonValue(), text, text, fc.jsonValue(), (m1, t1, a1, m2, t2, a2) => {
        const b1 = { principal: alice, method: m1, target: t1, arguments: a1 };
        const b2 = { principal: alice, method: m2, target: t2, arguments: a2 };
        const same = m1 === m2 && t1 === t2 && canonicalJson(a1) === canonicalJson(a2);
        fc.pre(!same);
        expect(rejected(c.seal(payload, b1), b2)).toBe('wrong_request');
      }),
      { numRuns: RUNS },
    );
  });

  it('does not confuse method and target boundaries', () => {
    const t = c.seal(payload, { method: 'tools/call', target: 'ab' });
    expect(rejected(t, { method: 'tools/calla', target: 'b' })).toBe('wrong_request');
    expect(rejected(t, { method: 'tools/call', target: 'a', arguments: 'b' })).toBe('wrong_request');
  });

  it('rejects another audience', () => {
    const ring = new Keyring([k1]);
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 30 }),
        fc.string({ minLength: 1, maxLength: 30 }),
        (x, y) => {
          fc.pre(x !== y);
          const a = new StateCodec({ keyring: ring, audience: x });
          const b = new StateCodec({ keyring: ring, audience: y });
          expect(rejected(a.seal(payload, binding), binding, b)).toBe('wrong_audience');
        },
      ),
      { numRuns: 100 },
    );
  });

  it('rejects expired state at any later time', () => {
    const clock = testClock();
    const cc = new StateCodec({ keyring: new Keyring([k1]), audience: 'a', now: clock.now });
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 86_400_000 }),
        fc.integer({ min: 0, max: 10 ** 12 }),
        (ttl, late) => {
          clock.set(T0);
          const t = cc.seal(payload, binding, { ttlMs: ttl });
          clock.set(T0 + ttl + late);
          expect(rejected(t, binding, cc)).toBe('expired');
          clock.set(T0 + ttl - 1);
          expect(cc.open(t, binding).ok).toBe(true);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('survives garbage bindings without throwing', () => {
    fc.assert(
      fc.property(fc.anything(), (b) => {
        const r = c.open(small, b as StateBinding);
        expect(r.ok).toBe(false);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('hostile input types and sizes', () => {
  it('rejects empty and non-string values as malformed without throwing', () => {
    fc.assert(
      fc.property(fc.anything(), (v) => {
        fc.pre(typeof v !== 'string');
        expect(rejected(v)).toBe('malformed');
      }),
      { numRuns: RUNS },
    );
    for (const v of ['', null, undefined, 0, [], {}, Buffer.from(small), new String(small)]) {
      expect(rejected(v)).toBe('malformed');
    }
  });

  it('rejects oversized strings as too_large, whatever they contain', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 8193, max: 100_000 }),
        fc.string({ minLength: 1, maxLength: 4 }),
        (n, unit) => {
          expect(rejected(unit.repeat(Math.ceil(n / unit.length)))).toBe('too_large');
        },
      ),
      { numRuns: 100 },
    );
    expect(rejected(small + 'A'.repeat(8192))).toBe('too_large');
  });

  it('never throws on arbitrary strings', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 500 }), (s) => {
        rejected(s);
      }),
      { numRuns: RUNS },
    );
  });
});
