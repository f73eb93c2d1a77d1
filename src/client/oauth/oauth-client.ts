// The MCP OAuth 2.1 client (basic/authorization/ in 2026-07-28), on oauth4webapi: discovery from the 401's
// `resource_metadata` (or the well-known fallbacks), authorization server metadata (RFC 8414 / OIDC, issuer
// checked), pre-registered clients, client ID metadata documents or dynamic registration, PKCE (S256), the resource
// indicator, scope selection and step-up, refresh, and the `iss` check of RFC 9207.
import * as oauth from 'oauth4webapi';
import { CLIENT_DEFAULTS } from '../driver.js';
import { ProtocolViolation, TransportFailure } from '../errors.js';
import { type BearerChallenge, parseBearerChallenge } from './challenge.js';
import { memoryTokenStore, type StoredClient, type StoredTokens, type TokenStore } from './token-store.js';

export class OAuthError extends TransportFailure {
  readonly code = 'ERR_OAUTH';
}

export interface OAuthClientOptions {
  /**
   * Take the person to the authorization URL (open a browser, print it) and resolve with the URL the authorization
   * server redirected back to (`redirectUri` with `code` and `state`).
   */
  authorize?: (authorizationUrl: URL, redirectUri: string) => Promise<URL>;
  /**
   * Where the authorization server sends the person back. Default `http://127.0.0.1/callback`. A function is asked
   * when the URI is first needed (a loopback listener on a free port).
   */
  redirectUri?: string | (() => Promise<string>);
  /** A pre-registered client. Without one: a client ID metadata document (`clientMetadataUrl`), else registration. */
  clientId?: string;
  clientSecret?: string;
  /** The URL of this client's metadata document, used as its client_id where the server supports it. */
  clientMetadataUrl?: string;
  clientName?: string;
  /** Scopes to ask for instead of the ones the server names. */
  scope?: string;
  /** `client_credentials` for a client acting on its own behalf (no person, no browser). */
  grant?: 'authorization_code' | 'client_credentials';
  store?: TokenStore;
  /**
   * Allow plain-http authorization servers. Default: only on loopback hosts (127.0.0.1, localhost, ::1), where tests
   * and local demos run.
   */
  allowInsecure?: boolean;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

interface Session {
  as: oauth.AuthorizationServer;
  client: oauth.Client;
  auth: oauth.ClientAuth;
  resource: string;
  /** The protected resource's scopes_supported. */
  supportedScopes?: string[];
}

/** The canonical URI of an MCP server (RFC 8707 resource): no fragment, lower-case scheme and host. */
export function canonicalResource(url: URL): string {
  const u = new URL(url.href);
  u.hash = '';
  return u.href;
}

export class OAuthClient {
  private readonly options: OAuthClientOptions;
  private readonly store: TokenStore;
  private session: Session | undefined;
  /** Scopes asked for so far: step-up asks for their union with the challenge's. */
  private scopes = new Set<string>();

  constructor(options: OAuthClientOptions = {}) {
    this.options = options;
    this.store = options.store ?? memoryTokenStore();
  }

  private redirect(): Promise<string> {
    const r = this.options.redirectUri;
    return typeof r === 'function' ? r() : Promise.resolve(r ?? 'http://127.0.0.1/callback');
  }

  private insecure(url: URL): boolean {
    return this.options.allowInsecure ?? LOOPBACK.has(url.hostname);
  }

  private request(url: URL): { [oauth.allowInsecureRequests]?: boolean; signal: AbortSignal } {
    return {
      ...(this.insecure(url) ? { [oauth.allowInsecureRequests]: true } : {}),
      signal: AbortSignal.timeout(CLIENT_DEFAULTS.oauthRequestTimeoutMs),
    };
  }

  /** The access token to send to `server`, refreshed first when it is about to expire. */
  async accessToken(server: URL): Promise<string | undefined> {
    const stored = this.store.get(server.href)?.tokens;
    if (!stored) return undefined;
    if (stored.expiresAt !== undefined && stored.expiresAt - Date.now() < CLIENT_DEFAULTS.refreshSkewMs) {
      if (stored.refreshToken && (await this.refresh(server, stored.refreshToken)))
        return this.accessToken(server);
      return undefined;
    }
    return stored.accessToken;
  }

  private async refresh(server: URL, refreshToken: string): Promise<boolean> {
    const s = this.session;
    if (!s) return false;
    try {
      const response = await oauth.refreshTokenGrantRequest(s.as, s.client, s.auth, refreshToken, {
        ...this.request(new URL(s.as.issuer)),
        additionalParameters: { resource: s.resource },
      });
      this.keep(server, await oauth.processRefreshTokenResponse(s.as, s.client, response), refreshToken);
      return true;
    } catch {
      return false;
    }
  }

