// The OAuth client against a hostile resource server and authorization servers on 127.0.0.1: each test sends one
// attack of the client's security review and checks it is refused, and fails if the fix is undone.
import { afterEach, describe, expect, it } from 'vitest';
import {
  memoryTokenStore,
  OAuthClient,
  type OAuthClientOptions,
  type ServerCredentials,
} from '../../src/client/index.js';
import {
  authorizationServer,
  type Host,
  host,
  hugeJson,
  neverEnding,
  protectedResource,
} from './hostile-oauth.js';

const CAP = 16 * 1024 * 1024;
const hosts: Host[] = [];
afterEach(async () => {
  for (const h of hosts.splice(0)) await h.close();
});
async function hostile(): Promise<Host> {
  const h = await host();
  hosts.push(h);
  return h;
}

/** The browser step of a person who approves at once: back to the redirect URI with a code and the state. */
const approve = async (url: URL, redirectUri: string): Promise<URL> => {
  const back = new URL(redirectUri);
  back.searchParams.set('code', 'the-code');
  back.searchParams.set('state', url.searchParams.get('state') ?? '');
  return back;
};

/** A browser step that must not be reached: records the URL and fails the sign-in. */
function noSignIn(): { seen: URL[]; authorize: NonNullable<OAuthClientOptions['authorize']> } {
  const seen: URL[] = [];
  return {
    seen,
    authorize: async (url) => {
      seen.push(url);
      throw new Error('the person was sent to sign in');
    },
  };
}

/** A resource at rs/mcp whose metadata names `issuer` (rs's own URL as its resource unless `extra` says otherwise). */
function resourceNaming(rs: Host, issuer: string, extra: Record<string, unknown> = {}): URL {
  return new URL(
    protectedResource(rs, (r) => ({
      resource: `${r.origin}/mcp`,
      authorization_servers: [issuer],
      ...extra,
    })),
  );
}

const challengeFor = (rs: Host) =>
  `Bearer resource_metadata="${rs.origin}/.well-known/oauth-protected-resource/mcp"`;

describe('a stored refresh token goes only to the authorization server that issued it', () => {
  async function setUp(expiresAt: number) {
    const [rs, realAs, evilAs] = [await hostile(), await hostile(), await hostile()];
    authorizationServer(realAs);
    authorizationServer(evilAs);
    const server = resourceNaming(rs, evilAs.origin);
    const store = memoryTokenStore();
    store.set(server.href, {
      tokens: {
        accessToken: 'real-access',
        refreshToken: 'REAL-REFRESH',
        expiresAt,
        issuer: realAs.origin,
        resource: server.href,
      },
      client: { clientId: 'real-client', issuer: realAs.origin },
    });
    return { rs, realAs, evilAs, server, store };
  }

  it.each([
    ['a valid', Date.now() + 3_600_000],
    ['an expired', Date.now() - 1000],
  ])(
    'with %s access token, a resource that now names another server gets a new sign-in, not the refresh token',
    async (_what, expiresAt) => {
      const { rs, realAs, evilAs, server, store } = await setUp(expiresAt);
      const notices: string[] = [];
      const browser = noSignIn();
      const auth = new OAuthClient({ store, authorize: browser.authorize, onNotice: (m) => notices.push(m) });
      // The expired token is not refreshed on the way out: no session yet, so no authorization server to ask.
      await auth.accessToken(server);
      await expect(auth.handleChallenge(server, 401, challengeFor(rs))).rejects.toThrow(/sent to sign in/);
      const atEvil = evilAs.requests.map((r) => r.body).join('\n');
      expect(atEvil).not.toContain('REAL-REFRESH');
      expect(atEvil).not.toContain('grant_type=refresh_token');
      expect(atEvil).not.toContain('real-client');
      expect(browser.seen).toHaveLength(1);
      expect(notices).toEqual([
        `${server.host} now names the authorization server ${evilAs.origin} instead of ${realAs.origin}: the tokens from ${realAs.origin} are not sent there; sign in again`,
      ]);
      // The old tokens are gone: a later run cannot send them to whichever server the store's client names next.
      expect(store.get(server.href)?.tokens).toBeUndefined();
    },
  );

  it('the issuer that granted them still gets the refresh (and the new tokens record it)', async () => {
    const { rs, realAs, server, store } = await setUp(Date.now() - 1000);
    protectedResource(rs, (r) => ({ resource: `${r.origin}/mcp`, authorization_servers: [realAs.origin] }));
    const auth = new OAuthClient({ store, authorize: noSignIn().authorize });
    await auth.handleChallenge(server, 401, challengeFor(rs));
    const grant = realAs.requests.find((r) => r.path === '/token');
    expect(grant?.body).toContain('grant_type=refresh_token');
    expect(grant?.body).toContain('REAL-REFRESH');
    expect(store.get(server.href)?.tokens).toMatchObject({
      accessToken: 'token-1',
      issuer: realAs.origin,
      resource: server.href,
    });
  });

  it.each<[string, (real: string) => ServerCredentials]>([
    [
      'whose client was registered with the old server',
      (real) => ({
        tokens: { accessToken: 'a', refreshToken: 'OLD-REFRESH' },
        client: { clientId: 'c', issuer: real },
      }),
    ],
    ['with no record at all', () => ({ tokens: { accessToken: 'a', refreshToken: 'OLD-REFRESH' } })],
  ])('tokens kept before issuers were recorded, %s, are not sent to a new server', async (_what, stored) => {
    const [rs, realAs, evilAs] = [await hostile(), await hostile(), await hostile()];
    authorizationServer(evilAs);
    const server = resourceNaming(rs, evilAs.origin);
    const store = memoryTokenStore();
    store.set(server.href, stored(realAs.origin));
    const notices: string[] = [];
    const auth = new OAuthClient({
      store,
      authorize: noSignIn().authorize,
      onNotice: (m) => notices.push(m),
    });
    await expect(auth.handleChallenge(server, 401, challengeFor(rs))).rejects.toThrow(/sent to sign in/);
    expect(evilAs.requests.map((r) => r.body).join('\n')).not.toContain('OLD-REFRESH');
    expect(notices.join('\n')).toMatch(/sign in again/);
  });
});

