// What storeVault keeps on every shared store, as a suite each store's test runs against itself: grants round-trip
// sealed, open only for their owner and connection, survive a key rotation, and the lists and counts stay right.
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import type { ConnectionOwner, TokenGrant } from '../../src/connections/index.js';
import { storeVault } from '../../src/connections/index.js';
import { COUNTS_KEY, grantKey, indexKey } from '../../src/connections/vault-records.js';
import { Keyring } from '../../src/state/index.js';
import type { SharedStore } from '../../src/stores/index.js';

let counter = 0;
const unique = () => `${process.pid}-${++counter}-${randomBytes(3).toString('hex')}`;
/** A connection name of this test alone: counts are store-wide. */
const connectionName = () => `c${unique()}`.slice(0, 32);
const person = (name = 'ada'): ConnectionOwner => ({
  issuer: 'https://id.example.com',
  subject: `${name}-${unique()}`,
});
const keyring = (...kids: string[]) => new Keyring(kids.map((kid) => ({ kid, secret: randomBytes(32) })));

/** A grant whose tokens are easy to find in a raw stored string. */
function grantOf(tag: string, scopes = ['tickets:read', 'tickets:write']): TokenGrant {
  return {
    accessToken: `AT-${tag}-${randomBytes(8).toString('hex')}`,
    refreshToken: `RT-${tag}-${randomBytes(8).toString('hex')}`,
    expiresAt: 1_900_000_000_000,
    scopes,
    issuer: 'https://as.tracker.example',
  };
}

const rawKey = (owner: ConnectionOwner, connection: string) =>
  grantKey(owner.issuer, owner.subject, connection);

export interface VaultStoreUnderTest {
  store: SharedStore;
  /** Another handle on the same store (another instance of a fleet), when the store has such. */
  other?: SharedStore;
}

