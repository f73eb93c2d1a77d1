// SealedStateCodec opens only what the server sealed as a round envelope: a token that authenticates (same keys,
// same audience, same binding) but holds something else is refused as malformed — e.g. state sealed by another
// program that shares the keyring.
import { describe, expect, it } from 'vitest';
import { SealedStateCodec } from '../../src/server/index.js';
import { Keyring, StateCodec } from '../../src/state/index.js';

const keyring = Keyring.fromSpec(`k1:${Buffer.alloc(32, 4).toString('base64url')}`);
const binding = { principal: { subject: 'ann' }, method: 'tools/call', target: 't', arguments: { a: 1 } };

describe('SealedStateCodec.open', () => {
  it('opens its own envelope with flow id, round and expiry', () => {
    const sealed = new SealedStateCodec({ keyring, audience: 's' });
    const token = sealed.seal({ asked: ['q1'], kinds: ['f'] }, binding, {
      flowId: 'flow-1',
      round: 2,
      ttlMs: 60_000,
    });
    const opened = sealed.open(token, binding);
    expect(opened).toMatchObject({
      ok: true,
      envelope: { asked: ['q1'], kinds: ['f'] },
      flowId: 'flow-1',
      round: 2,
    });
    expect(opened.ok && opened.expiresAt - Date.now()).toBeGreaterThan(50_000);
  });

  it('refuses an authentic token whose payload is not a round envelope', () => {
    const raw = new StateCodec({ keyring, audience: 's' });
    const sealed = new SealedStateCodec({ keyring, audience: 's' });
    for (const payload of [
      null,
      'text',
      ['q1'],
      { asked: ['q1'] },
      { kinds: ['f'] },
      { asked: 'q1', kinds: ['f'] },
      { asked: ['q1'], kinds: 'f' },
    ]) {
      expect(sealed.open(raw.seal(payload, binding), binding)).toEqual({ ok: false, reason: 'malformed' });
    }
  });

  it('passes the codec own refusals through', () => {
    const sealed = new SealedStateCodec({ keyring, audience: 's' });
    const token = sealed.seal({ asked: [], kinds: [] }, binding, { flowId: 'f', round: 1 });
    expect(sealed.open(token, { ...binding, arguments: { a: 2 } })).toEqual({
      ok: false,
      reason: 'wrong_request',
    });
    expect(new SealedStateCodec({ keyring, audience: 'other' }).open(token, binding)).toEqual({
      ok: false,
      reason: 'wrong_audience',
    });
  });
});