describe('stored tokens go only to the resource they were issued for', () => {
  it('tokens of the same issuer for another resource are neither sent nor refreshed; a new sign-in, said plainly', async () => {
    const [rs, as] = [await hostile(), await hostile()];
    authorizationServer(as);
    const server = resourceNaming(rs, as.origin);
    const elsewhere = `${rs.origin}/other`;
    const store = memoryTokenStore();
    store.set(server.href, {
      tokens: {
        accessToken: 'OTHER-ACCESS',
        refreshToken: 'OTHER-REFRESH',
        expiresAt: Date.now() - 1000,
        issuer: as.origin,
        resource: elsewhere,
      },
      client: { clientId: 'real-client', issuer: as.origin },
    });
    const notices: string[] = [];
    const browser = noSignIn();
    const auth = new OAuthClient({ store, authorize: browser.authorize, onNotice: (m) => notices.push(m) });
    expect(await auth.accessToken(server)).toBeUndefined();
    await expect(auth.handleChallenge(server, 401, challengeFor(rs))).rejects.toThrow(/sent to sign in/);
    const atIssuer = as.requests.map((r) => r.body).join('\n');
    expect(atIssuer).not.toContain('OTHER-REFRESH');
    expect(atIssuer).not.toContain('grant_type=refresh_token');
    expect(browser.seen).toHaveLength(1);
    expect(notices).toEqual([
      `${server.host} now calls itself ${server.href} instead of ${elsewhere}: its old tokens are not used; sign in again`,
    ]);
    expect(store.get(server.href)?.tokens).toBeUndefined();
  });

  it('a valid access token issued for another resource is not sent', async () => {
    const rs = await hostile();
    const server = new URL(`${rs.origin}/mcp`);
    const store = memoryTokenStore();
    store.set(server.href, {
      tokens: {
        accessToken: 'OTHER-ACCESS',
        expiresAt: Date.now() + 3_600_000,
        resource: `${rs.origin}/other`,
      },
    });
    const auth = new OAuthClient({ store, authorize: noSignIn().authorize });
    expect(await auth.accessToken(server)).toBeUndefined();
    // Its own resource, or its whole origin, is covered.
    for (const resource of [server.href, rs.origin]) {
      store.set(server.href, {
        tokens: { accessToken: 'MINE', expiresAt: Date.now() + 3_600_000, resource },
      });
      expect(await auth.accessToken(server)).toBe('MINE');
    }
  });
});

