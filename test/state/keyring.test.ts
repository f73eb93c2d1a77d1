import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  createEphemeralKeyring,
  generateKeySpec,
  Keyring,
  KeySpecError,
  parseKeySpec,
  principalDigest,
  StateUsageError,
} from '../../src/state/index.js';

const s32 = () => randomBytes(32).toString('base64url');

describe('parseKeySpec', () => {
  it('parses kid:secret pairs, first = current, whitespace tolerated', () => {
    const a = s32();
    const b = s32();
    const keys = parseKeySpec(` k1:${a} ,\n k2:${b}`);
    expect(keys.map((k) => k.kid)).toEqual(['k1', 'k2']);
    expect(Buffer.from(keys[0]!.secret).toString('base64url')).toBe(a);
    const ring = Keyring.fromSpec(`k1:${a},k2:${b}`);
    expect(ring.currentKid).toBe('k1');
    expect(ring.kids).toEqual(['k1', 'k2']);
    expect(ring.accepts('k2')).toBe(true);
    expect(ring.accepts('k3')).toBe(false);
    expect(ring.ephemeral).toBe(false);
  });

  it('accepts secrets longer than 32 bytes', () => {
    expect(parseKeySpec(`k:${randomBytes(64).toString('base64url')}`)[0]!.secret.length).toBe(64);
  });

  const bad: [string, string, RegExp][] = [
    ['empty', '', /empty/],
    ['blank', '   ', /empty/],
    ['empty entry', `k1:${s32()},,k2:${s32()}`, /entry 2 is empty/],
    ['trailing comma', `k1:${s32()},`, /entry 2 is empty/],
    ['no colon', s32(), /entry 1 is not of the form kid:secret/],
    ['empty kid', `:${s32()}`, /entry 1: key id/],
    ['long kid', `abcdefghijklmnopq:${s32()}`, /entry 1: key id/],
    ['kid with space', `k 1:${s32()}`, /entry 1: key id/],
    ['duplicate kid', `k1:${s32()},k1:${s32()}`, /"k1" appears more than once/],
    [
      'short secret',
      `k1:${randomBytes(31).toString('base64url')}`,
      /key "k1": secret is 31 bytes; at least 32/,
    ],
    ['empty secret', 'k9:', /key "k9": secret must be unpadded base64url/],
    [
      'padded secret',
      `k1:${randomBytes(32).toString('base64')}`,
      /key "k1": secret must be unpadded base64url/,
    ],
    ['standard base64 chars', `k1:${'+/'.repeat(22)}`, /key "k1": secret must be unpadded base64url/],
    ['inner whitespace', `k1:${s32().slice(0, 20)} ${s32().slice(0, 23)}`, /key "k1": secret must be/],
    [
      'same secret twice',
      (() => {
        const s = s32();
        return `a:${s},b:${s}`;
      })(),
      /"a" and "b" share the same secret/,
    ],
  ];
  for (const [name, spec, message] of bad) {
    it(`rejects ${name} with a clear KeySpecError`, () => {
      expect(() => Keyring.fromSpec(spec)).toThrow(KeySpecError);
      expect(() => Keyring.fromSpec(spec)).toThrow(message);
    });
  }

  it('never echoes a secret in an error', () => {
    const secret = randomBytes(20).toString('base64url');
    for (const spec of [`k1:${secret}`, secret, `${secret}:${secret}`]) {
      try {
        Keyring.fromSpec(spec);
        expect.unreachable();
      } catch (e) {
        expect((e as Error).message).not.toContain(secret);
      }
    }
  });

  it('rejects a non-string spec', () => {
    expect(() => parseKeySpec(undefined as unknown as string)).toThrow(KeySpecError);
  });
});

describe('Keyring constructor', () => {
  it('validates keys given directly', () => {
    expect(() => new Keyring([])).toThrow(/at least one key/);
    expect(() => new Keyring([{ kid: 'k1', secret: randomBytes(16) }])).toThrow(
      /key "k1": secret is 16 bytes/,
    );
    expect(() => new Keyring([{ kid: 'bad kid', secret: randomBytes(32) }])).toThrow(/key id/);
  });

  it('shows no key material when logged', () => {
    const secret = randomBytes(32);
    const ring = new Keyring([{ kid: 'k1', secret }]);
    const shown = inspect(ring, { depth: 10, showHidden: true }) + JSON.stringify(ring);
    expect(shown).not.toContain(secret.toString('base64url'));
    expect(shown).not.toContain(secret.toString('hex'));
    expect(JSON.parse(JSON.stringify(ring))).toEqual({ currentKid: 'k1', kids: ['k1'], ephemeral: false });
  });
});

describe('generateKeySpec', () => {
  it('makes a spec that parses, with a fresh 32-byte secret each time', () => {
    const a = generateKeySpec();
    const b = generateKeySpec();
    expect(a).toMatch(/^k[0-9a-f]{6}:[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(b);
    const [k] = parseKeySpec(a);
    expect(k!.secret.length).toBe(32);
    expect(Keyring.fromSpec(`${a},${b.replace(/^k[0-9a-f]{6}/, 'old')}`).kids).toHaveLength(2);
  });

  it('takes a chosen kid and validates it', () => {
    expect(generateKeySpec({ kid: '2026-11' })).toMatch(/^2026-11:/);
    expect(() => generateKeySpec({ kid: 'no:colons' })).toThrow(KeySpecError);
  });
});

describe('createEphemeralKeyring', () => {
  it('is marked ephemeral and differs per call', () => {
    const a = createEphemeralKeyring();
    const b = createEphemeralKeyring();
    expect(a.ephemeral).toBe(true);
    expect(a.kids).toHaveLength(1);
    expect(principalDigest(a, { subject: 'x' })).not.toBe(principalDigest(b, { subject: 'x' }));
  });
});

describe('principalDigest', () => {
  const secret = randomBytes(32);
  const p = { subject: 'alice', issuer: 'https://idp', clientId: 'c1' };

  it('is a keyed 22-character pseudonym that never contains the identity', () => {
    const d = principalDigest(secret, p);
    expect(d).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(d).toBe(principalDigest(secret.toString('base64url'), p));
    expect(d).not.toBe(principalDigest(randomBytes(32), p));
  });

  it('separates subject, issuer and client id', () => {
    const ds = new Set(
      [
        p,
        { ...p, subject: 'bob' },
        { ...p, issuer: 'https://other' },
        { ...p, clientId: 'c2' },
        { subject: 'alice' },
        { subject: 'alice', issuer: '' },
        { subject: 'https://idp', issuer: 'alice', clientId: 'c1' },
      ].map((x) => principalDigest(secret, x)),
    );
    expect(ds.size).toBe(7);
  });

  it('follows the keyring current key', () => {
    const k1 = { kid: 'k1', secret: randomBytes(32) };
    const k2 = { kid: 'k2', secret: randomBytes(32) };
    expect(principalDigest(new Keyring([k1, k2]), p)).toBe(principalDigest(new Keyring([k1]), p));
    expect(principalDigest(new Keyring([k2, k1]), p)).not.toBe(principalDigest(new Keyring([k1]), p));
  });

  it('rejects short secrets and bad principals', () => {
    expect(() => principalDigest(randomBytes(8), p)).toThrow(KeySpecError);
    expect(() => principalDigest('not base64!', p)).toThrow(KeySpecError);
    expect(() => principalDigest(secret, { subject: 1 } as unknown as { subject: string })).toThrow(
      StateUsageError,
    );
  });
});
