// The MCP OAuth 2.1 client (basic/authorization/ in 2026-07-28), on oauth4webapi: discovery from the 401's
// `resource_metadata` (or the well-known fallbacks), authorization server metadata (RFC 8414 / OIDC, issuer
// checked), pre-registered clients, client ID metadata documents or dynamic registration, PKCE (S256), the resource
// indicator, scope selection and step-up, refresh, and the `iss` check of RFC 9207.
import * as oauth from 'oauth4webapi';
import { untilAborted } from '../../protocol/internal.js';
import { CLIENT_DEFAULTS } from '../driver.js';
import { ProtocolViolation } from '../errors.js';
import { type BearerChallenge, parseBearerChallenge } from './challenge.js';
import { clientSecretBasic } from './client-secret-basic.js';
import { capBody, checkOAuthUrl, deadline, documentFetch, isLoopback } from './fetch-document.js';
import { OAuthError } from './oauth-error.js';
import {
  memoryTokenStore,
  type ServerCredentials,
  type StoredClient,
  type StoredTokens,
  type TokenStore,
} from './token-store.js';

export { OAuthError };

export interface OAuthClientOptions {
  /**
   * Take the person to the authorization URL (show it, open it on their say-so) and resolve with the URL the
   * authorization server redirected back to (`redirectUri` with `code` and `state`). The URL is always https (or
   * http on this machine). `signal` aborts at the request's deadline or on Ctrl-C: stop waiting then.
   */
  authorize?: (authorizationUrl: URL, redirectUri: string, signal: AbortSignal) => Promise<URL>;
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
  /**
   * Things the person should know that are not errors: the authorization server changed (a new sign-in), a
   * resource whose tokens cover its whole origin. The CLI prints them on stderr.
   */
  onNotice?: (message: string) => void;
  /** The largest OAuth document read (metadata, registration, token response). Default: the MCP response cap. */
  maxDocumentBytes?: number;
}

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
    return this.options.allowInsecure ?? isLoopback(url);
  }

  private get maxBytes(): number {
    return this.options.maxDocumentBytes ?? CLIENT_DEFAULTS.maxResponseBytes;
  }

  /** oauth4webapi's options for one request: plain http where allowed, the body capped, the deadline obeyed. */
  private request(
    url: URL,
    what: string,
    signal: AbortSignal | undefined,
  ): { [oauth.allowInsecureRequests]?: boolean; [oauth.customFetch]: typeof fetch; signal: AbortSignal } {
    return {
      ...(this.insecure(url) ? { [oauth.allowInsecureRequests]: true } : {}),
      [oauth.customFetch]: documentFetch(what, this.maxBytes) as typeof fetch,
      signal: deadline(signal, CLIENT_DEFAULTS.oauthRequestTimeoutMs),
    };
  }

  /** The access token to send to `server`, refreshed first when it is about to expire. */
  async accessToken(server: URL, signal?: AbortSignal): Promise<string | undefined> {
    const stored = this.store.get(server.href)?.tokens;
    if (!stored || !coversServer(stored, server)) return undefined;
    if (stored.expiresAt !== undefined && stored.expiresAt - Date.now() < CLIENT_DEFAULTS.refreshSkewMs) {
      if (await this.refresh(server, signal)) return this.accessToken(server, signal);
      return undefined;
    }
    return stored.accessToken;
  }

  /**
   * Trade the stored refresh token for new tokens — only at the authorization server that issued it, for the
   * resource it was issued for (RFC 9700 §2.2.2 and §4.14: a refresh token is bound to its client and issuer).
   */
  private async refresh(server: URL, signal: AbortSignal | undefined): Promise<boolean> {
    const s = this.session;
    const held = this.store.get(server.href);
    const refreshToken = held?.tokens?.refreshToken;
    if (!s || !held?.tokens || !refreshToken) return false;
    if (issuerOf(held) !== s.as.issuer || (held.tokens.resource ?? s.resource) !== s.resource) return false;
    try {
      const response = await oauth.refreshTokenGrantRequest(s.as, s.client, s.auth, refreshToken, {
        ...this.request(new URL(s.as.issuer), 'token response', signal),
        additionalParameters: { resource: s.resource },
      });
      this.keep(server, s, await oauth.processRefreshTokenResponse(s.as, s.client, response), refreshToken);
      return true;
    } catch {
      return false;
    }
  }

  /** Write the store; a store that cannot be written (no directory for it) ends the sign-in with its reason. */
  private save(server: URL, credentials: ServerCredentials): void {
    try {
      this.store.set(server.href, credentials);
    } catch (error) {
      throw new OAuthError(`could not keep the sign-in for ${server.host}: ${(error as Error).message}`, 401);
    }
  }

  /** Keep new tokens with the record of who issued them and for which resource. */
  private keep(server: URL, s: Session, t: oauth.TokenEndpointResponse, previousRefresh?: string): void {
    const tokens: StoredTokens = { accessToken: t.access_token, issuer: s.as.issuer, resource: s.resource };
    const refresh = t.refresh_token ?? previousRefresh;
    if (refresh) tokens.refreshToken = refresh;
    if (typeof t.expires_in === 'number') tokens.expiresAt = Date.now() + t.expires_in * 1000;
    if (typeof t.scope === 'string') tokens.scope = t.scope;
    const prev = this.store.get(server.href) ?? {};
    this.save(server, { ...prev, tokens });
  }

  /**
   * Tokens from another authorization server than the one the resource names now are dropped before anything
   * else happens: they are never sent to the new one, and the person signs in again. Tokens kept before issuers
   * were recorded count as the issuer's their client was registered with, and as nobody's without a client record.
   */
  private forgetTokensOfAnotherIssuer(server: URL, issuer: string, resource: string): void {
    const held = this.store.get(server.href);
    if (!held?.tokens) return;
    const from = issuerOf(held);
    if (from === issuer && (held.tokens.resource ?? resource) === resource) return;
    const { tokens: _dropped, ...rest } = held;
    this.save(server, rest);
    this.options.onNotice?.(
      from === undefined
        ? `the tokens kept for ${server.host} do not say which authorization server issued them: they are not sent to ${issuer}; sign in again`
        : from !== issuer
          ? `${server.host} now names the authorization server ${issuer} instead of ${from}: the tokens from ${from} are not sent there; sign in again`
          : `${server.host} now calls itself ${resource} instead of ${held.tokens.resource}: its old tokens are not used; sign in again`,
    );
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
    signal?: AbortSignal,
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
    const session =
      status === 403 && this.session ? this.session : await this.discover(server, challenge, signal);
    this.session = session;
    // A 401 with a refresh token in hand (from this run or the store, and from this issuer): a new access token
    // first, a new sign-in only if that fails.
    if (status === 401 && (await this.refresh(server, signal))) return;
    const scope = this.chooseScope(session, challenge, status === 403);
    if ((this.options.grant ?? 'authorization_code') === 'client_credentials') {
      const response = await oauth.clientCredentialsGrantRequest(
        session.as,
        session.client,
        session.auth,
        { resource: session.resource, ...(scope ? { scope } : {}) },
        this.request(new URL(session.as.issuer), 'token response', signal),
      );
      this.keep(
        server,
        session,
        await oauth.processClientCredentialsResponse(session.as, session.client, response),
      );
      return;
    }
    await this.authorizationCode(server, session, scope, signal);
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

  private async authorizationCode(
    server: URL,
    session: Session,
    scope: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const authorize = this.options.authorize;
    if (!authorize)
      throw new OAuthError(
        `${server.host} needs you to sign in, and this client has no way to open the sign-in page`,
        401,
      );
    const methods = session.as.code_challenge_methods_supported;
    // authorization/index.mdx: PKCE is required, and a server that does not advertise S256 must be refused.
    if (!Array.isArray(methods) || !methods.includes('S256'))
      throw new OAuthError(
        `${session.as.issuer} does not advertise PKCE with S256 (code_challenge_methods_supported): refusing to sign in there`,
        401,
      );
    const endpoint = session.as.authorization_endpoint;
    if (!endpoint) throw new OAuthError(`${session.as.issuer} has no authorization_endpoint`, 401);
    // The person is sent there: a link of any other kind (javascript:, file:, an app's scheme) is never offered.
    const url = checkOAuthUrl(endpoint, 'authorization endpoint', (u) => this.insecure(u));
    const redirectUri = await this.redirect();
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', session.client.client_id);
    url.searchParams.set('redirect_uri', redirectUri);
    url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
    url.searchParams.set('code_challenge_method', 'S256');
    url.searchParams.set('state', state);
    url.searchParams.set('resource', session.resource);
    if (scope) url.searchParams.set('scope', scope);
    // The person's time counts against the caller's deadline; an `authorize` that ignores the signal still stops.
    const waiting = signal ?? new AbortController().signal;
    const back = await untilAborted(authorize(url, redirectUri, waiting), waiting);
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
      {
        ...this.request(new URL(session.as.issuer), 'token response', signal),
        additionalParameters: { resource: session.resource },
      },
    );
    this.keep(
      server,
      session,
      await oauth.processAuthorizationCodeResponse(session.as, session.client, response),
    );
  }

  /** Protected resource metadata, then the authorization server's metadata, then a client. */
  private async discover(
    server: URL,
    challenge: BearerChallenge,
    signal: AbortSignal | undefined,
  ): Promise<Session> {
    const prm = await this.resourceMetadata(server, challenge, signal);
    const resource = this.resourceOf(server, prm.resource);
    const issuers = Array.isArray(prm.authorization_servers) ? prm.authorization_servers : [];
    const issuer = issuers.find((i): i is string => typeof i === 'string');
    if (!issuer)
      throw new OAuthError(
        `${server.host} needs a bearer token (HTTP 401) but names no authorization server to get one from: pass a token its operator gave you`,
        401,
      );
    const as = await this.authorizationServer(
      checkOAuthUrl(issuer, 'authorization server', (u) => this.insecure(u)),
      signal,
    );
    // Before a client is chosen or registered, and before any refresh: tokens go back only to their issuer.
    this.forgetTokensOfAnotherIssuer(server, as.issuer, resource);
    const { client, auth } = await this.clientFor(server, as, signal);
    const supportedScopes = Array.isArray(prm.scopes_supported)
      ? prm.scopes_supported.filter((s): s is string => typeof s === 'string')
      : undefined;
    return { as, client, auth, resource, supportedScopes };
  }

  /**
   * The metadata's `resource`, which RFC 9728 §3.3 requires and which must be the server asked about (or its
   * origin): tokens are asked for that resource, so anything else would send them to another audience.
   */
  private resourceOf(server: URL, named: unknown): string {
    const resource = canonicalResource(server);
    if (typeof named !== 'string')
      throw new OAuthError(
        `the protected resource metadata of ${server.host} does not name its resource (RFC 9728 requires "resource"): refusing to sign in for it`,
        401,
      );
    if (named !== resource && named !== server.origin)
      throw new OAuthError(
        `the protected resource metadata is for ${named}, not ${resource}: refusing to send a token there`,
        401,
      );
    if (named === server.origin && resource.replace(/\/$/, '') !== server.origin)
      this.options.onNotice?.(
        `${server.host} names its whole origin ${named} as the resource: a token it gets is good for every path on ${server.host}, not only ${server.pathname}`,
      );
    return named;
  }

  /** One metadata document, or undefined when it is not there (any failure but the cap and the deadline). */
  private async fetchJson(
    url: URL,
    what: string,
    signal: AbortSignal | undefined,
  ): Promise<Record<string, unknown> | undefined> {
    const response = await this.fetchDocument(url, what, signal);
    if (!response?.ok) return undefined;
    const body = (await response.json().catch(() => undefined)) as unknown;
    return body && typeof body === 'object' && !Array.isArray(body)
      ? (body as Record<string, unknown>)
      : undefined;
  }

  /** GET a document, capped and within the deadline; undefined when the server cannot be reached. */
  private async fetchDocument(
    url: URL,
    what: string,
    signal: AbortSignal | undefined,
  ): Promise<Response | undefined> {
    const request = deadline(signal, CLIENT_DEFAULTS.oauthRequestTimeoutMs);
    const response = await fetch(url, {
      headers: { accept: 'application/json' },
      signal: request,
      redirect: 'error',
    }).catch((error: unknown) => {
      if (signal?.aborted) throw signal.reason ?? error;
      return undefined;
    });
    return response && capBody(response, what, this.maxBytes);
  }

  /** RFC 9728: the URL the challenge names, else the well-known URI at the endpoint's path, else at the root. */
  private async resourceMetadata(
    server: URL,
    challenge: BearerChallenge,
    signal: AbortSignal | undefined,
  ): Promise<Record<string, unknown>> {
    const candidates: URL[] = [];
    if (challenge.resourceMetadata && URL.canParse(challenge.resourceMetadata))
      candidates.push(
        checkOAuthUrl(challenge.resourceMetadata, 'protected resource metadata URL', (u) => this.insecure(u)),
      );
    const path = server.pathname === '/' ? '' : server.pathname.replace(/\/$/, '');
    if (path) candidates.push(new URL(`/.well-known/oauth-protected-resource${path}`, server.origin));
    candidates.push(new URL('/.well-known/oauth-protected-resource', server.origin));
    for (const url of candidates) {
      const doc = await this.fetchJson(url, 'protected resource metadata', signal);
      if (doc) return doc;
    }
    throw new OAuthError(
      `${server.host} asks for authorization but publishes no protected resource metadata`,
      401,
    );
  }

  /** RFC 8414 and OIDC discovery in the order the spec gives, the issuer in the document checked exactly. */
  private async authorizationServer(
    issuer: URL,
    signal: AbortSignal | undefined,
  ): Promise<oauth.AuthorizationServer> {
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
      const response = await this.fetchDocument(url, 'authorization server metadata', signal);
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
    signal: AbortSignal | undefined,
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
      this.save(server, { ...prev, client: c });
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
      this.request(new URL(as.issuer), 'registration response', signal),
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

/** Who issued the stored tokens: their own record, else (tokens kept before it existed) their client's issuer. */
function issuerOf(held: ServerCredentials): string | undefined {
  return held.tokens?.issuer ?? held.client?.issuer;
}

/** Tokens are sent only to the resource they were issued for (the server itself, or its whole origin). */
function coversServer(tokens: StoredTokens, server: URL): boolean {
  return (
    tokens.resource === undefined ||
    tokens.resource === canonicalResource(server) ||
    tokens.resource === server.origin
  );
}

function authMethodName(c: StoredClient, methods: readonly string[]): string {
  if (c.tokenEndpointAuthMethod) return c.tokenEndpointAuthMethod;
  if (!c.clientSecret) return 'none';
  return methods.includes('client_secret_basic') ? 'client_secret_basic' : 'client_secret_post';
}