  private keep(server: URL, t: oauth.TokenEndpointResponse, previousRefresh?: string): void {
    const tokens: StoredTokens = { accessToken: t.access_token };
    const refresh = t.refresh_token ?? previousRefresh;
    if (refresh) tokens.refreshToken = refresh;
    if (typeof t.expires_in === 'number') tokens.expiresAt = Date.now() + t.expires_in * 1000;
    if (typeof t.scope === 'string') tokens.scope = t.scope;
    const prev = this.store.get(server.href) ?? {};
    this.store.set(server.href, { ...prev, tokens });
  }

  /**
   * Answer a 401 or a 403 `insufficient_scope` from `server`: discover, register, authorize, get a token. `stepUps`
   * counts the step-ups already made for the request; past the limit, the challenge is a permanent failure.
   */
  async handleChallenge(
    server: URL,
    status: number,
    wwwAuthenticate: string | undefined,
    stepUps = 0,
  ): Promise<void> {
    const challenge = parseBearerChallenge(wwwAuthenticate);
    if (status === 403 && challenge.error !== 'insufficient_scope')
      throw new OAuthError(
        `${server.host} refused the request (HTTP 403${challenge.error ? `: ${challenge.error}` : ''})`,
        403,
      );
    if (status === 403 && stepUps >= CLIENT_DEFAULTS.maxStepUps)
      throw new OAuthError(
        `${server.host} still asks for more scope after ${stepUps} step-ups (${challenge.scope ?? 'no scope named'}): giving up`,
        403,
      );
    // A 401 means starting over: the resource may have moved to another authorization server (SEP-2352), where
    // this client must register anew. A step-up stays with the server that just granted the token.
    const session = status === 403 && this.session ? this.session : await this.discover(server, challenge);
    this.session = session;
    // A 401 with a refresh token in hand (from this run or the store): a new access token first, a new sign-in
    // only if that fails.
    const stored = this.store.get(server.href)?.tokens;
    if (status === 401 && stored?.refreshToken && (await this.refresh(server, stored.refreshToken))) return;
    const scope = this.chooseScope(session, challenge, status === 403);
    if ((this.options.grant ?? 'authorization_code') === 'client_credentials') {
      const response = await oauth.clientCredentialsGrantRequest(
        session.as,
        session.client,
        session.auth,
        { resource: session.resource, ...(scope ? { scope } : {}) },
        this.request(new URL(session.as.issuer)),
      );
      this.keep(server, await oauth.processClientCredentialsResponse(session.as, session.client, response));
      return;
    }
    await this.authorizationCode(server, session, scope);
  }

  private chooseScope(session: Session, challenge: BearerChallenge, stepUp: boolean): string | undefined {
    if (this.options.scope) return this.options.scope;
    const asked = challenge.scope?.split(' ').filter(Boolean) ?? [];
    // The challenge is authoritative; without one, all of scopes_supported; without that, no scope at all.
    const base = asked.length > 0 ? asked : (session.supportedScopes ?? []);
    const scopes = new Set<string>(stepUp ? [...this.scopes, ...base] : base);
    // offline_access only where the authorization server offers it (a refresh token is its to give).
    const asScopes: unknown[] = Array.isArray(session.as.scopes_supported) ? session.as.scopes_supported : [];
    if (scopes.size > 0 && asScopes.includes('offline_access')) scopes.add('offline_access');
    this.scopes = scopes;
    return scopes.size > 0 ? [...scopes].join(' ') : undefined;
  }

  private async authorizationCode(server: URL, session: Session, scope: string | undefined): Promise<void> {
    const authorize = this.options.authorize;
    if (!authorize)
      throw new OAuthError(
        `${server.host} needs you to sign in, and this client has no way to open the sign-in page`,
        401,
      );
    const redirectUri = await this.redirect();
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const endpoint = session.as.authorization_endpoint;
    if (!endpoint) throw new OAuthError(`${session.as.issuer} has no authorization_endpoint`, 401);
    const url = new URL(endpoint);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', session.client.client_id);
    url.searchParams.set('redirect_uri', redirectUri);
    url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
    url.searchParams.set('code_challenge_method', 'S256');
    url.searchParams.set('state', state);
    url.searchParams.set('resource', session.resource);
    if (scope) url.searchParams.set('scope', scope);
    const back = await authorize(url, redirectUri);
    let params: URLSearchParams;
    try {
      // Checks state, and `iss` against the issuer recorded from validated metadata (RFC 9207, no normalisation).
      params = oauth.validateAuthResponse(session.as, session.client, back, state);
    } catch (error) {
      throw new OAuthError(`the sign-in answer was refused: ${(error as Error).message}`, 401);
    }
    const response = await oauth.authorizationCodeGrantRequest(
      session.as,
      session.client,
      session.auth,
      params,
      redirectUri,
      verifier,
      { ...this.request(new URL(session.as.issuer)), additionalParameters: { resource: session.resource } },
    );
    this.keep(server, await oauth.processAuthorizationCodeResponse(session.as, session.client, response));
  }

