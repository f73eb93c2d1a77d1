// A token the third party refused (an HTTP 401): `forget` drops it, and revokes it at the authorization server as
// well, since its refresh token may still be good there. Best effort, in the background, within a limit: the call's
// answer never waits for the authorization server.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { bearerDigest } from '../../src/client/internal.js';
import {
  type AuthorizationFlow,
  CONNECTIONS_DEFAULTS,
  type ConnectionEvent,
  Connections,
  type TokenGrant,
} from '../../src/connections/index.js';
import { createEphemeralKeyring } from '../../src/state/index.js';
import { MemoryStore } from '../../src/stores/index.js';
import { sessionCookie } from '../helpers/page-sessions.js';
import { connectFromNode, connectServer, MemoryVault } from './connect-fixture.js';

const alice = { issuer: 'urn:mrtr:dev-tokens', subject: 'alice' };

/** Connections over a memory vault with `flow` as every connection's OAuth client; `revoked` is the first revoked event. */
function connectionsWith(flow: AuthorizationFlow) {
  const vault = new MemoryVault(Date.now);
  const events: ConnectionEvent[] = [];
  let told!: (e: ConnectionEvent) => void;
  const revoked = new Promise<ConnectionEvent>((resolve) => (told = resolve));
  const connections = new Connections({
    store: new MemoryStore(),
    vault,
    keyring: createEphemeralKeyring(),
    flowFor: () => flow,
    connections: [{ name: 'tracker', issuer: 'https://as.example', clientId: 'c', scopes: [] }],
    onEvent: (e) => {
      events.push(e);
      if (e.action === 'revoked') told(e);
    },
  });
  return { connections, vault, events, revoked };
}