describe('the sign-in link is https (or http on this machine) and nothing else', () => {
  it.each([
    ['javascript:', 'javascript:alert(document.cookie)'],
    ['file:', 'file:///etc/passwd'],
    ['vscode:', 'vscode://ms-vscode.remote/open?x=1'],
    ['data:', 'data:text/html,<h1>sign in</h1>'],
    ['plain http off this machine', 'http://as.example.com/authorize'],
  ])(
    'an authorization_endpoint that is %s is refused before anyone is sent there',
    async (_what, endpoint) => {
      const [rs, as] = [await hostile(), await hostile()];
      authorizationServer(as, { authorization_endpoint: endpoint });
      const server = resourceNaming(rs, as.origin);
      const browser = noSignIn();
      const auth = new OAuthClient({ store: memoryTokenStore(), authorize: browser.authorize });
      await expect(auth.handleChallenge(server, 401, challengeFor(rs))).rejects.toThrow(
        /the authorization endpoint .*refused/,
      );
      expect(browser.seen).toEqual([]);
    },
  );
});

describe('OAuth documents are capped like MCP responses (16 MiB)', () => {
  it('a protected resource metadata document just over the cap is refused, naming it and the cap', async () => {
    const rs = await hostile();
    rs.route('/mcp', (_req, res) => res.writeHead(401).end());
    rs.route('/.well-known/oauth-protected-resource/mcp', (_req, res) => hugeJson(res, CAP + 1));
    const auth = new OAuthClient({ store: memoryTokenStore(), authorize: noSignIn().authorize });
    await expect(auth.handleChallenge(new URL(`${rs.origin}/mcp`), 401, challengeFor(rs))).rejects.toThrow(
      /the protected resource metadata from 127\.0\.0\.1:\d+ is larger than 16 MiB \(the cap on OAuth documents\)/,
    );
  });

  it('a token response just over the cap is refused', async () => {
    const [rs, as] = [await hostile(), await hostile()];
    authorizationServer(as);
    as.route('/token', (_req, res) => hugeJson(res, CAP + 1));
    const server = resourceNaming(rs, as.origin);
    const auth = new OAuthClient({ store: memoryTokenStore(), authorize: approve });
    await expect(auth.handleChallenge(server, 401, challengeFor(rs))).rejects.toThrow(
      /the token response from 127\.0\.0\.1:\d+ is larger than 16 MiB/,
    );
  });

  it.each([
    ['authorization server metadata', '/.well-known/oauth-authorization-server'],
    ['registration response', '/register'],
  ])('the %s is capped too (a smaller cap given)', async (what, path) => {
    const [rs, as] = [await hostile(), await hostile()];
    authorizationServer(as);
    as.route(path, (_req, res) => hugeJson(res, 4097));
    const server = resourceNaming(rs, as.origin);
    const auth = new OAuthClient({ store: memoryTokenStore(), authorize: approve, maxDocumentBytes: 4096 });
    await expect(auth.handleChallenge(server, 401, challengeFor(rs))).rejects.toThrow(
      new RegExp(`the ${what} from 127\\.0\\.0\\.1:\\d+ is larger than 4096 bytes`),
    );
  });

  it('a length header over the cap is refused before the body is read', async () => {
    const rs = await hostile();
    rs.route('/.well-known/oauth-protected-resource/mcp', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(CAP + 1) });
      res.write('{');
    });
    const auth = new OAuthClient({ store: memoryTokenStore(), authorize: noSignIn().authorize });
    await expect(auth.handleChallenge(new URL(`${rs.origin}/mcp`), 401, challengeFor(rs))).rejects.toThrow(
      /larger than 16 MiB/,
    );
  });
});