  /** Protected resource metadata, then the authorization server's metadata, then a client. */
  private async discover(server: URL, challenge: BearerChallenge): Promise<Session> {
    const prm = await this.resourceMetadata(server, challenge);
    const resource = canonicalResource(server);
    if (typeof prm.resource === 'string' && prm.resource !== resource && prm.resource !== server.origin)
      throw new OAuthError(
        `the protected resource metadata is for ${prm.resource}, not ${resource}: refusing to send a token there`,
        401,
      );
    const issuers = Array.isArray(prm.authorization_servers) ? prm.authorization_servers : [];
    const issuer = issuers.find((i): i is string => typeof i === 'string');
    if (!issuer)
      throw new OAuthError(
        `${server.host} needs a bearer token (HTTP 401) but names no authorization server to get one from: pass a token its operator gave you`,
        401,
      );
    const as = await this.authorizationServer(new URL(issuer));
    const { client, auth } = await this.clientFor(server, as);
    const supportedScopes = Array.isArray(prm.scopes_supported)
      ? prm.scopes_supported.filter((s): s is string => typeof s === 'string')
      : undefined;
    return {
      as,
      client,
      auth,
      resource: typeof prm.resource === 'string' ? prm.resource : resource,
      supportedScopes,
    };
  }

  private async fetchJson(url: URL): Promise<Record<string, unknown> | undefined> {
    const response = await fetch(url, {
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(CLIENT_DEFAULTS.oauthRequestTimeoutMs),
      redirect: 'error',
    }).catch(() => undefined);
    if (!response?.ok) return undefined;
    const body = (await response.json().catch(() => undefined)) as unknown;
    return body && typeof body === 'object' && !Array.isArray(body)
      ? (body as Record<string, unknown>)
      : undefined;
  }

  /** RFC 9728: the URL the challenge names, else the well-known URI at the endpoint's path, else at the root. */
  private async resourceMetadata(server: URL, challenge: BearerChallenge): Promise<Record<string, unknown>> {
    const candidates: URL[] = [];
    if (challenge.resourceMetadata && URL.canParse(challenge.resourceMetadata))
      candidates.push(new URL(challenge.resourceMetadata));
    const path = server.pathname === '/' ? '' : server.pathname.replace(/\/$/, '');
    if (path) candidates.push(new URL(`/.well-known/oauth-protected-resource${path}`, server.origin));
    candidates.push(new URL('/.well-known/oauth-protected-resource', server.origin));
    for (const url of candidates) {
      const doc = await this.fetchJson(url);
      if (doc) return doc;
    }
    throw new OAuthError(
      `${server.host} asks for authorization but publishes no protected resource metadata`,
      401,
    );
  }

  /** RFC 8414 and OIDC discovery in the order the spec gives, the issuer in the document checked exactly. */
  private async authorizationServer(issuer: URL): Promise<oauth.AuthorizationServer> {
    const path = issuer.pathname === '/' ? '' : issuer.pathname.replace(/\/$/, '');
    const urls = path
      ? [
          `/.well-known/oauth-authorization-server${path}`,
          `/.well-known/openid-configuration${path}`,
          `${path}/.well-known/openid-configuration`,
        ]
      : ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration'];
    for (const u of urls) {
      const url = new URL(u, issuer.origin);
      const response = await fetch(url, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(CLIENT_DEFAULTS.oauthRequestTimeoutMs),
        redirect: 'error',
      }).catch(() => undefined);
      if (!response?.ok) continue;
      try {
        return await oauth.processDiscoveryResponse(issuer, response);
      } catch (error) {
        // The document says it is someone else's: never used (authorization-server-discovery.mdx).
        throw new OAuthError(`the metadata at ${url.href} was refused: ${(error as Error).message}`, 401);
      }
    }
    throw new OAuthError(`no authorization server metadata found for ${issuer.href}`, 401);
  }