export function vaultContract(open: () => VaultStoreUnderTest): void {
  it('a grant put is the grant got, with its summary; nothing for another connection', async () => {
    const { store } = open();
    const vault = storeVault(store, keyring('k1'));
    const [ada, tracker, grant] = [person(), connectionName(), grantOf('rt')];
    await vault.put(ada, tracker, grant);
    const got = await vault.get(ada, tracker);
    expect(got).toMatchObject({ ...grant, connection: tracker });
    expect(got?.connectedAt).toEqual(expect.any(Number));
    expect(got?.refreshedAt).toBeUndefined();
    expect(await vault.get(ada, connectionName())).toBeUndefined();
    expect(await vault.get(person(), tracker)).toBeUndefined();
  });

  it('a second put replaces the tokens, keeps when it was connected and says when it was refreshed', async () => {
    const { store } = open();
    const vault = storeVault(store, keyring('k1'));
    const [ada, tracker] = [person(), connectionName()];
    await vault.put(ada, tracker, grantOf('first'));
    const first = await vault.get(ada, tracker);
    const fresh = grantOf('second', ['tickets:read']);
    await vault.put(ada, tracker, fresh);
    const second = await vault.get(ada, tracker);
    expect(second).toMatchObject({ ...fresh, connectedAt: first?.connectedAt });
    expect(second?.refreshedAt).toEqual(expect.any(Number));
    expect(await vault.counts()).toMatchObject({ [tracker]: 1 });
  });

  it('the store holds neither token nor the subject: not in the record, the index, the counts or a key', async () => {
    const { store } = open();
    const vault = storeVault(store, keyring('k1'));
    const [ada, tracker, grant] = [person(), connectionName(), grantOf('raw')];
    await vault.put(ada, tracker, grant);
    const keys = [rawKey(ada, tracker), indexKey(ada.issuer, ada.subject), COUNTS_KEY];
    const stored = await Promise.all(keys.map(async (key) => (await store.get(key))?.value ?? ''));
    expect(stored[0]).toMatch(/"ct":"/);
    for (const text of [...stored, ...keys]) {
      expect(text).not.toContain(grant.accessToken);
      expect(text).not.toContain(grant.refreshToken);
      expect(text).not.toContain(ada.subject);
    }
  });

  it("a record copied under another person's or connection's key opens as nothing there, and stays its owner's", async () => {
    const { store } = open();
    const vault = storeVault(store, keyring('k1'));
    const [ada, tracker, grant] = [person('ada'), connectionName(), grantOf('copy')];
    await vault.put(ada, tracker, grant);
    const record = (await store.get(rawKey(ada, tracker)))!.value;
    const bob = person('bob');
    const sameSubjectOtherIssuer = { issuer: 'https://other-id.example.com', subject: ada.subject };
    const mail = connectionName();
    for (const [owner, connection] of [
      [bob, tracker],
      [sameSubjectOtherIssuer, tracker],
      [ada, mail],
    ] as const) {
      expect(await store.create(rawKey(owner, connection), record, 60_000)).toBe(true);
      expect(await vault.get(owner, connection)).toBeUndefined();
      // Cleaned away, not left to be tried again.
      expect(await store.get(rawKey(owner, connection))).toBeUndefined();
    }
    expect((await vault.get(ada, tracker))?.accessToken).toBe(grant.accessToken);
  });

  it('an edited ciphertext, tag, key id, issuer or scope list reads as nothing, without a throw', async () => {
    const { store } = open();
    const vault = storeVault(store, keyring('k1', 'k0'));
    const flip = (b64: string, at: number) => {
      const bytes = Buffer.from(b64, 'base64url');
      bytes[at < 0 ? bytes.length + at : at]! ^= 1;
      return bytes.toString('base64url');
    };
    const edits: Array<(r: Record<string, unknown>) => void> = [
      (r) => (r.ct = flip(r.ct as string, 0)),
      (r) => (r.ct = flip(r.ct as string, -1)),
      (r) => (r.iv = flip(r.iv as string, 0)),
      (r) => (r.kid = 'k0'),
      (r) => (r.iss = 'https://evil.example'),
      (r) => (r.scopes = ['tickets:read', 'tickets:write', 'admin']),
      (r) => (r.ct = 'AA'),
      (r) => (r.v = 2),
      // Not a box's shape: a field of another type reads as nothing too, never as a throw.
      (r) => (r.iv = 12),
      (r) => (r.ct = null),
      (r) => (r.kid = ['k1']),
      (r) => (r.iv = flip(r.iv as string, 0).slice(0, 8)),
    ];
    for (const edit of edits) {
      const [ada, tracker] = [person(), connectionName()];
      await vault.put(ada, tracker, grantOf('tamper'));
      const entry = (await store.get(rawKey(ada, tracker)))!;
      const record = JSON.parse(entry.value) as Record<string, unknown>;
      edit(record);
      expect(await store.replace(rawKey(ada, tracker), entry.version, JSON.stringify(record), 60_000)).toBe(
        true,
      );
      expect(await vault.get(ada, tracker)).toBeUndefined();
      expect(await store.get(rawKey(ada, tracker))).toBeUndefined();
      expect(await vault.list(ada)).toEqual([]);
      expect((await vault.counts())[tracker]).toBeUndefined();
    }
    const [ada, tracker] = [person(), connectionName()];
    await store.create(rawKey(ada, tracker), 'not json', 60_000);
    expect(await vault.get(ada, tracker)).toBeUndefined();
  });

  it('after a rotation old records still open, and a read or a put re-seals them under the new current key', async () => {
    const { store } = open();
    const k1 = { kid: 'k1', secret: randomBytes(32) };
    const k2 = { kid: 'k2', secret: randomBytes(32) };
    const before = storeVault(store, new Keyring([k1]));
    const after = storeVault(store, new Keyring([k2, k1]));
    const [ada, bob, tracker] = [person('ada'), person('bob'), connectionName()];
    const [adaGrant, bobGrant] = [grantOf('ada'), grantOf('bob')];
    await before.put(ada, tracker, adaGrant);
    await before.put(bob, tracker, bobGrant);
    const kidOf = async (owner: ConnectionOwner) =>
      (JSON.parse((await store.get(rawKey(owner, tracker)))!.value) as { kid: string }).kid;
    expect(await kidOf(ada)).toBe('k1');

    expect((await after.get(ada, tracker))?.accessToken).toBe(adaGrant.accessToken);
    expect(await kidOf(ada)).toBe('k2');
    const refreshed = grantOf('bob-refreshed');
    await after.put(bob, tracker, refreshed);
    expect(await kidOf(bob)).toBe('k2');
    expect((await after.get(bob, tracker))?.accessToken).toBe(refreshed.accessToken);
    expect(await after.counts()).toMatchObject({ [tracker]: 2 });
  });

  it('a record under a key this instance does not hold (a rolling rotation) reads as nothing here and is never removed or overwritten, until the person connects again', async () => {
    const { store } = open();
    const k1 = { kid: 'k1', secret: randomBytes(32) };
    const k2 = { kid: 'k2', secret: randomBytes(32) };
    // The instance not yet given k2, and the one already sealing with it.
    const notYet = storeVault(store, new Keyring([k1]));
    const updated = storeVault(store, new Keyring([k2, k1]));
    const [ada, bob, tracker] = [person('ada'), person('bob'), connectionName()];
    const [adaGrant, bobGrant, again] = [grantOf('ada'), grantOf('bob'), grantOf('ada-again')];
    await updated.put(ada, tracker, adaGrant);
    await notYet.put(bob, tracker, bobGrant);
    const sealed = await store.get(rawKey(ada, tracker));

    expect(await notYet.get(ada, tracker)).toBeUndefined();
    expect(await notYet.list(ada)).toEqual([]);
    expect(await notYet.remove(ada, tracker)).toBe(false);
    // Read, listed and removed on the instance that cannot open it: the record is exactly as it was.
    expect(await store.get(rawKey(ada, tracker))).toEqual(sealed);
    expect((await updated.get(ada, tracker))?.accessToken).toBe(adaGrant.accessToken);
    expect(await updated.list(ada)).toHaveLength(1);
    expect(await notYet.counts()).toMatchObject({ [tracker]: 2 });
    expect((await notYet.get(bob, tracker))?.accessToken).toBe(bobGrant.accessToken);

    // Ada connects again through the instance not yet updated: her new grant replaces the one it could not open.
    await notYet.put(ada, tracker, again);
    expect((await notYet.get(ada, tracker))?.accessToken).toBe(again.accessToken);
    expect(await notYet.counts()).toMatchObject({ [tracker]: 2 });
  });

  it("a person's list and the counts follow puts and removes, for two people", async () => {
    const { store } = open();
    const vault = storeVault(store, keyring('k1'));
    const [ada, bob, tracker, mail] = [person('ada'), person('bob'), connectionName(), connectionName()];
    await vault.put(ada, tracker, grantOf('a1'));
    await vault.put(ada, mail, grantOf('a2', ['mail:read']));
    await vault.put(bob, tracker, grantOf('b1'));
    expect((await vault.list(ada)).map((s) => s.connection).sort()).toEqual([tracker, mail].sort());
    expect(await vault.list(bob)).toEqual([
      {
        connection: tracker,
        issuer: 'https://as.tracker.example',
        scopes: ['tickets:read', 'tickets:write'],
        connectedAt: expect.any(Number),
        expiresAt: 1_900_000_000_000,
      },
    ]);
    for (const summary of [...(await vault.list(ada)), ...(await vault.list(bob))])
      expect(JSON.stringify(summary)).not.toMatch(/AT-|RT-/);
    expect(await vault.counts()).toMatchObject({ [tracker]: 2, [mail]: 1 });

    expect(await vault.remove(ada, tracker)).toBe(true);
    expect(await vault.remove(ada, tracker)).toBe(false);
    expect(await vault.get(ada, tracker)).toBeUndefined();
    expect((await vault.list(ada)).map((s) => s.connection)).toEqual([mail]);
    expect(await vault.counts()).toMatchObject({ [tracker]: 1, [mail]: 1 });
    expect(await vault.remove(ada, mail)).toBe(true);
    expect(await vault.list(ada)).toEqual([]);
    expect(await store.get(indexKey(ada.issuer, ada.subject))).toBeUndefined();
    const counts = await vault.counts();
    expect(counts[mail]).toBeUndefined();
    expect(counts[tracker]).toBe(1);
  });

  it('another instance sharing the store and the keys reads the grant, and sees it gone after a remove', async () => {
    const { store, other = store } = open();
    const keys = keyring('k1', 'k0');
    const [one, two] = [storeVault(store, keys), storeVault(other, keys)];
    const [ada, tracker, grant] = [person(), connectionName(), grantOf('fleet')];
    await one.put(ada, tracker, grant);
    expect((await two.get(ada, tracker))?.refreshToken).toBe(grant.refreshToken);
    expect(await two.remove(ada, tracker)).toBe(true);
    expect(await one.get(ada, tracker)).toBeUndefined();
  });

  it('a remove holding tokens removes only the grant that still holds them: one refreshed on another instance stays', async () => {
    const { store, other = store } = open();
    const keys = keyring('k1');
    const [one, two] = [storeVault(store, keys), storeVault(other, keys)];
    const [ada, tracker] = [person(), connectionName()];
    const [read, refreshed] = [grantOf('read'), grantOf('refreshed')];
    await one.put(ada, tracker, read);
    // Instance one read `read` and is about to drop it; instance two refreshed the grant meanwhile.
    await two.put(ada, tracker, refreshed);
    expect(await one.remove(ada, tracker, read)).toBe(false);
    // Either token differing is another grant: a server that reissues the access token, or keeps the refresh token.
    expect(await one.remove(ada, tracker, { ...refreshed, refreshToken: read.refreshToken })).toBe(false);
    expect(await one.remove(ada, tracker, { ...refreshed, accessToken: read.accessToken })).toBe(false);
    // The kept grant stays listed: the owner's index still names it.
    expect(await store.get(indexKey(ada.issuer, ada.subject))).toBeDefined();
    expect((await one.get(ada, tracker))?.accessToken).toBe(refreshed.accessToken);
    expect((await one.list(ada)).map((s) => s.connection)).toEqual([tracker]);
    expect(await one.counts()).toMatchObject({ [tracker]: 1 });
    expect(await one.remove(ada, tracker, refreshed)).toBe(true);
    expect(await two.get(ada, tracker)).toBeUndefined();
    expect(await one.list(ada)).toEqual([]);
  });

  it('a put replacing tokens writes only over the grant that still holds them: never over a removal or another refresh', async () => {
    const { store, other = store } = open();
    const keys = keyring('k1');
    const [one, two] = [storeVault(store, keys), storeVault(other, keys)];
    const [ada, tracker] = [person(), connectionName()];
    const [read, mine, theirs] = [grantOf('read'), grantOf('mine'), grantOf('theirs')];
    await one.put(ada, tracker, read);
    // Instance two refreshed first: one's refresh of the same grant writes nothing.
    expect(await two.put(ada, tracker, theirs, read)).toBe(true);
    expect(await one.put(ada, tracker, mine, read)).toBe(false);
    expect((await one.get(ada, tracker))?.accessToken).toBe(theirs.accessToken);
    // The person disconnected while a refresh ran: it does not bring the grant back, nor the index entry.
    expect(await two.remove(ada, tracker)).toBe(true);
    expect(await one.put(ada, tracker, mine, theirs)).toBe(false);
    // Read raw first: a list would clean a stale index entry and hide it.
    expect(await store.get(indexKey(ada.issuer, ada.subject))).toBeUndefined();
    expect(await one.get(ada, tracker)).toBeUndefined();
    expect(await one.list(ada)).toEqual([]);
  });

  it('concurrent puts, on one instance or two, count each person once', async () => {
    const { store, other = store } = open();
    const keys = keyring('k1');
    const [one, two] = [storeVault(store, keys), storeVault(other, keys)];
    const [tracker, mail] = [connectionName(), connectionName()];
    const people = Array.from({ length: 6 }, (_, i) => person(`p${i}`));
    const ada = people[0]!;
    await Promise.all([
      ...people.map((p, i) => (i % 2 ? one : two).put(p, tracker, grantOf(`t${i}`))),
      ...[1, 2, 3, 4].map((i) => (i % 2 ? one : two).put(ada, tracker, grantOf(`again${i}`))),
      ...[1, 2, 3].map((i) => (i % 2 ? one : two).put(ada, mail, grantOf(`m${i}`))),
    ]);
    expect(await one.counts()).toMatchObject({ [tracker]: 6, [mail]: 1 });
    expect((await two.list(ada)).map((s) => s.connection).sort()).toEqual([tracker, mail].sort());
    await Promise.all([
      ...people.slice(0, 3).map((p, i) => (i % 2 ? one : two).remove(p, tracker)),
      one.remove(ada, mail),
      two.remove(ada, mail),
    ]);
    const counts = await two.counts();
    expect(counts[tracker]).toBe(3);
    expect(counts[mail]).toBeUndefined();
    expect(await one.list(ada)).toEqual([]);
  });
}
