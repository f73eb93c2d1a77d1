// A real OpenID provider (oidc-provider) on 127.0.0.1 for the auth tests: a confidential test client, test users,
// JWT access tokens for one resource (RFC 8707), and a count of how often its JWKS was fetched. On request, an RFC 8693
// token exchange grant (oidc-provider has none built in) that trades one of its own access tokens for one meant for
// another audience, same subject: what a gateway presents to the servers behind it.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLocalJWKSet, jwtVerify } from 'jose';
import Provider, { errors, type KoaContextWithOIDC } from 'oidc-provider';

export const TEST_CLIENT = { id: 'mrtr-test', secret: 'mrtr-test-secret-that-is-long-enough' };
export const SCOPES = 'openid profile bugs:read bugs:write';
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

export interface TestUser {
  name: string;
  roles: string[];
}
export const USERS: Readonly<Record<string, TestUser>> = {
  alice: { name: 'Alice Example', roles: ['requester'] },
  bob: { name: 'Bob Example', roles: ['approver'] },
};

export interface RunningProvider {
  issuer: string;
  provider: Provider;
  /** How many times the JWKS endpoint has been asked. */
  jwksFetches(): number;
  /** How many token exchange requests reached the grant (granted or refused). */
  exchanges(): number;
  /** Mint a JWT access token for `user` (or for the client itself) through the provider's own token model. */
  accessToken(options: {
    user?: string;
    scope?: string;
    audience?: string;
    ttlSec?: number;
  }): Promise<string>;
  /** The provider's signing keys as private JWKs (to forge or revoke in tests). */
  readonly keys: { private: JsonWebKey[] };
  close(): Promise<void>;
}

function signingKey(kid: string): JsonWebKey {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid, use: 'sig', alg: 'RS256' } as JsonWebKey;
}

/**
 * Start a provider. `resource` is the MCP server's URL tokens are issued for; `redirectUris` the sign-in callbacks
 * the test client may use; `keys` replaces the signing keys (to test rotation and revocation).
 */
