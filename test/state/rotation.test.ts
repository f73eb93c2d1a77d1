// Three-phase key rotation across a fleet (see docs/state.md):
//   phase 1: add the new key as accepted everywhere       MRTR_STATE_KEYS=old:…,new:…
//   phase 2: make it current everywhere                    MRTR_STATE_KEYS=new:…,old:…
//   phase 3: after the longest TTL, retire the old key     MRTR_STATE_KEYS=new:…
// During each roll-out, instances on the previous and the next config run side by side.
import { describe, expect, it } from 'vitest';
import { Keyring, StateCodec } from '../../src/state/index.js';
import { binding, codec, key, payload, testClock } from './fixtures.js';

const old = key('old');
const fresh = key('new');
const TTL = 10 * 60 * 1000;

function instance(keys: (typeof old)[], now: () => number): StateCodec {
  return codec(keys, { now, defaultTtlMs: TTL });
}

function opensEverywhere(from: StateCodec, fleet: StateCodec[]): void {
  const t = from.seal(payload, binding);
  for (const c of fleet) expect(c.open(t, binding)).toMatchObject({ ok: true, state: { payload } });
}

describe('three-phase rotation', () => {
  const clock = testClock();
  const phase0 = instance([old], clock.now);
  const phase1 = instance([old, fresh], clock.now);
  const phase2 = instance([fresh, old], clock.now);
  const phase3 = instance([fresh], clock.now);

  it('phase 1 (new key accepted, old still current): mixed fleet of phase 0 and 1 interoperates', () => {
    opensEverywhere(phase0, [phase0, phase1]);
    opensEverywhere(phase1, [phase0, phase1]);
    const s = phase1.open(phase1.seal(1, binding), binding);
    expect(s.ok && s.state.kid).toBe('old');
  });

  it('phase 2 (new key current): mixed fleet of phase 1 and 2 interoperates', () => {
    opensEverywhere(phase1, [phase1, phase2]);
    opensEverywhere(phase2, [phase1, phase2]);
    const s = phase2.open(phase2.seal(1, binding), binding);
    expect(s.ok && s.state).toMatchObject({ kid: 'new', currentKey: true });
    const legacy = phase2.open(phase1.seal(1, binding), binding);
    expect(legacy.ok && legacy.state).toMatchObject({ kid: 'old', currentKey: false });
  });

  it('skipping phase 1 breaks a mixed fleet, which is why it exists', () => {
    const t = phase2.seal(payload, binding);
    expect(phase0.open(t, binding)).toEqual({ ok: false, reason: 'unknown_key' });
  });

  it('phase 3 (old key retired after the longest TTL): nothing valid is lost', () => {
    clock.set(0);
    clock.advance(1_800_000_000_000);
    const lastOld = phase1.seal(payload, binding); // the last state a phase-1 instance minted
    opensEverywhere(phase2, [phase2, phase3]);
    // Until the TTL has passed, phase-2 instances still open the old-key state…
    expect(phase2.open(lastOld, binding).ok).toBe(true);
    // …and a phase-3 instance would not: retiring early rejects live flows.
    expect(phase3.open(lastOld, binding)).toEqual({ ok: false, reason: 'unknown_key' });
    // After the longest TTL the old state has expired everywhere, so retiring the key loses nothing.
    clock.advance(TTL);
    expect(phase2.open(lastOld, binding)).toEqual({ ok: false, reason: 'expired' });
    expect(phase3.open(lastOld, binding)).toEqual({ ok: false, reason: 'unknown_key' });
  });

  it('keeps flows going across the whole rotation', () => {
    clock.set(1_800_000_000_000);
    // A flow whose rounds land on instances of successive phases.
    const path = [phase0, phase1, phase1, phase2, phase2, phase3];
    let token = path[0]!.seal({ n: 0 }, binding, { round: 1, flowId: 'flow-rot' });
    for (let i = 1; i < path.length; i++) {
      const r = path[i]!.open<{ n: number }>(token, binding);
      if (!r.ok) throw new Error(`round ${i} failed: ${r.reason}`);
      // phases 0→1 and 1→2 overlap; the hop 2→3 only works for state sealed under the new key.
      token = path[i]!.seal({ n: r.state.payload.n + 1 }, binding, {
        round: r.state.round + 1,
        flowId: r.state.flowId,
      });
      clock.advance(1000);
    }
    const last = phase3.open<{ n: number }>(token, binding);
    expect(last.ok && last.state).toMatchObject({
      payload: { n: 5 },
      round: 6,
      flowId: 'flow-rot',
      kid: 'new',
    });
  });

  it('builds each phase from MRTR_STATE_KEYS strings', () => {
    const b64 = (k: typeof old) => Buffer.from(k.secret).toString('base64url');
    const specs = [
      `old:${b64(old)}`,
      `old:${b64(old)},new:${b64(fresh)}`,
      `new:${b64(fresh)},old:${b64(old)}`,
      `new:${b64(fresh)}`,
    ];
    const fleet = specs.map(
      (spec) => new StateCodec({ keyring: Keyring.fromSpec(spec), audience: 'server-a', now: clock.now }),
    );
    expect(fleet.map((_, i) => Keyring.fromSpec(specs[i]!).currentKid)).toEqual(['old', 'old', 'new', 'new']);
    // each phase interoperates with its neighbours
    for (let i = 0; i + 1 < fleet.length; i++) {
      opensEverywhere(fleet[i]!, [fleet[i]!, fleet[i + 1]!]);
      opensEverywhere(fleet[i + 1]!, [fleet[i]!, fleet[i + 1]!]);
    }
    // and a phase-3 instance opens what the spec-built phase-2 instance sealed, across objects
    expect(phase3.open(fleet[2]!.seal(1, binding), binding).ok).toBe(true);
  });
});