/** connectionsWith an authorization server that takes every revocation; `revokedTokens` are their access tokens. */
function connectionsRevoking() {
  const revokedTokens: string[] = [];
  const flow = {
    revoke: async (g: TokenGrant) => {
      revokedTokens.push(g.accessToken);
    },
  } as unknown as AuthorizationFlow;
  return { ...connectionsWith(flow), revokedTokens };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('forget(owner, name, why) after a 401', () => {
  it('drops the grant and revokes it at the authorization server; the event says so, never the token', async () => {
    const f = await connectServer();
    const cookie = await sessionCookie(f.origin, 'alice-token');
    const first = await f.call('alice-token');
    await connectFromNode(first.inputRequests.connect_tracker.params.url, cookie);
    expect(f.vault.grants.size).toBe(1);
    const revoked = f.next((e) => e.action === 'revoked');
    await f.connections.forget(alice, 'tracker', 'refused by the upstream');
    expect(f.vault.grants.size).toBe(0);
    expect((await revoked).detail).toEqual({ why: 'refused by the upstream', revokedAtIssuer: true });
    expect(f.as.revoked).toEqual(['tracker-at-1']);
    expect(JSON.stringify(f.events)).not.toContain('tracker-at-');
    // Nothing to forget: nothing revoked.
    await f.connections.forget(alice, 'tracker', 'again');
    expect(f.as.revoked).toEqual(['tracker-at-1']);
  });

  it('an authorization server that never answers holds nobody: forget returns at once, the revocation gives up at its limit', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const grant: TokenGrant = {
      accessToken: 'at',
      refreshToken: 'rt',
      scopes: [],
      issuer: 'https://as.example',
    };
    let signalled: AbortSignal | undefined;
    const flow = {
      // Never settles, and ignores its signal: the limit must hold all the same.
      revoke: (_g: TokenGrant, signal?: AbortSignal) => {
        signalled = signal;
        return new Promise<void>(() => {});
      },
    } as unknown as AuthorizationFlow;
    const { connections, vault, events, revoked } = connectionsWith(flow);
    await vault.put(alice, 'tracker', grant);
    await connections.forget(alice, 'tracker', 'refused by the upstream');
    expect(vault.grants.size).toBe(0);
    expect(signalled?.aborted).toBe(false);
    expect(events).toEqual([]);
    await vi.advanceTimersByTimeAsync(CONNECTIONS_DEFAULTS.revokeTimeoutMs);
    expect(signalled?.aborted).toBe(true);
    expect((await revoked).detail).toEqual({ why: 'refused by the upstream', revokedAtIssuer: false });
  });

  it('a late refusal of an older token keeps the grant the person got since; a refusal of the current one drops it', async () => {
    const { revokedTokens, connections, vault, revoked } = connectionsRevoking();
    const grant = { refreshToken: 'rt', scopes: [], issuer: 'https://as.example' };
    await vault.put(alice, 'tracker', { ...grant, accessToken: 'old' });
    // A request goes with the old token; the grant is refreshed before its 401 comes back.
    await vault.put(alice, 'tracker', { ...grant, accessToken: 'new' });
    await connections.forget(alice, 'tracker', 'refused by the upstream', bearerDigest('old'));
    expect((await vault.get(alice, 'tracker'))?.accessToken).toBe('new');
    expect(revokedTokens).toEqual([]);
    // A refusal of the token held now: dropped and revoked.
    await connections.forget(alice, 'tracker', 'refused by the upstream', bearerDigest('new'));
    expect(vault.grants.size).toBe(0);
    expect((await revoked).detail).toEqual({ why: 'refused by the upstream', revokedAtIssuer: true });
    expect(revokedTokens).toEqual(['new']);
  });

  it('disconnect revokes a grant refreshed on another instance while it ran, and removes it', async () => {
    const { revokedTokens, connections, vault, events } = connectionsRevoking();
    const grant = { scopes: [], issuer: 'https://as.example' };
    await vault.put(alice, 'tracker', { ...grant, accessToken: 'old', refreshToken: 'rt-old' });
    const remove = vault.remove.bind(vault);
    let refreshes = 1;
    vault.remove = async (owner, name, holding) => {
      // The first removal comes after another instance refreshed the grant.
      if (refreshes-- > 0)
        await vault.put(owner, name, { ...grant, accessToken: 'new', refreshToken: 'rt-new' });
      return remove(owner, name, holding);
    };
    expect(await connections.disconnect(alice, 'tracker')).toBe(true);
    expect(revokedTokens).toEqual(['old', 'new']);
    expect(vault.grants.size).toBe(0);
    expect(events.filter((e) => e.action === 'disconnected').map((e) => e.detail)).toEqual([
      { revokedAtIssuer: true },
    ]);
  });

  it('a grant refreshed under every try of a disconnect is removed after 3 tries, unrevoked, and the event says so', async () => {
    const { revokedTokens, connections, vault, events } = connectionsRevoking();
    const grant = { scopes: [], issuer: 'https://as.example' };
    await vault.put(alice, 'tracker', { ...grant, accessToken: 'at-0', refreshToken: 'rt-0' });
    const remove = vault.remove.bind(vault);
    let n = 0;
    vault.remove = async (owner, name, holding) => {
      // Another instance refreshes before each of this one's removals that hold tokens.
      if (holding)
        await vault.put(owner, name, { ...grant, accessToken: `at-${++n}`, refreshToken: `rt-${n}` });
      return remove(owner, name, holding);
    };
    expect(await connections.disconnect(alice, 'tracker')).toBe(true);
    expect(revokedTokens).toEqual(['at-0', 'at-1', 'at-2']);
    expect(vault.grants.size).toBe(0);
    expect(events.filter((e) => e.action === 'disconnected').map((e) => e.detail)).toEqual([
      { revokedAtIssuer: false },
    ]);
  });

  it('disconnect waits for a revocation that never ends only up to its limit, then removes the grant', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const flow = { revoke: () => new Promise<void>(() => {}) } as unknown as AuthorizationFlow;
    const { connections, vault, events } = connectionsWith(flow);
    await vault.put(alice, 'tracker', {
      accessToken: 'at',
      refreshToken: 'rt',
      scopes: [],
      issuer: 'https://as.example',
    });
    const disconnecting = connections.disconnect(alice, 'tracker');
    await vi.advanceTimersByTimeAsync(CONNECTIONS_DEFAULTS.revokeTimeoutMs);
    expect(await disconnecting).toBe(true);
    expect(vault.grants.size).toBe(0);
    expect(events.filter((e) => e.action === 'disconnected').map((e) => e.detail)).toEqual([
      { revokedAtIssuer: false },
    ]);
  });

  it('a grant put between reading and removing it (a refresh on another instance) stays, unrevoked', async () => {
    const { revokedTokens, connections, vault, events } = connectionsRevoking();
    const grant = { refreshToken: 'rt', scopes: [], issuer: 'https://as.example' };
    await vault.put(alice, 'tracker', { ...grant, accessToken: 'old' });
    const read = vault.get.bind(vault);
    vault.get = async (owner, name) => {
      const got = await read(owner, name);
      await vault.put(owner, name, { ...grant, accessToken: 'new' });
      return got;
    };
    await connections.forget(alice, 'tracker', 'refused by the upstream', bearerDigest('old'));
    expect((await read(alice, 'tracker'))?.accessToken).toBe('new');
    expect(revokedTokens).toEqual([]);
    expect(events.filter((e) => e.action === 'revoked')).toEqual([]);
  });
});
