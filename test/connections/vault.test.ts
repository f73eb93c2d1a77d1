// The vault on the in-process store, and what does not depend on the store: expiry and use marks on a fake clock,
// the usage errors, and a vault that shows no token or key however it is printed.
import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConnectionsUsageError, storeVault, type TokenGrant } from '../../src/connections/index.js';
import { grantKey, indexKey } from '../../src/connections/vault-records.js';
import { Keyring, purposeKeys, type StateKey } from '../../src/state/index.js';
import { MemoryStore } from '../../src/stores/index.js';
import { vaultContract } from './vault-contract.js';

const DAY = 24 * 3600 * 1000;
const ada = { issuer: 'https://id.example.com', subject: 'ada' };
const grant: TokenGrant = {
  accessToken: 'AT-secret-access',
  refreshToken: 'RT-secret-refresh',
  scopes: ['tickets:read'],
  issuer: 'https://as.tracker.example',
};

function fixture(options: { ttlMs?: number } = {}) {
  let now = 1_800_000_000_000;
  const clock = () => now;
  const store = new MemoryStore({ now: clock });
  const key: StateKey = { kid: 'k1', secret: randomBytes(32) };
  const vault = storeVault(store, new Keyring([key]), { now: clock, ...options });
  return { store, vault, key, advance: (ms: number) => (now += ms), clock };
}

describe('storeVault on the memory store', () => {
  vaultContract(() => ({ store: new MemoryStore() }));
});

describe('storeVault', () => {
  it('forgets a grant neither put nor read for ttlMs; the list lets it go, and the counts within a day', async () => {
    const { vault, advance } = fixture({ ttlMs: 10 * DAY });
    const bob = { ...ada, subject: 'bob' };
    await vault.put(ada, 'tracker', grant);
    await vault.put(bob, 'tracker', grant);
    advance(10 * DAY - 1);
    expect(await vault.list(ada)).toHaveLength(1);
    expect(await vault.counts()).toEqual({ tracker: 2 });
    advance(1);
    expect(await vault.get(ada, 'tracker')).toBeUndefined();
    expect(await vault.list(ada)).toEqual([]);
    expect(await vault.counts()).toEqual({ tracker: 1 });
    // Bob never comes back: nobody takes his grant out, and it leaves the counts once its last day is over.
    advance(DAY);
    expect(await vault.counts()).toEqual({});
  });

  it('a read marks the last use and renews the grant once a day, not once per call', async () => {
    const { store, vault, advance, clock } = fixture({ ttlMs: 10 * DAY });
    await vault.put(ada, 'tracker', grant);
    const key = grantKey(ada.issuer, ada.subject, 'tracker');
    const firstRead = clock();
    expect((await vault.get(ada, 'tracker'))?.lastUsedAt).toBe(firstRead);
    const version = (await store.get(key))?.version;
    advance(DAY - 1);
    expect((await vault.get(ada, 'tracker'))?.lastUsedAt).toBe(firstRead);
    expect((await store.get(key))?.version).toBe(version);
    advance(1);
    expect((await vault.get(ada, 'tracker'))?.lastUsedAt).toBe(clock());
    // Read every day, a grant outlives its ttl counted from the put, and so does the owner's index.
    for (let day = 0; day < 12; day++) {
      advance(DAY);
      expect(await vault.get(ada, 'tracker')).toBeDefined();
    }
    expect((await vault.list(ada)).map((s) => s.lastUsedAt)).toEqual([clock()]);
    expect(await vault.counts()).toEqual({ tracker: 1 });
  });

  it('an index entry whose record vanished is cleaned by the next list, and uncounted once', async () => {
    const { store, vault } = fixture();
    await vault.put(ada, 'tracker', grant);
    await vault.put(ada, 'mail', grant);
    const key = grantKey(ada.issuer, ada.subject, 'tracker');
    await store.remove(key, (await store.get(key))!.version);
    expect((await vault.list(ada)).map((s) => s.connection)).toEqual(['mail']);
    expect(await vault.list(ada)).toHaveLength(1);
    expect(await vault.counts()).toEqual({ mail: 1 });
    expect(JSON.parse((await store.get(indexKey(ada.issuer, ada.subject)))!.value)).toEqual({
      mail: expect.any(Number),
    });
  });

  it('names what is wrong when it is used wrongly, and never the token', async () => {
    const store = new MemoryStore();
    const vault = storeVault(store, new Keyring([{ kid: 'k1', secret: randomBytes(32) }]));
    const usage = async (call: () => unknown, message: RegExp) => {
      const error = await (async () => call())().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ConnectionsUsageError);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toMatch(/secret-access|secret-refresh/);
    };
    await usage(() => storeVault(store, undefined as never), /needs the server's keyring/);
    await usage(
      () => storeVault(undefined as never, new Keyring([{ kid: 'k', secret: randomBytes(32) }])),
      /SharedStore/,
    );
    await usage(
      () => storeVault(store, new Keyring([{ kid: 'k', secret: randomBytes(32) }]), { ttlMs: 0 }),
      /ttlMs must be a positive integer/,
    );
    await usage(
      () => vault.get(ada, 'Tracker'),
      /connection name "Tracker" is not 1-32 characters of a-z 0-9 -/,
    );
    await usage(() => vault.put(ada, '', grant), /connection name "" is not/);
    await usage(() => vault.list({ subject: 'ada' } as never), /owner needs an issuer/);
    await usage(
      () => vault.remove({ issuer: 'https://id.example.com', subject: '' }, 'tracker'),
      /needs a subject/,
    );
    await usage(() => vault.get(null as never, 'tracker'), /anonymous caller/);
    await usage(
      () => vault.put(ada, 'tracker', { ...grant, issuer: '' }),
      /needs the issuer that granted it/,
    );
    await usage(() => vault.put(ada, 'tracker', { ...grant, scopes: 'a b' as never }), /needs its scopes/);
    await usage(
      () => vault.put(ada, 'tracker', { ...grant, accessToken: 7 as never }),
      /needs an accessToken/,
    );
    await usage(() => vault.put(ada, 'tracker', { ...grant, expiresAt: Number.NaN }), /needs an expiresAt/);
  });

  it('shows no token or key however it is printed, and says which store it keeps grants in', async () => {
    const { vault, key } = fixture();
    await vault.put(ada, 'tracker', grant);
    await vault.get(ada, 'tracker');
    const [vaultKey] = purposeKeys(new Keyring([key]), 'mrtr/connections-vault');
    const secrets = [key.secret, vaultKey!.key].flatMap((k) => [
      Buffer.from(k).toString('base64url'),
      Buffer.from(k).toString('hex'),
    ]);
    const shown = [
      vault.description,
      String(vault),
      JSON.stringify(vault),
      inspect(vault, { depth: 10, showHidden: true }),
      JSON.stringify(await vault.list(ada)),
      JSON.stringify(await vault.counts()),
    ];
    for (const text of shown) {
      expect(text).not.toMatch(/secret-access|secret-refresh/);
      for (const secret of secrets) expect(text).not.toContain(secret);
    }
    expect(vault.description).toBe('connections vault in memory');
    expect(inspect(vault)).toBe('StoreVault { connections vault in memory }');
  });
});
