// The one HMAC signer (src/state/signing.ts) that requestState, 2025 session ids and sign-in cookies share.
import { describe, expect, it } from 'vitest';
import {
  deriveSubkey,
  hmacSha256,
  KidSigner,
  MAX_SIGNED_TOKEN_BYTES,
  macMatches,
} from '../../src/state/internal.js';

const keyA = { kid: 'a', key: new Uint8Array(32).fill(1) };
const keyB = { kid: 'b', key: new Uint8Array(32).fill(2) };
const signer = (keys = [keyA, keyB]) => new KidSigner(keys, (kid, body) => `test\n${kid}\n${body}`);

describe('hmacSha256', () => {
  it('is HMAC-SHA256 of the parts in order (RFC 4231 test case 2, split in two parts)', () => {
    const mac = hmacSha256(Buffer.from('Jefe'), 'what do ya want ', 'for nothing?');
    expect(mac.toString('hex')).toBe('5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843');
  });
});

describe('macMatches', () => {
  it('is true for the same bytes, false for other bytes and, without throwing, for another length', () => {
    expect(macMatches(Buffer.from('abc'), Buffer.from('abc'))).toBe(true);
    expect(macMatches(Buffer.from('abd'), Buffer.from('abc'))).toBe(false);
    expect(macMatches(Buffer.from('abcd'), Buffer.from('abc'))).toBe(false);
  });
});

describe('deriveSubkey', () => {
  it('is the HMAC of the label under the parent key, as a key', () => {
    const sub = deriveSubkey(keyA.key, 'session-1');
    expect(sub.export()).toEqual(hmacSha256(keyA.key, 'session-1'));
  });
});

describe('KidSigner', () => {
  it('signs `kid.body.mac` with the first key and verifies with any key of the set', () => {
    const token = signer().sign('Ym9keQ');
    expect(token).toBe(`a.Ym9keQ.${hmacSha256(keyA.key, 'test\na\nYm9keQ').toString('base64url')}`);
    expect(signer().verify(token)).toEqual({ body: 'Ym9keQ', key: keyA });
    // After a rotation (b current, a still accepted), what a signed still verifies.
    expect(signer([keyB, keyA]).verify(token)).toEqual({ body: 'Ym9keQ', key: keyA });
  });

  it('refuses an edited body or MAC, and an unknown key, as forged', () => {
    const token = signer().sign('Ym9keQ');
    const [kid, body, mac] = token.split('.') as [string, string, string];
    expect(signer().verify(`${kid}.${body}x.${mac}`)).toBe('forged');
    expect(signer().verify(`${kid}.${body}.${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}`)).toBe(
      'forged',
    );
    expect(signer([keyB]).verify(token)).toBe('forged');
  });

  it('refuses another spelling of the same MAC bytes (base64url with other padding bits): one text per MAC', () => {
    const token = signer().sign('Ym9keQ');
    const mac = token.split('.')[2]!;
    // 32 bytes take 43 characters; the last one carries 2 bits of the MAC and 4 unused bits.
    const last = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const twin = last[last.indexOf(mac.at(-1)!) ^ 1]!;
    const respelled = `${mac.slice(0, -1)}${twin}`;
    expect(Buffer.from(respelled, 'base64url')).toEqual(Buffer.from(mac, 'base64url'));
    expect(signer().verify(`${token.slice(0, -1)}${twin}`)).toBe('forged');
  });

  it('refuses what is not three non-empty parts, or is longer than the cap, as malformed', () => {
    const token = signer().sign('Ym9keQ');
    expect(signer().verify('a.b')).toBe('malformed');
    expect(signer().verify(`${token}.x`)).toBe('malformed');
    expect(signer().verify(`.Ym9keQ.${token.split('.')[2]}`)).toBe('malformed');
    const long = signer().sign('x'.repeat(MAX_SIGNED_TOKEN_BYTES));
    expect(signer().verify(long)).toBe('malformed');
  });

  it('needs a key to sign with', () => {
    expect(() => signer([])).toThrow('KidSigner: at least one key');
  });
});