  /** A pre-registered client, one registered earlier, a client ID metadata document, or dynamic registration. */
  private async clientFor(
    server: URL,
    as: oauth.AuthorizationServer,
  ): Promise<{ client: oauth.Client; auth: oauth.ClientAuth }> {
    const methods = Array.isArray(as.token_endpoint_auth_methods_supported)
      ? as.token_endpoint_auth_methods_supported
      : ['client_secret_basic'];
    const authFor = (c: StoredClient) => {
      const method =
        c.tokenEndpointAuthMethod ??
        (c.clientSecret
          ? methods.includes('client_secret_basic')
            ? 'client_secret_basic'
            : 'client_secret_post'
          : 'none');
      if (method === 'client_secret_post' && c.clientSecret) return oauth.ClientSecretPost(c.clientSecret);
      if (method === 'client_secret_basic' && c.clientSecret)
        return clientSecretBasic(c.clientId, c.clientSecret);
      return oauth.None();
    };
    const remember = (c: StoredClient) => {
      const prev = this.store.get(server.href) ?? {};
      this.store.set(server.href, { ...prev, client: c });
      return {
        client: { client_id: c.clientId, token_endpoint_auth_method: authMethodName(c, methods) },
        auth: authFor(c),
      };
    };
    if (this.options.clientId)
      return remember({
        clientId: this.options.clientId,
        clientSecret: this.options.clientSecret,
        issuer: as.issuer,
      });
    const known = this.store.get(server.href)?.client;
    if (known && known.issuer === as.issuer) return remember(known);
    if (this.options.clientMetadataUrl && as.client_id_metadata_document_supported === true)
      return remember({
        clientId: this.options.clientMetadataUrl,
        tokenEndpointAuthMethod: 'none',
        issuer: as.issuer,
      });
    if (!as.registration_endpoint)
      throw new OAuthError(
        `${as.issuer} offers no dynamic registration: pass a pre-registered client id (and secret)`,
        401,
      );
    const redirectUri = await this.redirect();
    const grant = this.options.grant ?? 'authorization_code';
    const response = await oauth.dynamicClientRegistrationRequest(
      as,
      {
        client_name: this.options.clientName ?? 'mrtr',
        // SEP-837: a command-line client on the person's machine is a native application (loopback redirects).
        application_type: 'native',
        redirect_uris: grant === 'authorization_code' ? [redirectUri] : [],
        grant_types:
          grant === 'authorization_code' ? ['authorization_code', 'refresh_token'] : ['client_credentials'],
        response_types: grant === 'authorization_code' ? ['code'] : [],
        token_endpoint_auth_method: grant === 'authorization_code' ? 'none' : 'client_secret_basic',
      },
      this.request(new URL(as.issuer)),
    );
    // Read leniently (RFC 7591 §3.2.1 needs only client_id): servers differ on the optional fields' types.
    const registered = (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined;
    if (!response.ok || !registered || typeof registered.client_id !== 'string')
      throw new ProtocolViolation(
        `client registration at ${as.issuer} failed (HTTP ${response.status}${registered && typeof registered.error === 'string' ? `: ${registered.error}` : ''})`,
      );
    return remember({
      clientId: registered.client_id,
      clientSecret: typeof registered.client_secret === 'string' ? registered.client_secret : undefined,
      tokenEndpointAuthMethod:
        typeof registered.token_endpoint_auth_method === 'string'
          ? registered.token_endpoint_auth_method
          : undefined,
      issuer: as.issuer,
    });
  }
}

function authMethodName(c: StoredClient, methods: readonly string[]): string {
  if (c.tokenEndpointAuthMethod) return c.tokenEndpointAuthMethod;
  if (!c.clientSecret) return 'none';
  return methods.includes('client_secret_basic') ? 'client_secret_basic' : 'client_secret_post';
}

/** `application/x-www-form-urlencoded` as WHATWG defines it (what RFC 6749 §2.3.1 asks before Base64). */
const formEncode = (s: string) => new URLSearchParams({ s }).toString().slice(2);

/**
 * client_secret_basic with the WHATWG form encoding: oauth4webapi also escapes unreserved characters such as `-`,
 * which some authorization servers do not decode, so a client id like `my-client` would not be recognised.
 */
function clientSecretBasic(clientId: string, clientSecret: string): oauth.ClientAuth {
  return (_as, _client, _body, headers) => {
    headers.set(
      'authorization',
      `Basic ${Buffer.from(`${formEncode(clientId)}:${formEncode(clientSecret)}`).toString('base64')}`,
    );
  };
}
