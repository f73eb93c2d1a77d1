// A 2025 session's id is checked once per instance: its later requests are not verified again (no HMAC, no parse),
// while a forged id, another caller's id and an expired id are refused exactly as before.
import { describe, expect, it, vi } from 'vitest';
import { SessionCodec } from '../../src/server/legacy/session.js';

const key = new Uint8Array(32).fill(7);
const alice = { subject: 'alice', issuer: 'https://id.example' };
const bob = { subject: 'bob', issuer: 'https://id.example' };

function codecAt(clock: { now: number }) {
  const codec = new SessionCodec([{ kid: 'k1', key }], 60_000, () => clock.now);
  const verify = vi.spyOn((codec as unknown as { signer: { verify: () => unknown } }).signer, 'verify');
  return { codec, verify };
}

describe('a 2025 session id', () => {
  it('is verified once; its later requests open it from memory', () => {
    const clock = { now: 1_000 };
    const { codec, verify } = codecAt(clock);
    const issued = codec.issue('2025-06-18', {}, undefined, alice);
    for (let i = 0; i < 3; i++) expect(codec.open(issued.id, alice)).toEqual(issued);
    expect(verify).toHaveBeenCalledTimes(1);
  });

  it('forged, still fails every time', () => {
    const { codec, verify } = codecAt({ now: 1_000 });
    const issued = codec.issue('2025-06-18', {}, undefined, alice);
    expect(codec.open(issued.id, alice)).toEqual(issued);
    const mac = issued.id.slice(issued.id.lastIndexOf('.') + 1);
    const forged = `${issued.id.slice(0, -mac.length)}${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`;
    expect(codec.open(forged, alice)).toBe('forged');
    expect(codec.open(forged, alice)).toBe('forged');
    expect(verify).toHaveBeenCalledTimes(3);
  });

  it("is another caller's even once remembered, and expires on time", () => {
    const clock = { now: 1_000 };
    const { codec } = codecAt(clock);
    const issued = codec.issue('2025-06-18', {}, undefined, alice);
    expect(codec.open(issued.id, alice)).toEqual(issued);
    expect(codec.open(issued.id, bob)).toBe('other_principal');
    expect(codec.open(issued.id, undefined)).toBe('other_principal');
    clock.now += 60_001;
    expect(codec.open(issued.id, alice)).toBe('expired');
    expect(codec.open(issued.id, alice)).toBe('expired');
  });
});
