// The signed values the server hands out, pinned byte for byte with fixed keys and inputs: a cookie, a 2025 session
// id or a requestState issued before a refactor must still open after it, and what is issued must not change shape.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Redactor } from '../../src/audit/redact.js';
import { csrfTokenOf } from '../../src/auth/signin/page-session.js';
import { SignedValues } from '../../src/auth/signin/signed-value.js';
import { SessionCodec } from '../../src/server/legacy/session.js';
import { UrlElicitations } from '../../src/server/legacy/url-elicitations.js';
import { Keyring, principalDigest, StateCodec } from '../../src/state/index.js';

const T0 = Date.UTC(2026, 10, 29, 12, 0, 0);
const secret = new Uint8Array(32).map((_, i) => i);
const key = new Uint8Array(32).map((_, i) => 255 - i);
const alice = { subject: 'alice', issuer: 'https://idp' };

describe('signed wire formats stay byte-identical', () => {
  it('a page-session cookie (SignedValues): the same token for the same value, and it still opens', () => {
    const cookies = new SignedValues([{ kid: 'k1', key }], 'mrtr/page-session');
    const token =
      'k1.eyJzdWIiOiJhbGljZSIsIm5hbWUiOiJBbGljZSIsImV4cCI6MTc5NTk1MzY2MDAwMH0.qkXAz9cXT2YfUs9g-GFA3WmvQx6WhKoMY8ajf7b6xH0';
    expect(cookies.sign({ sub: 'alice', name: 'Alice' }, T0 + 60_000)).toBe(token);
    expect(cookies.open(token, T0)).toEqual({ sub: 'alice', name: 'Alice', exp: T0 + 60_000 });
    // The purpose is inside the MAC: the same token is no sign-in transaction.
    expect(new SignedValues([{ kid: 'k1', key }], 'mrtr/sign-in').open(token, T0)).toBeUndefined();
  });

  it('a 2025 session id (SessionCodec): an id issued before still opens, and a new one is signed the same way', () => {
    const sessions = new SessionCodec([{ kid: 'k1', key }], 3_600_000, () => T0);
    const id =
      'k1.eyJ2IjoiMjAyNS0wNi0xOCIsImMiOnsiZWxpY2l0YXRpb24iOnt9fSwicCI6Ik5Qa2hKcFkzQTlYZnlZTWxiU0ZkLUkiLCJ0IjoxNzk1OTUzNjAwMDAwLCJuIjoiQ050YXBZXzlIZ0N1IiwiaSI6eyJuYW1lIjoiYyIsInZlcnNpb24iOiIxIn19.49Rq9S43BSSTwkVpxNVvsuL4i9bmVy2r8P28syfYbxE';
    expect(sessions.open(id, alice)).toEqual({
      id,
      key: 'oZYaAUUjN_uF97cOK3dPok0j7dGmxwQguk4sAeHxtvE',
      protocolVersion: '2025-06-18',
      clientCapabilities: { elicitation: {} },
      clientInfo: { name: 'c', version: '1' },
      issuedAt: T0,
    });
    expect(sessions.open(id, { subject: 'bob', issuer: 'https://idp' })).toBe('other_principal');
    // A new id (its nonce is random): the MAC is HMAC-SHA256 over "kid.body", the principal tag as before.
    const fresh = sessions.issue('2025-06-18', { elicitation: {} }, { name: 'c', version: '1' }, alice).id;
    const [kid, body, mac] = fresh.split('.') as [string, string, string];
    expect(mac).toBe(createHmac('sha256', key).update(`${kid}.${body}`).digest('base64url'));
    expect(JSON.parse(Buffer.from(body, 'base64url').toString()).p).toBe('NPkhJpY3A9XfyYMlbSFd-I');
  });

  it('a requestState (StateCodec): a token sealed before opens with its bindings, and refuses others', () => {
    const codec = (audience: string) =>
      new StateCodec({ keyring: new Keyring([{ kid: 'k1', secret }]), audience, now: () => T0 });
    const binding = { principal: alice, method: 'tools/call', target: 'deploy', arguments: { env: 'prod' } };
    const token =
      'AQFrMU5LbmlTTSWP8pOw-XuJXQTh7SOQTpnVdHsLc7pp559xUkXR5PPVOmiAWB2JjME4Mbn4VJr3MMA_KU3TKJ2AByfICtYV-5sAp7foOyz2TQ8xArFla8_4EGMvtwdaDx_3QjMsEdwL--0';
    expect(codec('server-a').open(token, binding)).toEqual({
      ok: true,
      state: {
        payload: { step: 1 },
        flowId: 'flow-1',
        round: 2,
        issuedAt: T0,
        expiresAt: T0 + 600_000,
        kid: 'k1',
        currentKey: true,
      },
    });
    expect(codec('server-b').open(token, binding)).toMatchObject({ ok: false, reason: 'wrong_audience' });
    expect(
      codec('server-a').open(token, { ...binding, principal: { subject: 'bob', issuer: 'https://idp' } }),
    ).toMatchObject({ ok: false, reason: 'wrong_principal' });
  });

  it('a principal digest (principalDigest) for the audit trail', () => {
    expect(principalDigest(secret, alice)).toBe('EyFIsqYYcmmBvuy5pRiRSw');
  });

  it("the other keyed digests: a page's CSRF token, a URL question's elicitationId, a redacted audit value", () => {
    const page = { sid: 'sid-1' } as Parameters<typeof csrfTokenOf>[0];
    expect(csrfTokenOf(page, key)).toBe('Dxbn9PcI_MZBDB8Jug4NTNkuKU9YMiGBmAEeo2BtXBY');
    const session = { key: 'session-key' } as Parameters<UrlElicitations['idOf']>[0];
    expect(new UrlElicitations(key).idOf(session, 'https://example.com/verify')).toBe(
      'kRqQPS_dqRC0xsS56EM5WI',
    );
    expect(new Redactor(Buffer.from(key)).keyed({ otp: '123456' })).toBe(
      'hmac-sha256:UADl48qU9aJ1TSWRRaAnyaLG5nEgdC9-zFoJiVIRZJ8',
    );
  });
});
