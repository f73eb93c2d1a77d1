import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  Keyring,
  NotJsonError,
  OPEN_FAILURE_REASONS,
  type OpenResult,
  STATE_CODEC_DEFAULTS,
  StateCodec,
  StateRangeError,
  StateTooLargeError,
  StateUsageError,
} from '../../src/state/index.js';
import { alice, binding, codec, key, payload, T0, testClock } from './fixtures.js';

function opened<T>(r: OpenResult<T>) {
  if (!r.ok) throw new Error(`expected ok, got ${r.reason}`);
  return r.state;
}

describe('StateCodec round trip', () => {
  const c = codec([key('k1')]);

  it('opens what it sealed, with metadata', () => {
    const token = c.seal(payload, binding, { round: 3, ttlMs: 5000, flowId: 'flow-1' });
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    const s = opened(c.open(token, binding));
    expect(s).toEqual({
      payload,
      flowId: 'flow-1',
      round: 3,
      issuedAt: T0,
      expiresAt: T0 + 5000,
      kid: 'k1',
      currentKey: true,
    });
  });

  it('defaults: round 1, ten-minute TTL, random 22-character flow id', () => {
    const a = opened(c.open(c.seal(null, binding), binding));
    const b = opened(c.open(c.seal(null, binding), binding));
    expect(a.round).toBe(1);
    expect(a.expiresAt - a.issuedAt).toBe(STATE_CODEC_DEFAULTS.defaultTtlMs);
    expect(a.flowId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(a.flowId).not.toBe(b.flowId);
  });

  it('keeps a flow id across rounds', () => {
    const first = opened(c.open(c.seal(1, binding), binding));
    const next = opened(c.open(c.seal(2, binding, { flowId: first.flowId, round: 2 }), binding));
    expect(next.flowId).toBe(first.flowId);
    expect(next.round).toBe(2);
  });

  it('round-trips arbitrary JSON payloads, flow ids, rounds and TTLs', () => {
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.option(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }), { nil: undefined }),
        fc.integer({ min: 0, max: 0xffff_ffff }),
        fc.integer({ min: 1, max: 0xffff_ffff }),
        (p, flowId, round, ttlMs) => {
          const s = opened(c.open(c.seal(p, binding, { flowId, round, ttlMs }), binding));
          expect(s.payload).toEqual(JSON.parse(JSON.stringify(p)));
          if (flowId !== undefined) expect(s.flowId).toBe(flowId);
          expect(s.round).toBe(round);
          expect(s.expiresAt).toBe(T0 + ttlMs);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('never repeats a token for the same input (random nonce)', () => {
    const tokens = new Set(Array.from({ length: 200 }, () => c.seal(payload, binding, { flowId: 'f' })));
    expect(tokens.size).toBe(200);
  });

  it('hides the payload and the identity from the client', () => {
    const token = c.seal({ secret: 'hunter2-hunter2-hunter2' }, binding);
    const raw = Buffer.from(token, 'base64url').toString('latin1');
    for (const s of ['hunter2', 'alice', 'idp.example.com', 'client-1', 'deploy', 'prod', 'server-a']) {
      expect(raw).not.toContain(s);
    }
  });

  it('does not deflate unless asked: the safe default (no length oracle on mixed client and server data)', () => {
    const repetitive = {
      journal: Array.from({ length: 40 }, (_, i) => ({ key: `ask-${i}`, action: 'accept' })),
    };
    expect(STATE_CODEC_DEFAULTS.compression).toBe(false);
    expect(Object.isFrozen(STATE_CODEC_DEFAULTS)).toBe(true);
    expect(Buffer.from(c.seal(repetitive, binding), 'base64url')[1]! & 0x10).toBe(0);
  });

  it('with compression on, deflates only when that makes the token smaller', () => {
    const plain = codec([key('k1')]);
    const c = codec([key('k1')], { compression: true });
    const repetitive = {
      journal: Array.from({ length: 40 }, (_, i) => ({ key: `ask-${i}`, action: 'accept' })),
    };
    const zipped = c.seal(repetitive, binding);
    expect(zipped.length).toBeLessThan(plain.seal(repetitive, binding).length / 2);
    expect(opened(c.open(zipped, binding)).payload).toEqual(repetitive);
    // short random text does not deflate: same size as with compression off, flag clear
    const alphabet =
      'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$%&()*+,-./:;<=>?@[]^_{|}~';
    const noise = Array.from(randomBytes(120), (b) => alphabet[b % alphabet.length]).join('');
    expect(c.seal(noise, binding).length).toBe(plain.seal(noise, binding).length);
    expect(Buffer.from(zipped, 'base64url')[1]! & 0x10).toBe(0x10);
    expect(Buffer.from(c.seal(noise, binding), 'base64url')[1]! & 0x10).toBe(0);
    // never larger than without compression
    fc.assert(
      fc.property(fc.jsonValue(), (p) => {
        expect(c.seal(p, binding, { flowId: 'f' }).length).toBeLessThanOrEqual(
          plain.seal(p, binding, { flowId: 'f' }).length,
        );
      }),
      { numRuns: 200 },
    );
  });
});

describe('bindings', () => {
  const c = codec([key('k1')]);
  const token = c.seal(payload, binding);

  const cases: [string, Partial<typeof binding>, string][] = [
    ['another subject', { principal: { ...alice, subject: 'mallory' } }, 'wrong_principal'],
    ['another issuer', { principal: { ...alice, issuer: 'https://evil' } }, 'wrong_principal'],
    ['another client', { principal: { ...alice, clientId: 'client-2' } }, 'wrong_principal'],
    ['no principal', { principal: undefined }, 'wrong_principal'],
    ['a principal string', { principal: 'alice' }, 'wrong_principal'],
    ['another method', { method: 'prompts/get' }, 'wrong_request'],
    ['another tool', { target: 'destroy' }, 'wrong_request'],
    ['other arguments', { arguments: { env: 'prod', replicas: 30 } }, 'wrong_request'],
    ['no arguments', { arguments: undefined }, 'wrong_request'],
    ['unserializable arguments', { arguments: { n: Number.NaN } }, 'wrong_request'],
  ];
  for (const [name, change, reason] of cases) {
    it(`rejects ${name} as ${reason}`, () => {
      expect(c.open(token, { ...binding, ...change })).toEqual({ ok: false, reason });
    });
  }

  it('reports wrong_principal when principal and request both differ', () => {
    const other = { principal: { ...alice, subject: 'mallory' }, method: 'tools/call', target: 'destroy' };
    expect(c.open(token, other)).toEqual({ ok: false, reason: 'wrong_principal' });
  });

  it('keeps working past the principal tag cache size', () => {
    const many = Array.from({ length: 1500 }, (_, i) => ({
      ...binding,
      principal: { subject: `user-${i}` },
    }));
    const sealed = many.map((b) => c.seal(1, b));
    many.forEach((b, n) => {
      expect(c.open(sealed[n], b).ok).toBe(true);
      expect(c.open(sealed[n], many[(n + 1) % many.length]!)).toEqual({
        ok: false,
        reason: 'wrong_principal',
      });
    });
  });

  it('ignores argument key order', () => {
    expect(c.open(token, { ...binding, arguments: { replicas: 3, env: 'prod' } }).ok).toBe(true);
  });

  it('binds anonymous state to anonymity and string principals by value', () => {
    const anon = { ...binding, principal: undefined };
    const t = c.seal(1, anon);
    expect(c.open(t, { ...anon, principal: null }).ok).toBe(true);
    expect(c.open(t, binding)).toEqual({ ok: false, reason: 'wrong_principal' });
    const byId = { ...binding, principal: 'pseudonym-1' };
    const t2 = c.seal(1, byId);
    expect(c.open(t2, byId).ok).toBe(true);
    expect(c.open(t2, { ...byId, principal: 'pseudonym-2' })).toEqual({
      ok: false,
      reason: 'wrong_principal',
    });
  });

  it('binds the audience (server id)', () => {
    const ring = new Keyring([key('k1')]);
    const a = new StateCodec({ keyring: ring, audience: 'server-a' });
    const b = new StateCodec({ keyring: ring, audience: 'server-b' });
    expect(b.open(a.seal(payload, binding), binding)).toEqual({ ok: false, reason: 'wrong_audience' });
    expect(a.open(a.seal(payload, binding), binding).ok).toBe(true);
  });

  it('binds resources/read by URI with no arguments', () => {
    const r = { method: 'resources/read', target: 'file:///etc/app.conf', principal: alice };
    const t = c.seal({}, r);
    expect(c.open(t, r).ok).toBe(true);
    expect(c.open(t, { ...r, target: 'file:///etc/shadow' })).toEqual({ ok: false, reason: 'wrong_request' });
  });
});

describe('expiry (controlled clock)', () => {
  it('opens until expiresAt and not from then on', () => {
    const clock = testClock();
    const c = new StateCodec({ keyring: new Keyring([key('k1')]), audience: 'a', now: clock.now });
    const t = c.seal(payload, binding, { ttlMs: 60_000 });
    clock.advance(59_999);
    expect(c.open(t, binding).ok).toBe(true);
    clock.advance(1);
    expect(c.open(t, binding)).toEqual({ ok: false, reason: 'expired' });
    clock.advance(1e9);
    expect(c.open(t, binding)).toEqual({ ok: false, reason: 'expired' });
  });

  it('uses the codec default TTL and fails closed on a broken clock', () => {
    const clock = testClock();
    const c = new StateCodec({
      keyring: new Keyring([key('k1')]),
      audience: 'a',
      now: clock.now,
      defaultTtlMs: 1000,
    });
    const t = c.seal(payload, binding);
    clock.advance(1000);
    expect(c.open(t, binding)).toEqual({ ok: false, reason: 'expired' });
    clock.set(Number.NaN);
    expect(c.open(t, binding)).toEqual({ ok: false, reason: 'expired' });
  });
});

describe('clock skew across a fleet', () => {
  it("opens a state from an instance whose clock runs a little ahead, refuses one from far ahead as 'not_yet_valid'", () => {
    const keyring = new Keyring([key('k1')]);
    const here = testClock();
    const opener = new StateCodec({ keyring, audience: 'a', now: here.now });
    const ahead = testClock();
    const sealer = new StateCodec({ keyring, audience: 'a', now: ahead.now });
    ahead.set(here.now() + 30_000);
    expect(opener.open(sealer.seal(payload, binding), binding).ok).toBe(true);
    ahead.set(here.now() + 10 * 60_000);
    const fromTheFuture = sealer.seal(payload, binding, { ttlMs: 60_000 });
    expect(opener.open(fromTheFuture, binding)).toEqual({ ok: false, reason: 'not_yet_valid' });
    // Once this clock catches up, the state lives exactly its TTL, no longer.
    here.advance(10 * 60_000 - 60_000);
    expect(opener.open(fromTheFuture, binding).ok).toBe(true);
    here.advance(2 * 60_000);
    expect(opener.open(fromTheFuture, binding)).toEqual({ ok: false, reason: 'expired' });
  });

  it('takes the allowed skew as an option, checked like the other limits', () => {
    const keyring = new Keyring([key('k1')]);
    const here = testClock();
    const strict = new StateCodec({ keyring, audience: 'a', now: here.now, maxClockSkewMs: 1_000 });
    const ahead = testClock();
    ahead.set(here.now() + 5_000);
    const token = new StateCodec({ keyring, audience: 'a', now: ahead.now }).seal(payload, binding);
    expect(strict.open(token, binding)).toEqual({ ok: false, reason: 'not_yet_valid' });
    expect(() => new StateCodec({ keyring, audience: 'a', maxClockSkewMs: -1 })).toThrow(/maxClockSkewMs/);
  });
});

describe('size cap', () => {
  it('rejects over-long strings before decoding', () => {
    const c = codec([key('k1')]);
    expect(c.open('A'.repeat(STATE_CODEC_DEFAULTS.maxTokenBytes + 1), binding)).toEqual({
      ok: false,
      reason: 'too_large',
    });
    expect(c.open('!'.repeat(10 * 1024 * 1024), binding)).toEqual({ ok: false, reason: 'too_large' });
  });

  it('is configurable, and seal refuses to mint what open would refuse', () => {
    const c = codec([key('k1')], { maxTokenBytes: 300, compression: false });
    const fits = c.seal('x'.repeat(100), binding);
    expect(fits.length).toBeLessThanOrEqual(300);
    expect(() => c.seal('x'.repeat(300), binding)).toThrow(StateTooLargeError);
    const roomy = codec([key('k1')], { maxTokenBytes: 10_000, compression: false });
    const big = roomy.seal('x'.repeat(300), binding);
    expect(c.open(big, binding)).toEqual({ ok: false, reason: 'too_large' });
  });

  it('caps the payload before compression too', () => {
    const c = codec([key('k1')], { maxPayloadBytes: 1000 });
    expect(() => c.seal('a'.repeat(2000), binding)).toThrow(/maxPayloadBytes/);
    expect(c.open(c.seal('a'.repeat(990), binding), binding).ok).toBe(true);
  });

  it('with compression on, fits a large repetitive journal under the default cap', () => {
    const c = codec([key('k1')], { compression: true });
    const journal = Array.from({ length: 400 }, (_, i) => ({
      key: `ask-${i}`,
      action: 'accept',
      content: { ok: true },
    }));
    const t = c.seal(journal, binding);
    expect(t.length).toBeLessThanOrEqual(STATE_CODEC_DEFAULTS.maxTokenBytes);
    expect(opened(c.open(t, binding)).payload).toEqual(journal);
  });
});

describe('seal input errors', () => {
  const c = codec([key('k1')]);
  it('throws on programmer errors', () => {
    expect(() => c.seal(undefined, binding)).toThrow(StateUsageError);
    expect(() => c.seal(() => 1, binding)).toThrow(StateUsageError);
    // JSON.stringify's own TypeError is told as the codec's error, naming what it could not serialize.
    expect(() => c.seal(1n, binding)).toThrow(StateUsageError);
    expect(() => c.seal(1n, binding)).toThrow(/must be JSON-serializable: .*BigInt/);
    expect(() => c.seal(1, binding, { ttlMs: 0 })).toThrow(StateRangeError);
    expect(() => c.seal(1, binding, { ttlMs: 1.5 })).toThrow(StateRangeError);
    expect(() => c.seal(1, binding, { ttlMs: 2 ** 33 })).toThrow(StateRangeError);
    expect(() => c.seal(1, binding, { round: -1 })).toThrow(StateRangeError);
    expect(() => c.seal(1, binding, { flowId: '' })).toThrow(StateUsageError);
    // Callers branch on the code, never the message.
    expect(() => c.seal(1, binding, { flowId: '' })).toThrow(
      expect.objectContaining({ code: 'ERR_STATE_USAGE' }),
    );
    expect(() => c.seal(1, binding, { round: -1 })).toThrow(
      expect.objectContaining({ code: 'ERR_STATE_USAGE' }),
    );
    expect(() => c.seal(1, binding, { flowId: 'x'.repeat(129) })).toThrow(StateRangeError);
    expect(() => c.seal(1, { ...binding, target: 1 as unknown as string })).toThrow(StateUsageError);
    expect(() => c.seal(1, { ...binding, arguments: { n: Number.POSITIVE_INFINITY } })).toThrow(NotJsonError);
  });

  it('validates options at construction', () => {
    const keyring = new Keyring([key('k1')]);
    expect(() => new StateCodec({ keyring, audience: '' })).toThrow(/audience/);
    expect(() => new StateCodec({ keyring, audience: 'a', maxTokenBytes: 0 })).toThrow(StateRangeError);
    expect(() => new StateCodec({ keyring: {} as Keyring, audience: 'a' })).toThrow(StateUsageError);
  });
});

describe('failure results', () => {
  it('use only the documented reasons and are frozen', () => {
    const c = codec([key('k1')]);
    const r = c.open('', binding);
    expect(r).toEqual({ ok: false, reason: 'malformed' });
    expect(Object.isFrozen(r)).toBe(true);
    expect(OPEN_FAILURE_REASONS).toContain('unsupported_version');
  });

  it('reports a future format version as unsupported_version', () => {
    const c = codec([key('k1')]);
    const bytes = Buffer.from(c.seal(payload, binding), 'base64url');
    bytes[0] = 2;
    expect(c.open(bytes.toString('base64url'), binding)).toEqual({
      ok: false,
      reason: 'unsupported_version',
    });
  });

  it('reports unknown flag bits as malformed', () => {
    const c = codec([key('k1')]);
    const bytes = Buffer.from(c.seal(payload, binding), 'base64url');
    bytes[1]! |= 0x40;
    expect(c.open(bytes.toString('base64url'), binding)).toEqual({ ok: false, reason: 'malformed' });
  });
});