export async function startOidcProvider(options: {
  resource: string;
  redirectUris?: string[];
  keys?: JsonWebKey[];
  port?: number;
  /**
   * Let the test client exchange tokens (RFC 8693): a subject token must be this provider's JWT access token for
   * `resource`; the new token is for one of `audiences` (asked as `audience` or `resource`). The issuer's own
   * policy may refuse some people: a subject token of one of `refuseSubjects` is answered access_denied.
   */
  tokenExchange?: { audiences: string[]; refuseSubjects?: string[] };
}): Promise<RunningProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const issuer = `http://127.0.0.1:${port}`;
  const keys = options.keys ?? [signingKey(`k-${randomUUID().slice(0, 8)}`)];
  const resourceServer = (audience: string) => ({
    scope: 'bugs:read bugs:write',
    audience,
    accessTokenTTL: 300,
    accessTokenFormat: 'jwt' as const,
    jwt: { sign: { alg: 'RS256' as const } },
  });
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: TEST_CLIENT.id,
        client_secret: TEST_CLIENT.secret,
        grant_types: [
          'authorization_code',
          'client_credentials',
          ...(options.tokenExchange ? [TOKEN_EXCHANGE_GRANT] : []),
        ],
        response_types: ['code'],
        redirect_uris: options.redirectUris ?? ['http://127.0.0.1/callback'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: keys as never },
    scopes: SCOPES.split(' '),
    claims: { openid: ['sub'], profile: ['name', 'roles'] },
    // The ID token carries the profile claims (as Keycloak and Entra do), so the sign-in needs no userinfo call.
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => options.resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, indicator: string) => {
          if (indicator !== options.resource) throw new Error(`unknown resource ${indicator}`);
          return resourceServer(indicator);
        },
      },
    },
    findAccount: (_ctx: unknown, id: string) =>
      USERS[id]
        ? { accountId: id, claims: () => ({ sub: id, name: USERS[id]!.name, roles: USERS[id]!.roles }) }
        : { accountId: id, claims: () => ({ sub: id }) },
    extraTokenClaims: (_ctx: unknown, token: { accountId?: string }) =>
      token.accountId && USERS[token.accountId] ? { roles: USERS[token.accountId]!.roles } : undefined,
    ttl: {
      AccessToken: 300,
      ClientCredentials: 300,
      AuthorizationCode: 60,
      Grant: 600,
      Interaction: 600,
      Session: 600,
      IdToken: 300,
    },
    // Quiet: no cookie-key warnings in test output.
    cookies: { keys: ['test-cookie-key-0123456789abcdef'] },
  } as never);
  provider.proxy = false;
  let exchanges = 0;
  const exchange = options.tokenExchange;
  if (exchange) {
    // The public halves of the signing keys: a subject token is checked as any resource server of ours would.
    const jwks = createLocalJWKSet({
      keys: (keys as Array<JsonWebKey & { kid?: string }>).map(({ kty, n, e, kid, alg, use }) => ({
        kty,
        n,
        e,
        kid,
        alg,
        use,
      })) as never,
    });
    provider.registerGrantType(
      TOKEN_EXCHANGE_GRANT,
      async (ctx: KoaContextWithOIDC) => {
        exchanges++;
        const params = ctx.oidc.params as Record<string, string | undefined>;
        if (params.subject_token_type !== ACCESS_TOKEN_TYPE)
          throw new errors.InvalidRequest('subject_token_type must be an access token');
        if (params.requested_token_type !== undefined && params.requested_token_type !== ACCESS_TOKEN_TYPE)
          throw new errors.InvalidRequest('only access tokens are issued');
        let sub: string | undefined;
        try {
          ({
            payload: { sub },
          } = await jwtVerify(params.subject_token ?? '', jwks, { issuer, audience: options.resource }));
        } catch {
          throw new errors.InvalidGrant('subject_token is not a valid access token');
        }
        if (!sub) throw new errors.InvalidGrant('subject_token names no subject');
        if (exchange.refuseSubjects?.includes(sub))
          throw new errors.AccessDenied('this subject may not act at other audiences');
        const target = params.audience ?? params.resource;
        if (target === undefined || !exchange.audiences.includes(target))
          throw new errors.InvalidTarget('unknown audience');
        const rs = new provider.ResourceServer(target, resourceServer(target));
        const granted = (params.scope ?? 'bugs:read')
          .split(' ')
          .filter((s) => rs.scope.split(' ').includes(s));
        const token = new provider.AccessToken({
          accountId: sub,
          grantId: randomUUID(),
          client: ctx.oidc.client,
          scope: granted.join(' '),
          resourceServer: rs,
          ...(USERS[sub] ? { extra: { roles: USERS[sub]!.roles } } : {}),
        } as never);
        const value = await token.save();
        ctx.body = {
          access_token: value,
          issued_token_type: ACCESS_TOKEN_TYPE,
          token_type: 'Bearer',
          expires_in: token.expiration,
          scope: token.scope,
        };
      },
      ['subject_token', 'subject_token_type', 'requested_token_type', 'audience', 'resource', 'scope'],
    );
  }
  let fetches = 0;
  const callback = provider.callback();
  server.on('request', (req, res) => {
    if (req.url?.startsWith('/jwks')) fetches++;
    callback(req, res);
  });
  return {
    issuer,
    provider,
    keys: { private: keys },
    jwksFetches: () => fetches,
    exchanges: () => exchanges,
    async accessToken({ user, scope = 'bugs:read', audience = options.resource, ttlSec }) {
      const client = await provider.Client.find(TEST_CLIENT.id);
      const rs = new provider.ResourceServer(audience, {
        ...resourceServer(audience),
        ...(ttlSec === undefined ? {} : { accessTokenTTL: ttlSec }),
      });
      const Model = user ? provider.AccessToken : provider.ClientCredentials;
      const token = new (Model as never as new (p: object) => { save(): Promise<string> })({
        ...(user ? { accountId: user, grantId: randomUUID() } : {}),
        client,
        scope,
        resourceServer: rs,
        ...(user && USERS[user] ? { extra: { roles: USERS[user]!.roles } } : {}),
      });
      return token.save();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
