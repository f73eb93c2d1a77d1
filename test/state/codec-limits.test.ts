// Limits and encodings of the codec at their exact edges, found by mutation testing: every cap is inclusive, the
// largest header fits, varints survive their 7-bit boundaries, and a fleet member with a smaller payload cap
// refuses to inflate what a more generous one sealed.
import { describe, expect, it } from 'vitest';
import {
  Keyring,
  MAX_ROUND,
  MAX_TTL_MS,
  newFlowId,
  StateCodec,
  StateRangeError,
  StateTooLargeError,
} from '../../src/state/index.js';
import { binding, codec, key, T0 } from './fixtures.js';

const opened = (c: StateCodec, token: string) => {
  const r = c.open(token, binding);
  if (!r.ok) throw new Error(`did not open: ${r.reason}`);
  return r.state;
};

describe('codec limits at their edges', () => {
  it('opens a token exactly maxTokenBytes long, and seals one that size', () => {
    const k = key('k1');
    const token = codec([k]).seal({ a: 1 }, binding);
    const exact = codec([k], { maxTokenBytes: token.length });
    expect(opened(exact, token).payload).toEqual({ a: 1 });
    expect(exact.seal({ a: 1 }, binding)).toHaveLength(token.length);
    expect(codec([k], { maxTokenBytes: token.length - 1 }).open(token, binding)).toEqual({
      ok: false,
      reason: 'too_large',
    });
  });

  it('seals a payload of exactly maxPayloadBytes', () => {
    const c = codec([key('k1')], { maxPayloadBytes: 10, compression: false });
    expect(opened(c, c.seal('x'.repeat(8), binding)).payload).toBe('x'.repeat(8)); // "xxxxxxxx" = 10 bytes
    expect(() => c.seal('x'.repeat(9), binding)).toThrow(StateTooLargeError);
  });

  it('accepts the largest TTL, round and flow id together (the longest header)', () => {
    const c = codec([key('k1')]);
    const flowId = 'é'.repeat(64); // 128 UTF-8 bytes, the most a flow id may take
    const s = opened(c, c.seal(1, binding, { ttlMs: MAX_TTL_MS, round: MAX_ROUND, flowId }));
    expect(s).toMatchObject({ flowId, round: MAX_ROUND, expiresAt: T0 + MAX_TTL_MS });
    expect(() => c.seal(1, binding, { flowId: `${flowId}x` })).toThrow(StateRangeError);
    expect(() => c.seal(1, binding, { round: MAX_ROUND + 1 })).toThrow(StateRangeError);
    expect(
      new StateCodec({ keyring: new Keyring([key('k2')]), audience: 'a', defaultTtlMs: MAX_TTL_MS }),
    ).toBeInstanceOf(StateCodec);
  });

  it('round-trips TTLs and rounds on both sides of each 7-bit varint boundary', () => {
    const c = codec([key('k1')]);
    for (const n of [1, 127, 128, 129, 16_383, 16_384, 2 ** 21, 2 ** 28 - 1, 2 ** 28]) {
      const s = opened(c, c.seal(1, binding, { ttlMs: n, round: n }));
      expect([s.round, s.expiresAt - s.issuedAt]).toEqual([n, n]);
    }
  });

  it('keeps flow ids of every shape, and stores a generated one in 16 bytes', () => {
    const c = codec([key('k1')]);
    for (const flowId of ['f', 'flow-1', 'A'.repeat(21), 'A'.repeat(23), `${'A'.repeat(21)}B`, newFlowId()]) {
      expect(opened(c, c.seal(1, binding, { flowId })).flowId).toBe(flowId);
    }
    // A 22-character canonical id packs like a generated one: same token length, not 6 bytes longer.
    expect(c.seal(1, binding, { flowId: newFlowId() })).toHaveLength(c.seal(1, binding).length);
  });

  it('refuses to seal with a broken clock', () => {
    for (const t of [Number.NaN, -1, 2 ** 48]) {
      const c = codec([key('k1')], { now: () => t });
      expect(() => c.seal(1, binding)).toThrow(/clock/);
    }
    // The edges themselves are valid times.
    const k = key('k1');
    for (const t of [0, 2 ** 48 - 1])
      expect(typeof codec([k], { now: () => t }).seal(1, binding)).toBe('string');
  });

  it('refuses to inflate past its own payload cap what a more generous instance sealed', () => {
    const keyring = new Keyring([key('k1')]);
    const generous = new StateCodec({ keyring, audience: 'server-a', now: () => T0, compression: true });
    const strict = new StateCodec({ keyring, audience: 'server-a', now: () => T0, maxPayloadBytes: 1024 });
    const token = generous.seal('a'.repeat(100_000), binding); // deflates to a few hundred bytes
    expect(token.length).toBeLessThan(1024);
    expect(opened(generous, token).payload).toHaveLength(100_000);
    expect(strict.open(token, binding)).toEqual({ ok: false, reason: 'malformed' });
  });
});
