// The OAuth client side of one connection, on oauth4webapi: authorization code with PKCE (S256) and the resource
// indicator (RFC 8707), the callback checked as a careful client does (state, RFC 9207 `iss`, the exact redirect URI),
// the code traded with the verifier, refresh and revocation (RFC 7009). Every failure is a ConnectionRefused.
import * as oauth from 'oauth4webapi';
import { clientAuth } from '../client/internal.js';
import {
  cleanText,
  type Reach,
  reachableUrl,
  refusal,
  requestOptions,
  unavailable,
  usage,
} from './authorization-reach.js';
import { type DiscoveryStart, discoverAuthorizationServer } from './authorization-server.js';
import { ConnectionRefused } from './errors.js';
import type { AuthorizationFlow, ConnectionConfig, PendingAuthorization, TokenGrant } from './types.js';

export interface OAuthFlowOptions {
  /** Whose fetch reaches the authorization server (default the global one). */
  fetch?: typeof fetch;
  /** Longest one request (metadata, token, revocation) may take (default 10 s). */
  timeoutMs?: number;
  /** The largest document read: metadata or a token response (default 1 MiB). */
  maxDocumentBytes?: number;
  /** Plain http to 127.0.0.1, localhost and ::1 (default true: local tests and demos); https is always required elsewhere. */
  allowHttpLoopback?: boolean;
  /** The clock for `expiresAt` (default Date.now). */
  now?: () => number;
}

export const OAUTH_FLOW_DEFAULTS = Object.freeze({
  timeoutMs: 10_000,
  maxDocumentBytes: 1024 * 1024,
});

/** The authorization flow of `config`; its URLs are checked now, its authorization server found on first use. */
export function oauthFlow(config: ConnectionConfig, options: OAuthFlowOptions = {}): AuthorizationFlow {
  return new OAuthFlow(config, options);
}

class OAuthFlow implements AuthorizationFlow {
  readonly #config: ConnectionConfig;
  readonly #reach: Reach;
  readonly #start: DiscoveryStart;
  readonly #now: () => number;
  readonly #client: oauth.Client;
  #metadata: Promise<oauth.AuthorizationServer> | undefined;

  constructor(config: ConnectionConfig, options: OAuthFlowOptions) {
    this.#config = config;
    this.#reach = {
      fetch: options.fetch ?? ((input, init) => fetch(input, init)),
      timeoutMs: options.timeoutMs ?? OAUTH_FLOW_DEFAULTS.timeoutMs,
      maxDocumentBytes: options.maxDocumentBytes ?? OAUTH_FLOW_DEFAULTS.maxDocumentBytes,
      allowHttpLoopback: options.allowHttpLoopback ?? true,
    };
    this.#now = options.now ?? Date.now;
    const what = `connection ${JSON.stringify(config.name)}`;
    if (typeof config.clientId !== 'string' || config.clientId === '')
      throw usage(`${what}: clientId is required`);
    const check = (raw: string, field: string) =>
      reachableUrl(raw, `${field} of ${what}`, this.#reach, usage);
    const resource = config.resource === undefined ? undefined : check(config.resource, 'resource');
    if (config.issuer !== undefined) this.#start = { issuer: check(config.issuer, 'issuer') };
    else if (resource) this.#start = { resource };
    else throw usage(`${what}: give its issuer, or the resource whose metadata names one`);
    this.#client = { client_id: config.clientId };
  }