describe('the caller’s deadline bounds every OAuth request and the wait for the browser', () => {
  it('metadata that never ends is abandoned when the signal aborts', async () => {
    const rs = await hostile();
    rs.route('/.well-known/oauth-protected-resource/mcp', (_req, res) => neverEnding(res));
    const stop = new AbortController();
    rs.onRequest = (r) => {
      if (r.path.startsWith('/.well-known/')) stop.abort(new Error('the deadline'));
    };
    const auth = new OAuthClient({ store: memoryTokenStore(), authorize: noSignIn().authorize });
    await expect(
      auth.handleChallenge(new URL(`${rs.origin}/mcp`), 401, challengeFor(rs), 0, stop.signal),
    ).rejects.toThrow(/the deadline/);
  });

  it('an authorize step that ignores the signal still ends when it aborts', async () => {
    const [rs, as] = [await hostile(), await hostile()];
    authorizationServer(as);
    const server = resourceNaming(rs, as.origin);
    const stop = new AbortController();
    const auth = new OAuthClient({
      store: memoryTokenStore(),
      authorize: () => {
        stop.abort(new Error('the deadline'));
        return new Promise<URL>(() => {});
      },
    });
    await expect(auth.handleChallenge(server, 401, challengeFor(rs), 0, stop.signal)).rejects.toThrow(
      /the deadline/,
    );
  });
});

describe('what the metadata must say', () => {
  it.each([
    ['without code_challenge_methods_supported', { code_challenge_methods_supported: undefined }],
    ['with plain only', { code_challenge_methods_supported: ['plain'] }],
  ])('an authorization server %s is refused (PKCE S256 is required)', async (_what, overrides) => {
    const [rs, as] = [await hostile(), await hostile()];
    authorizationServer(as, overrides);
    const server = resourceNaming(rs, as.origin);
    const browser = noSignIn();
    const auth = new OAuthClient({ store: memoryTokenStore(), authorize: browser.authorize });
    await expect(auth.handleChallenge(server, 401, challengeFor(rs))).rejects.toThrow(
      /does not advertise PKCE with S256 \(code_challenge_methods_supported\): refusing to sign in there/,
    );
    expect(browser.seen).toEqual([]);
  });

  it('resource metadata without "resource" is refused', async () => {
    const [rs, as] = [await hostile(), await hostile()];
    authorizationServer(as);
    const server = new URL(protectedResource(rs, () => ({ authorization_servers: [as.origin] })));
    const auth = new OAuthClient({ store: memoryTokenStore(), authorize: noSignIn().authorize });
    await expect(auth.handleChallenge(server, 401, challengeFor(rs))).rejects.toThrow(
      /does not name its resource \(RFC 9728 requires "resource"\)/,
    );
    expect(as.requests).toEqual([]);
  });

  it('resource metadata naming another resource is refused before any authorization server is asked', async () => {
    const [rs, as] = [await hostile(), await hostile()];
    authorizationServer(as);
    const server = resourceNaming(rs, as.origin, { resource: 'https://elsewhere.example/mcp' });
    const browser = noSignIn();
    const auth = new OAuthClient({ store: memoryTokenStore(), authorize: browser.authorize });
    await expect(auth.handleChallenge(server, 401, challengeFor(rs))).rejects.toThrow(
      `the protected resource metadata is for https://elsewhere.example/mcp, not ${server.href}: refusing to send a token there`,
    );
    expect(as.requests).toEqual([]);
    expect(browser.seen).toEqual([]);
  });

  it('a resource naming its bare origin is accepted, and the person is told the token covers the whole origin', async () => {
    const [rs, as] = [await hostile(), await hostile()];
    authorizationServer(as);
    const server = resourceNaming(rs, as.origin, { resource: rs.origin });
    const notices: string[] = [];
    const auth = new OAuthClient({
      store: memoryTokenStore(),
      authorize: approve,
      onNotice: (m) => notices.push(m),
    });
    await auth.handleChallenge(server, 401, challengeFor(rs));
    expect(notices).toEqual([
      `127.0.0.1:${new URL(rs.origin).port} names its whole origin ${rs.origin} as the resource: a token it gets is good for every path on 127.0.0.1:${new URL(rs.origin).port}, not only /mcp`,
    ]);
  });

  it('a data: URL for the resource metadata is refused', async () => {
    const rs = await hostile();
    const doc = encodeURIComponent(JSON.stringify({ resource: 'x', authorization_servers: [] }));
    const auth = new OAuthClient({ store: memoryTokenStore(), authorize: noSignIn().authorize });
    await expect(
      auth.handleChallenge(
        new URL(`${rs.origin}/mcp`),
        401,
        `Bearer resource_metadata="data:application/json,${doc}"`,
      ),
    ).rejects.toThrow(/the protected resource metadata URL is a data: URL: refused/);
    expect(rs.requests).toEqual([]);
  });
});
