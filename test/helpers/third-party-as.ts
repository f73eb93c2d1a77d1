// A third party's authorization server for "connect your account" tests: a real oidc-provider on 127.0.0.1 that a
// server (or a gateway) is an OAuth client of. Authorization code with PKCE required, rotating refresh tokens,
// revocation (RFC 7009), `iss` in every authorization response (RFC 9207), and JWT access tokens for one resource
// (RFC 8707). Two people, alice and bob, sign in with any password on its development pages.
//
//   const as = await startThirdPartyAs({ resource: 'http://127.0.0.1:4000/mcp', redirectUris: [callback] });
//   const flow = oauthFlow({ name: 'tracker', issuer: as.issuer, resource: as.resource, clientId: as.client.id,
//                            clientSecret: as.client.secret, scopes: [...THIRD_PARTY_SCOPES] });
//   const { url, pending } = await flow.start(callback);
//   const back = await authorizeInBrowser(page, url, 'alice');   // a fresh browser context per person
//   const grant = await flow.finish(back, pending);
//   (await as.verify(grant.accessToken)).subject === 'alice'
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import Provider from 'oidc-provider';
import type { Page } from 'playwright-core';

/** The scopes the resource offers (what a connection asks for). */
export const THIRD_PARTY_SCOPES = ['tickets:read', 'tickets:write'] as const;
/** The people who can sign in (any password). */
export const THIRD_PARTY_USERS = ['alice', 'bob'] as const;

export interface ThirdPartyAs {
  /** The issuer: http://127.0.0.1:<port> (no trailing slash in config; metadata says it without one too). */
  readonly issuer: string;
  /** The resource its access tokens are for (their `aud`). */
  readonly resource: string;
  /** The server's registered confidential client (client_secret_basic, authorization_code + refresh_token). */
  readonly client: { readonly id: string; readonly secret: string };
  /** Check an access token as the resource would (signature, issuer, audience, expiry): whose, and which scopes. */
  verify(accessToken: string): Promise<{ subject: string; scopes: string[] }>;
  close(): Promise<void>;
}

/** Start the authorization server. `redirectUris` are the server's callbacks it accepts (exactly). */
export async function startThirdPartyAs(options: {
  resource: string;
  redirectUris: string[];
  /** Access token lifetime (default 300 s). */
  accessTokenTtlSec?: number;
}): Promise<ThirdPartyAs> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const key = {
    ...privateKey.export({ format: 'jwk' }),
    kid: `tp-${randomUUID().slice(0, 8)}`,
    use: 'sig',
    alg: 'RS256',
  };
  const client = { id: 'mrtr-connect', secret: `third-party-secret-${randomUUID()}` };
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: client.id,
        client_secret: client.secret,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: options.redirectUris,
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [key] },
    scopes: ['openid', 'offline_access', ...THIRD_PARTY_SCOPES],
    pkce: { required: () => true },
    // A refresh token for every grant of this client (not only `offline_access` ones), a new one at each use.
    issueRefreshToken: (_ctx: unknown, c: { grantTypeAllowed(t: string): boolean }) =>
      c.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: () => true,
    features: {
      devInteractions: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => options.resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, indicator: string) => {
          if (indicator !== options.resource) throw new Error(`unknown resource ${indicator}`);
          return {
            scope: THIRD_PARTY_SCOPES.join(' '),
            audience: options.resource,
            accessTokenTTL: options.accessTokenTtlSec ?? 300,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    findAccount: (_ctx: unknown, id: string) => ({ accountId: id, claims: () => ({ sub: id }) }),
    ttl: { AuthorizationCode: 60, Grant: 3600, Interaction: 600, Session: 600, RefreshToken: 3600 },
    cookies: { keys: ['third-party-cookie-key-0123456789'] },
  } as never);
  provider.proxy = false;
  server.on('request', provider.callback());
  const jwks = createRemoteJWKSet(new URL(`${issuer}/jwks`));
  return {
    issuer,
    resource: options.resource,
    client,
    async verify(accessToken) {
      const { payload } = await jwtVerify(accessToken, jwks, { issuer, audience: options.resource });
      return {
        subject: String(payload.sub),
        scopes: String(payload.scope ?? '')
          .split(' ')
          .filter(Boolean),
      };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Sign `user` in at the authorization server in `page` and answer its consent page (`deny` presses Cancel there), then
 * return the URL the browser was sent back to. Nothing needs to listen at the redirect URI: the request to it is
 * caught in the browser and answered with a blank page. Use a fresh browser context per person (sessions stick).
 */
export async function authorizeInBrowser(
  page: Page,
  authorizationUrl: URL | string,
  user: string,
  options: { deny?: boolean } = {},
): Promise<URL> {
  const url = new URL(authorizationUrl);
  const redirectUri = url.searchParams.get('redirect_uri');
  if (!redirectUri) throw new TypeError('the authorization URL has no redirect_uri');
  const base = redirectUri.split('?')[0]!;
  let sentBack!: (url: URL) => void;
  const callback = new Promise<URL>((resolve) => {
    sentBack = resolve;
  });
  const matches = (u: URL) => u.href.split('?')[0] === base;
  // The provider's pages import a web font: the machine has no network, and waiting for it only slows the test.
  const elsewhere = (u: URL) => !['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname);
  await page.route(elsewhere, (route) => route.abort());
  await page.route(matches, async (route) => {
    sentBack(new URL(route.request().url()));
    await route.fulfill({ status: 200, contentType: 'text/plain', body: 'sent back' });
  });
  try {
    await page.goto(url.href);
    await page.locator('input[name=login]').fill(user);
    await page.locator('input[name=password]').fill('any');
    await page.locator('button[type=submit]').click();
    const consent = page.getByRole('heading', { name: 'Authorize' });
    // No consent page when the person consented before in this context: then the callback comes straight away.
    const next = await Promise.race([
      callback,
      consent.waitFor().then(
        () => 'consent' as const,
        () => 'gone' as const,
      ),
    ]);
    if (next instanceof URL) return next;
    if (options.deny) await page.getByRole('link', { name: '[ Cancel ]' }).click();
    else await page.locator('button[type=submit]').click();
    return await callback;
  } finally {
    await page.unroute(matches);
    await page.unroute(elsewhere);
  }
}
