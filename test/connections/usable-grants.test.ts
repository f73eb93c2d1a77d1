// When a kept grant is used as it is, refreshed or dropped: the expiry skew to the millisecond, a grant without a
// refresh token, an authorization server out of reach, one that does not rotate refresh tokens. One instance, a
// scripted third party, a fixed clock.
import { describe, expect, it } from 'vitest';
import { UsableGrants } from '../../src/connections/connect-grants.js';
import {
  type AuthorizationFlow,
  ConnectionRefused,
  storeVault,
  type TokenGrant,
} from '../../src/connections/index.js';
import { Keyring } from '../../src/state/index.js';
import { MemoryStore } from '../../src/stores/index.js';

const KEYS = `k1:${Buffer.alloc(32, 7).toString('base64url')}`;
const alice = { issuer: 'https://id.example', subject: 'alice' };
const NOW = 5_000_000;
const SKEW = 60_000;
const base: TokenGrant = { accessToken: 'at-0', scopes: ['tickets:read'], issuer: 'https://as.example' };

/** A vault holding `grant`, and UsableGrants over a third party whose refresh does `refresh`. */
async function using(grant: TokenGrant, refresh: (g: TokenGrant) => Promise<TokenGrant>) {
  const vault = storeVault(new MemoryStore(), Keyring.fromSpec(KEYS), { now: () => NOW });
  await vault.put(alice, 'tracker', grant);
  const refreshes: TokenGrant[] = [];
  const dropped: string[] = [];
  const grants = new UsableGrants({
    vault,
    flow: () =>
      ({
        refresh: (g: TokenGrant) => {
          refreshes.push(g);
          return refresh(g);
        },
      }) as unknown as AuthorizationFlow,
    refreshSkewMs: SKEW,
    now: () => NOW,
    refreshed: () => {},
    dropped: (_o, _c, why) => dropped.push(why),
    revoke: async () => true,
  });
  return { vault, grants, refreshes, dropped };
}

const rotated = async (g: TokenGrant): Promise<TokenGrant> => ({
  ...g,
  accessToken: 'at-1',
  refreshToken: 'rt-1',
  expiresAt: NOW + 3_600_000,
});

describe('a kept grant, as a caller uses it', () => {
  it('is used as it is with no expiry, or more than the skew away; at the skew exactly it is refreshed', async () => {
    for (const expiresAt of [undefined, NOW + SKEW + 1]) {
      const { grants, refreshes } = await using({ ...base, refreshToken: 'rt-0', expiresAt }, rotated);
      expect((await grants.current(alice, 'tracker'))?.accessToken).toBe('at-0');
      expect(refreshes).toEqual([]);
    }
    const { grants, refreshes, vault } = await using(
      { ...base, refreshToken: 'rt-0', expiresAt: NOW + SKEW },
      rotated,
    );
    expect((await grants.current(alice, 'tracker'))?.accessToken).toBe('at-1');
    expect(refreshes.map((g) => g.refreshToken)).toEqual(['rt-0']);
    expect((await vault.get(alice, 'tracker'))?.refreshToken).toBe('rt-1');
  });

  it('without a refresh token: used until it expires, then dropped with why', async () => {
    const live = await using({ ...base, expiresAt: NOW + 1 }, rotated);
    expect((await live.grants.current(alice, 'tracker'))?.accessToken).toBe('at-0');
    expect(live.dropped).toEqual([]);
    const ended = await using({ ...base, expiresAt: NOW }, rotated);
    expect(await ended.grants.current(alice, 'tracker')).toBeUndefined();
    expect(ended.dropped).toEqual(['the access token expired and there is no refresh token']);
    expect(await ended.vault.get(alice, 'tracker')).toBeUndefined();
    expect(ended.refreshes).toEqual([]);
  });

  it('an authorization server out of reach: the token serves while it lasts, then the failure is thrown; the grant stays', async () => {
    const outage = () =>
      Promise.reject(new ConnectionRefused('unavailable', 'the authorization server is down'));
    const lasting = await using({ ...base, refreshToken: 'rt-0', expiresAt: NOW + 1 }, outage);
    expect((await lasting.grants.current(alice, 'tracker'))?.accessToken).toBe('at-0');
    const ended = await using({ ...base, refreshToken: 'rt-0', expiresAt: NOW }, outage);
    await expect(ended.grants.current(alice, 'tracker')).rejects.toMatchObject({ reason: 'unavailable' });
    expect((await ended.vault.get(alice, 'tracker'))?.accessToken).toBe('at-0');
    expect(ended.dropped).toEqual([]);
  });

  it('callers at once share one refresh of their own grant, never another person’s', async () => {
    const bob = { issuer: 'https://id.example', subject: 'bob' };
    let opened!: () => void;
    const gate = new Promise<void>((open) => (opened = open));
    const { grants, vault, refreshes } = await using(
      { ...base, refreshToken: 'rt-alice', expiresAt: NOW },
      async (g) => {
        await gate;
        return {
          ...g,
          accessToken: `at-of-${g.refreshToken}`,
          refreshToken: `${g.refreshToken}-1`,
          expiresAt: NOW + 3_600_000,
        };
      },
    );
    await vault.put(bob, 'tracker', {
      ...base,
      accessToken: 'at-bob',
      refreshToken: 'rt-bob',
      expiresAt: NOW,
    });
    const calls = [
      grants.current(alice, 'tracker'),
      grants.current(alice, 'tracker'),
      grants.current(bob, 'tracker'),
    ];
    opened();
    const [a1, a2, b] = await Promise.all(calls);
    expect([a1?.accessToken, a2?.accessToken, b?.accessToken]).toEqual([
      'at-of-rt-alice',
      'at-of-rt-alice',
      'at-of-rt-bob',
    ]);
    // One refresh per person: a rotating refresh token used twice would be refused the second time.
    expect(refreshes.map((g) => g.refreshToken).sort()).toEqual(['rt-alice', 'rt-bob']);
  });

  it('a server that does not rotate refresh tokens (none in its answer): the one kept still refreshes next time', async () => {
    const { grants, vault } = await using({ ...base, refreshToken: 'rt-0', expiresAt: NOW }, async (g) => ({
      accessToken: 'at-1',
      scopes: g.scopes,
      issuer: g.issuer,
      expiresAt: NOW + 3_600_000,
    }));
    expect((await grants.current(alice, 'tracker'))?.refreshToken).toBe('rt-0');
    expect(await vault.get(alice, 'tracker')).toMatchObject({ accessToken: 'at-1', refreshToken: 'rt-0' });
  });
});
