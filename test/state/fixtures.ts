import { randomBytes } from 'node:crypto';
import {
  Keyring,
  type StateBinding,
  StateCodec,
  type StateCodecOptions,
  type StateKey,
} from '../../src/state/index.js';

export const T0 = Date.UTC(2026, 10, 29, 12, 0, 0);

/** A settable clock for codecs under test. */
export function testClock(start = T0): {
  now: () => number;
  set: (t: number) => void;
  advance: (ms: number) => void;
} {
  let t = start;
  return {
    now: () => t,
    set: (v) => {
      t = v;
    },
    advance: (ms) => {
      t += ms;
    },
  };
}

export function key(kid: string): StateKey {
  return { kid, secret: randomBytes(32) };
}

export function codec(keys: StateKey[], extra: Partial<StateCodecOptions> = {}): StateCodec {
  return new StateCodec({ keyring: new Keyring(keys), audience: 'server-a', now: () => T0, ...extra });
}

export const alice = { subject: 'alice', issuer: 'https://idp.example.com', clientId: 'client-1' };

export const binding: StateBinding = {
  principal: alice,
  method: 'tools/call',
  target: 'deploy',
  arguments: { env: 'prod', replicas: 3 },
};

export const payload = { step: 'confirm', answers: [{ key: 'ok', value: true }] };

/** Flips bit `bit` of byte `index` of a base64url token and re-encodes it canonically. */
export function flipBit(token: string, index: number, bit: number): string {
  const bytes = Buffer.from(token, 'base64url');
  bytes[index % bytes.length]! ^= 1 << (bit % 8);
  return bytes.toString('base64url');
}