  /** The authorization server's metadata, found once per flow; a failure is tried again next time. */
  #as(signal?: AbortSignal): Promise<oauth.AuthorizationServer> {
    this.#metadata ??= discoverAuthorizationServer(this.#start, this.#reach, signal).catch(
      (error: unknown) => {
        this.#metadata = undefined;
        throw error;
      },
    );
    return this.#metadata;
  }

  /** One of the AS's endpoints, if it is one this server may reach. */
  #endpoint(as: oauth.AuthorizationServer, name: 'authorization_endpoint' | 'token_endpoint'): URL {
    return reachableUrl(String(as[name]), `${name} of ${as.issuer}`, this.#reach, unavailable);
  }

  #auth(as: oauth.AuthorizationServer): oauth.ClientAuth {
    return clientAuth(as, this.#config.clientId, this.#config.clientSecret);
  }

  #resource(): Record<string, string> {
    return this.#config.resource === undefined ? {} : { resource: this.#config.resource };
  }

  async start(redirectUri: string, signal?: AbortSignal) {
    reachableUrl(redirectUri, 'redirect URI', this.#reach, usage);
    const as = await this.#as(signal);
    // MCP authorization (security considerations): an AS that does not advertise S256 is not used at all.
    const methods = as.code_challenge_methods_supported;
    if (!Array.isArray(methods) || !methods.includes('S256'))
      throw new ConnectionRefused(
        'unavailable',
        `the authorization server ${as.issuer} does not offer PKCE with S256 (code_challenge_methods_supported): not used`,
      );
    const url = this.#endpoint(as, 'authorization_endpoint');
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', this.#config.clientId);
    url.searchParams.set('redirect_uri', redirectUri);
    url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(codeVerifier));
    url.searchParams.set('code_challenge_method', 'S256');
    url.searchParams.set('state', state);
    if (this.#config.scopes.length > 0) url.searchParams.set('scope', this.#config.scopes.join(' '));
    if (this.#config.resource !== undefined) url.searchParams.set('resource', this.#config.resource);
    return { url, pending: { state, codeVerifier, redirectUri, issuer: as.issuer } };
  }

  async finish(callback: URL, pending: PendingAuthorization, signal?: AbortSignal): Promise<TokenGrant> {
    const as = await this.#as(signal);
    if (pending.issuer !== as.issuer)
      throw mismatch(`the request was sent to ${pending.issuer}, not this connection's ${as.issuer}`);
    if (withoutQuery(callback) !== withoutQuery(new URL(pending.redirectUri)))
      throw mismatch(
        `the callback came to ${withoutQuery(callback)}, not the redirect URI ${pending.redirectUri}`,
      );
    let params: URLSearchParams;
    try {
      // state and iss (RFC 9207: required when the AS says it sends it, equal to the issuer whenever present),
      // both before an error answer is believed.
      params = oauth.validateAuthResponse(as, this.#client, callback, pending.state);
    } catch (error) {
      if (error instanceof oauth.AuthorizationResponseError)
        throw new ConnectionRefused(
          'denied',
          `${as.issuer} refused the authorization: ${cleanText(error.error, [])}${error.error_description ? ` (${cleanText(error.error_description, [])})` : ''}`,
        );
      throw mismatch(`the authorization response was refused: ${cleanText((error as Error).message, [])}`);
    }
    const code = params.get('code') ?? undefined;
    if (!code) throw mismatch('the authorization response carries no code');
    const where = `the token endpoint of ${as.issuer}`;
    const secrets = [code, pending.codeVerifier, this.#config.clientSecret];
    try {
      const response = await oauth.authorizationCodeGrantRequest(
        as,
        this.#client,
        this.#auth(as),
        params,
        pending.redirectUri,
        pending.codeVerifier,
        {
          ...requestOptions(this.#endpoint(as, 'token_endpoint'), 'token response', this.#reach, signal),
          additionalParameters: this.#resource(),
        },
      );
      const answer = await oauth.processAuthorizationCodeResponse(as, this.#client, response);
      return this.#grant(as, answer, undefined, this.#config.scopes);
    } catch (error) {
      // A code that is not good (used already, expired, another verifier's): this callback is not to be trusted.
      throw refusal(error, where, this.#reach, signal, secrets, (e) =>
        e === 'invalid_grant' ? 'mismatch' : 'denied',
      );
    }
  }

  async refresh(grant: TokenGrant, signal?: AbortSignal): Promise<TokenGrant> {
    const as = await this.#as(signal);
    if (!grant.refreshToken)
      throw new ConnectionRefused('invalid_grant', `${as.issuer} gave no refresh token: connect again`);
    // A refresh token goes back only to the server that issued it (RFC 9700 §4.14).
    if (grant.issuer !== as.issuer)
      throw new ConnectionRefused(
        'invalid_grant',
        `the grant is from ${grant.issuer}, not ${as.issuer}: connect again`,
      );
    const secrets = [grant.refreshToken, grant.accessToken, this.#config.clientSecret];
    try {
      const response = await oauth.refreshTokenGrantRequest(
        as,
        this.#client,
        this.#auth(as),
        grant.refreshToken,
        {
          ...requestOptions(this.#endpoint(as, 'token_endpoint'), 'token response', this.#reach, signal),
          additionalParameters: this.#resource(),
        },
      );
      const answer = await oauth.processRefreshTokenResponse(as, this.#client, response);
      return this.#grant(as, answer, grant.refreshToken, grant.scopes);
    } catch (error) {
      throw refusal(error, `the token endpoint of ${as.issuer}`, this.#reach, signal, secrets, (e) =>
        e === 'invalid_grant' ? 'invalid_grant' : 'denied',
      );
    }
  }

  async revoke(grant: TokenGrant, signal?: AbortSignal): Promise<void> {
    const as = await this.#as(signal);
    // Tokens go back only to the server that issued them: an upstream whose metadata now names another server (with
    // our client secret in the header) must not collect them by answering 401.
    if (grant.issuer !== as.issuer || typeof as.revocation_endpoint !== 'string') return;
    const endpoint = reachableUrl(
      as.revocation_endpoint,
      `revocation_endpoint of ${as.issuer}`,
      this.#reach,
      unavailable,
    );
    const secrets = [grant.refreshToken, grant.accessToken, this.#config.clientSecret];
    // The refresh token first: revoking it ends the grant, so no new access token can follow.
    for (const [token, hint] of [
      [grant.refreshToken, 'refresh_token'],
      [grant.accessToken, 'access_token'],
    ] as const) {
      if (!token) continue;
      try {
        const response = await oauth.revocationRequest(as, this.#client, this.#auth(as), token, {
          ...requestOptions(endpoint, 'revocation response', this.#reach, signal),
          additionalParameters: { token_type_hint: hint },
        });
        await oauth.processRevocationResponse(response);
      } catch (error) {
        // RFC 7009 §2.2.1: a kind of token it cannot revoke (a self-contained JWT) ends when it expires.
        if (error instanceof oauth.ResponseBodyError && error.error === 'unsupported_token_type') continue;
        throw refusal(error, `the revocation endpoint of ${as.issuer}`, this.#reach, signal, secrets);
      }
    }
  }

  #grant(
    as: oauth.AuthorizationServer,
    answer: oauth.TokenEndpointResponse,
    previousRefresh: string | undefined,
    askedScopes: readonly string[],
  ): TokenGrant {
    // Sent as `Bearer`: a DPoP or MAC token would not work at the resource.
    if (answer.token_type !== 'bearer')
      throw unavailable(
        `${as.issuer} issued a ${cleanText(answer.token_type, [answer.access_token], 40)} token, not a Bearer token`,
      );
    const refreshToken = answer.refresh_token ?? previousRefresh;
    return {
      accessToken: answer.access_token,
      ...(refreshToken ? { refreshToken } : {}),
      ...(typeof answer.expires_in === 'number' ? { expiresAt: this.#now() + answer.expires_in * 1000 } : {}),
      scopes: typeof answer.scope === 'string' ? answer.scope.split(' ').filter(Boolean) : [...askedScopes],
      issuer: as.issuer,
    };
  }
}

const mismatch = (message: string) => new ConnectionRefused('mismatch', message);

/** The URL as the redirect URI is compared: scheme, host, port and path, exactly. */
function withoutQuery(url: URL): string {
  const copy = new URL(url.href);
  copy.search = '';
  copy.hash = '';
  return copy.href;
}
