// Refreshes that overlap, as two instances of a fleet do: the one that loses (its rotated refresh token was already
// spent) takes the winner's grant instead of dropping it, and a refresh that ends after the person disconnected does
// not bring the grant back. Explicit gates order the steps; no timing.
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

const KEYS = `k1:${Buffer.alloc(32, 9).toString('base64url')}`;
const alice = { issuer: 'https://id.example', subject: 'alice' };
const NOW = 1_000_000;

/** A third party that rotates refresh tokens: each works once. `gate` holds a refresh until the test opens it. */
function rotatingFlow() {
  let n = 0;
  const spent = new Set<string>();
  const gates: Array<() => void> = [];
  const flow: AuthorizationFlow = {
    start: () => Promise.reject(new Error('not used')),
    finish: () => Promise.reject(new Error('not used')),
    revoke: async () => {},
    async refresh(grant) {
      await new Promise<void>((open) => gates.push(open));
      const token = grant.refreshToken ?? '';
      if (spent.has(token)) throw new ConnectionRefused('invalid_grant', 'refresh token already used');
      spent.add(token);
      n += 1;
      return { ...grant, accessToken: `at-${n}`, refreshToken: `rt-${n}`, expiresAt: NOW + 3_600_000 };
    },
  };
  return { flow, openNext: () => gates.shift()?.(), waiting: () => gates.length };
}

const first: TokenGrant = {
  accessToken: 'at-0',
  refreshToken: 'rt-0',
  expiresAt: NOW + 10_000, // due: inside the 60 s skew
  scopes: ['tickets:read'],
  issuer: 'https://as.example',
};

async function twoInstances() {
  const store = new MemoryStore();
  const vault = storeVault(store, Keyring.fromSpec(KEYS), { now: () => NOW });
  await vault.put(alice, 'tracker', first);
  const third = rotatingFlow();
  const dropped: string[] = [];
  const revoked: Array<string | undefined> = [];
  // Two instances: each its own UsableGrants (its own in-process de-duplication), one vault in the shared store.
  const instance = () =>
    new UsableGrants({
      vault,
      flow: () => third.flow,
      refreshSkewMs: 60_000,
      now: () => NOW,
      refreshed: () => {},
      dropped: (_o, _c, why) => dropped.push(why),
      revoke: async (_c, grant) => {
        revoked.push(grant.refreshToken);
        return true;
      },
    });
  return { vault, third, dropped, revoked, a: instance(), b: instance() };
}

/** Resolves once `n` refreshes wait at the third party's gate. */
async function untilWaiting(third: ReturnType<typeof rotatingFlow>, n: number) {
  while (third.waiting() < n) await new Promise<void>((r) => setImmediate(r));
}

describe('refreshes that overlap', () => {
  it('the instance whose refresh token was already spent takes the fresh grant, and nothing is dropped', async () => {
    const { vault, third, dropped, a, b } = await twoInstances();
    const onA = a.current(alice, 'tracker');
    const onB = b.current(alice, 'tracker');
    await untilWaiting(third, 2);
    third.openNext(); // A's refresh wins: rt-0 spent, rt-1 stored
    const won = await onA;
    third.openNext(); // B's refresh with rt-0 is refused
    const lost = await onB;
    expect(won?.accessToken).toBe('at-1');
    expect(lost?.accessToken).toBe('at-1');
    expect(dropped).toEqual([]);
    expect((await vault.get(alice, 'tracker'))?.refreshToken).toBe('rt-1');
  });

  it('a refused refresh drops only the grant it refreshed: one another instance put just before is kept, and serves', async () => {
    const vault = storeVault(new MemoryStore(), Keyring.fromSpec(KEYS), { now: () => NOW });
    await vault.put(alice, 'tracker', first);
    const fresh = { ...first, accessToken: 'at-other', refreshToken: 'rt-other', expiresAt: NOW + 3_600_000 };
    // Another instance connects again between this one's last read and its removal: the narrowest window there is.
    const remove = vault.remove.bind(vault);
    vault.remove = async (owner, connection, holding) => {
      await vault.put(owner, connection, fresh);
      return remove(owner, connection, holding);
    };
    const dropped: string[] = [];
    const grants = new UsableGrants({
      vault,
      flow: () =>
        ({
          refresh: () => Promise.reject(new ConnectionRefused('invalid_grant', 'refresh token revoked')),
        }) as unknown as AuthorizationFlow,
      refreshSkewMs: 60_000,
      now: () => NOW,
      refreshed: () => {},
      dropped: (_o, _c, why) => dropped.push(why),
      revoke: async () => true,
    });
    expect((await grants.current(alice, 'tracker'))?.accessToken).toBe('at-other');
    expect(dropped).toEqual([]);
    expect((await vault.get(alice, 'tracker'))?.refreshToken).toBe('rt-other');
    // Without a race the refused grant is dropped, and said so.
    vault.remove = remove;
    await vault.put(alice, 'tracker', first);
    expect(await grants.current(alice, 'tracker')).toBeUndefined();
    expect(dropped).toEqual(['refresh refused (invalid_grant)']);
  });

  it('a refresh that ends after the person disconnected does not bring the grant back, and revokes what it got', async () => {
    const { vault, third, revoked, a } = await twoInstances();
    const refreshing = a.current(alice, 'tracker');
    await untilWaiting(third, 1);
    expect(await vault.remove(alice, 'tracker')).toBe(true); // the person disconnects meanwhile
    third.openNext();
    expect(await refreshing).toBeUndefined();
    expect(await vault.get(alice, 'tracker')).toBeUndefined();
    // The rotated refresh token (rt-1) is kept nowhere: it is revoked, so it does not stay live at the third party.
    expect(revoked).toEqual(['rt-1']);
    // The person connects again; a refresh whose write loses to another instance's grant revokes nothing: the
    // grant in the vault is the person's, and it serves.
    await vault.put(alice, 'tracker', { ...first, refreshToken: 'rt-again' });
    const theirs = {
      ...first,
      accessToken: 'at-theirs',
      refreshToken: 'rt-theirs',
      expiresAt: NOW + 3_600_000,
    };
    const put = vault.put.bind(vault);
    vault.put = async (owner, connection, grant, replacing) => {
      await put(owner, connection, theirs);
      return put(owner, connection, grant, replacing);
    };
    const refreshingAgain = a.current(alice, 'tracker');
    await untilWaiting(third, 1);
    third.openNext();
    expect((await refreshingAgain)?.accessToken).toBe('at-theirs');
    expect(revoked).toEqual(['rt-1']);
  });
});
