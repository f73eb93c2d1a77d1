// The authorization requests a connect link starts, kept server-side until their callback: sealed with the server's
// keyring (they hold the PKCE verifier), and a few per person and connection, the oldest dropped past that.
import { describe, expect, it, vi } from 'vitest';
import { CONNECTIONS_DEFAULTS } from '../../src/connections/index.js';
import { getPage, sessionCookie } from '../helpers/page-sessions.js';
import { connectServer } from './connect-fixture.js';

// biome-ignore lint/suspicious/noExplicitAny: replies are read as loose JSON, checked by the expectations
const linkOf = (reply: any) => reply.inputRequests.connect_tracker.params.url as string;

/** Open the link as the person: where their browser is sent, at the third party (the state is in it). */
async function open(link: string, cookie: string): Promise<string> {
  const res = await fetch(link, { headers: { cookie }, redirect: 'manual' });
  expect(res.status).toBe(303);
  return res.headers.get('location')!;
}

/** The third party says yes to the request at `atAs`: the callback URL it sends the browser back to. */
const allowed = async (atAs: string) => (await fetch(atAs, { redirect: 'manual' })).headers.get('location')!;

describe('authorization requests on their way', () => {
  it('are kept sealed: neither the PKCE verifier nor the state is in the store', async () => {
    const f = await connectServer();
    const written: string[] = [];
    const create = f.store.create.bind(f.store);
    vi.spyOn(f.store, 'create').mockImplementation((key, value, ttl) => {
      written.push(`${key} ${value}`);
      return create(key, value, ttl);
    });
    const alice = await sessionCookie(f.origin, 'alice-token');
    const atAs = await open(linkOf(await f.call('alice-token')), alice);
    const { codeVerifier, state } = f.as.lastPending!;
    const kept = written.filter((w) => w.startsWith('mrtr/connect-auth/'));
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatch(/"kid":/);
    for (const w of written) {
      expect(w).not.toContain(codeVerifier);
      expect(w).not.toContain(state);
    }
    // And it still opens for its callback.
    expect((await getPage(await allowed(atAs), alice)).status).toBe(200);
  });

  it(`a person keeps ${CONNECTIONS_DEFAULTS.authorizationsPerPerson} per connection: opening the link again past that drops the oldest, the newest works`, async () => {
    const f = await connectServer();
    const alice = await sessionCookie(f.origin, 'alice-token');
    const link = linkOf(await f.call('alice-token'));
    const opened: string[] = [];
    for (let i = 0; i <= CONNECTIONS_DEFAULTS.authorizationsPerPerson; i++)
      opened.push(await open(link, alice));
    const oldest = await getPage(await allowed(opened[0]!), alice);
    expect(oldest.status).toBe(400);
    expect(oldest.html).toContain('unknown, expired, or was already used');
    expect(f.vault.grants.size).toBe(0);
    // The second oldest is still within the limit, as is the newest.
    expect((await getPage(await allowed(opened[1]!), alice)).status).toBe(200);
    expect(f.vault.grants.size).toBe(1);
  });

  it("one person's requests do not push out another's", async () => {
    const f = await connectServer();
    const alice = await sessionCookie(f.origin, 'alice-token');
    const bob = await sessionCookie(f.origin, 'bob-token');
    const alicesFirst = await open(linkOf(await f.call('alice-token')), alice);
    const bobsLink = linkOf(await f.call('bob-token'));
    for (let i = 0; i <= CONNECTIONS_DEFAULTS.authorizationsPerPerson; i++) await open(bobsLink, bob);
    expect((await getPage(await allowed(alicesFirst), alice)).status).toBe(200);
  });
});

describe('a request that cannot be put on the person list', () => {
  it('is not left in the store (a burst of parallel opens cannot get past the cap)', async () => {
    const { PendingAuthorizations } = await import('../../src/connections/connect-pending.js');
    const { MemoryStore } = await import('../../src/stores/index.js');
    const { Keyring } = await import('../../src/state/index.js');
    const store = new MemoryStore();
    const pending = new PendingAuthorizations(
      store,
      Keyring.fromSpec(`k1:${Buffer.alloc(32, 6).toString('base64url')}`),
      {
        ttlMs: 60_000,
        perPerson: 5,
        now: () => 0,
      },
    );
    // Another open always wins the race for the person's list.
    const create = store.create.bind(store);
    vi.spyOn(store, 'create').mockImplementation((key, value, ttl) =>
      key.startsWith('mrtr/connect-auth-of/') ? Promise.resolve(false) : create(key, value, ttl),
    );
    const owner = { issuer: 'https://id.example.com', subject: 'alice' };
    const onItsWay = { id: 'c1', pending: { state: 'the-state', codeVerifier: 'v', nonce: undefined } };
    await expect(
      pending.keep(owner, 'tracker', onItsWay as unknown as Parameters<typeof pending.keep>[2]),
    ).rejects.toThrow(/could not be updated/);
    expect(await pending.take('the-state')).toBeUndefined();
  });
});
