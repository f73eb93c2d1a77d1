// RFC 8693 token exchange: the caller's own access token traded at its issuer for one meant for the upstream, whose
// subject is still the caller. The gateway authenticates as its own client; the caller's token goes to the issuer
// only, never upstream. What the issuer answers is kept per (issuer, subject, token) until shortly before it expires.
import { createHash } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import { clientAuth } from '../../client/internal.js';
import { untilAborted } from '../../protocol/internal.js';
import {
  EgressDetail,
  type EgressRefusalReason,
  EgressRefused,
  GatewayConfigError,
  oauthErrorCode,
} from './errors.js';
import { readSecret } from './secret.js';
import { TokenCache } from './token-cache.js';
import type { Egress, EgressCaller, EgressConfig } from './types.js';

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

export type TokenExchangeConfig = Extract<EgressConfig, { type: 'token-exchange' }>;

/** The operator's detail of a refusal (its `cause`): never shown to the caller. */
const egressDetail = (reason: EgressRefusalReason, message: string) => new EgressDetail(reason, message);

export interface TokenExchangeOptions {
  /** Where `clientSecretEnv` is looked up (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Exchanged tokens kept at most (default 10 000); the least recently used goes first. */
  cacheSize?: number;
  /** A kept token is dropped this long before it expires (default 30 s; at most half its lifetime). */
  expirySkewMs?: number;
  /** Longest one metadata fetch or exchange may take (default 10 s). */
  timeoutMs?: number;
}

export const TOKEN_EXCHANGE_DEFAULTS = Object.freeze({
  cacheSize: 10_000,
  expirySkewMs: 30_000,
  timeoutMs: 10_000,
});

/** Plain http only on this machine: anyone on the path could read the caller's token and the gateway's secret. */
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

function issuerUrl(config: TokenExchangeConfig, what: string): URL {
  let url: URL;
  try {
    url = new URL(config.issuer);
  } catch {
    throw new GatewayConfigError(`${what}: issuer ${JSON.stringify(config.issuer)} is not a URL`);
  }
  if (url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname))) return url;
  throw new GatewayConfigError(
    `${what}: issuer ${config.issuer} must be https (plain http only on loopback)`,
  );
}

export class TokenExchangeEgress implements Egress {
  readonly perCaller = true;
  readonly #config: TokenExchangeConfig;
  readonly #issuer: URL;
  readonly #secret: string | undefined;
  readonly #cache: TokenCache;
  readonly #skewMs: number;
  readonly #timeoutMs: number;
  #metadata: Promise<oauth.AuthorizationServer> | undefined;

  constructor(config: TokenExchangeConfig, options: TokenExchangeOptions = {}) {
    const what = `token-exchange credentials (issuer ${config.issuer})`;
    this.#issuer = issuerUrl(config, what);
    if (typeof config.clientId !== 'string' || config.clientId === '')
      throw new GatewayConfigError(`${what}: clientId is required`);
    this.#config = config;
    this.#secret =
      config.clientSecretEnv === undefined && config.clientSecretFile === undefined
        ? undefined
        : readSecret(
            { env: config.clientSecretEnv, file: config.clientSecretFile },
            `${what}: the client secret`,
            options.env,
          );
    this.#cache = new TokenCache(options.cacheSize ?? TOKEN_EXCHANGE_DEFAULTS.cacheSize);
    this.#skewMs = options.expirySkewMs ?? TOKEN_EXCHANGE_DEFAULTS.expirySkewMs;
    this.#timeoutMs = options.timeoutMs ?? TOKEN_EXCHANGE_DEFAULTS.timeoutMs;
  }

  async tokenFor(caller: EgressCaller, signal?: AbortSignal): Promise<string> {
    const subjectToken = caller.subjectToken;
    if (subjectToken === undefined || subjectToken === '')
      throw new EgressRefused('no_subject_token', {
        hint: 'the request carried no bearer token to exchange',
      });
    signal?.throwIfAborted();
    // A digest, not the token, in the key: the map holds no caller's token in the clear.
    const digest = createHash('sha256').update(subjectToken).digest('base64url');
    const key = `${caller.issuer ?? ''}\n${caller.subject}\n${digest}`;
    // The caller's end of a wait on a shared exchange: its own signal ends its own wait, not the exchange.
    return untilAborted(
      this.#cache.get(key, () => this.#exchange(subjectToken)),
      signal,
    );
  }

  #insecure(): { [oauth.allowInsecureRequests]?: true } {
    return this.#issuer.protocol === 'http:' ? { [oauth.allowInsecureRequests]: true } : {};
  }

  /** The issuer's metadata (RFC 8414, else OpenID discovery), fetched once; a failure is tried again next time. */
  #authorizationServer(): Promise<oauth.AuthorizationServer> {
    this.#metadata ??= this.#discover().catch((error: unknown) => {
      this.#metadata = undefined;
      throw error;
    });
    return this.#metadata;
  }

  async #discover(): Promise<oauth.AuthorizationServer> {
    const problems: string[] = [];
    for (const algorithm of ['oauth2', 'oidc'] as const) {
      let response: Response;
      try {
        response = await oauth.discoveryRequest(this.#issuer, {
          algorithm,
          signal: AbortSignal.timeout(this.#timeoutMs),
          ...this.#insecure(),
        });
      } catch (error) {
        problems.push(`${algorithm}: ${(error as Error).message}`);
        continue;
      }
      if (response.status !== 200) {
        await response.body?.cancel();
        problems.push(`${algorithm}: HTTP ${response.status}`);
        continue;
      }
      try {
        const as = await oauth.processDiscoveryResponse(this.#issuer, response);
        if (typeof as.token_endpoint !== 'string')
          throw egressDetail('issuer_unavailable', 'it names no token_endpoint');
        return as;
      } catch (error) {
        throw new EgressRefused('issuer_unavailable', {
          cause: egressDetail(
            'issuer_unavailable',
            `the metadata of issuer ${this.#config.issuer} is not usable: ${(error as Error).message}`,
          ),
        });
      }
    }
    throw new EgressRefused('issuer_unavailable', {
      cause: egressDetail(
        'issuer_unavailable',
        `no metadata for issuer ${this.#config.issuer} (${problems.join('; ')})`,
      ),
    });
  }

  async #exchange(subjectToken: string): Promise<{ token: string; until: number | undefined }> {
    const as = await this.#authorizationServer();
    const c = this.#config;
    const parameters: Record<string, string> = {
      subject_token: subjectToken,
      subject_token_type: ACCESS_TOKEN_TYPE,
      requested_token_type: ACCESS_TOKEN_TYPE,
    };
    if (c.audience !== undefined) parameters.audience = c.audience;
    if (c.resource !== undefined) parameters.resource = c.resource;
    if (c.scope !== undefined) parameters.scope = c.scope;
    const where = `token exchange at ${as.token_endpoint}`;
    let answer: oauth.TokenEndpointResponse;
    try {
      const response = await oauth.genericTokenEndpointRequest(
        as,
        { client_id: c.clientId },
        clientAuth(as, c.clientId, this.#secret),
        TOKEN_EXCHANGE_GRANT,
        parameters,
        { signal: AbortSignal.timeout(this.#timeoutMs), ...this.#insecure() },
      );
      answer = await oauth.processGenericTokenEndpointResponse(as, { client_id: c.clientId }, response);
    } catch (error) {
      throw refusal(error, where, subjectToken);
    }
    // Sent upstream as Bearer, so nothing else will do; and the caller's own token back is a passthrough.
    if (answer.token_type !== 'bearer')
      throw new EgressRefused('bad_response', {
        cause: egressDetail('bad_response', `${where}: token_type ${answer.token_type}, not Bearer`),
      });
    const issued = (answer as { issued_token_type?: unknown }).issued_token_type;
    if (issued !== undefined && issued !== ACCESS_TOKEN_TYPE)
      throw new EgressRefused('bad_response', {
        cause: egressDetail(
          'bad_response',
          `${where}: issued_token_type ${String(issued).slice(0, 100)}, not an access token`,
        ),
      });
    if (answer.access_token === subjectToken)
      throw new EgressRefused('bad_response', {
        cause: egressDetail('bad_response', `${where}: the issuer gave back the caller's own token`),
      });
    const lifetimeMs = answer.expires_in === undefined ? undefined : answer.expires_in * 1000;
    return {
      token: answer.access_token,
      until:
        lifetimeMs === undefined
          ? undefined
          : Date.now() + lifetimeMs - Math.min(this.#skewMs, lifetimeMs / 2),
    };
  }
}

/**
 * What failed, as an EgressRefused. oauth4webapi's errors are not kept as the cause: theirs carry the response body
 * (which, on success, holds the exchanged token). The issuer's description goes to the operator only, with any
 * echo of the caller's token cut out.
 */
function refusal(error: unknown, where: string, subjectToken: string): EgressRefused {
  const scrub = (s: string) => s.split(subjectToken).join('[subject token]').slice(0, 300);
  if (error instanceof oauth.ResponseBodyError) {
    const code = oauthErrorCode(error.error);
    const description = error.error_description ? `: ${scrub(error.error_description)}` : '';
    return new EgressRefused('exchange_refused', {
      ...(code === undefined ? {} : { oauthError: code }),
      cause: egressDetail(
        'exchange_refused',
        `${where}: HTTP ${error.status} ${code ?? '(no usable error code)'}${description}`,
      ),
    });
  }
  if (error instanceof oauth.WWWAuthenticateChallengeError) {
    const code = oauthErrorCode(error.cause[0]?.parameters.error);
    return new EgressRefused('exchange_refused', {
      ...(code === undefined ? {} : { oauthError: code }),
      cause: egressDetail(
        'exchange_refused',
        `${where}: HTTP ${error.status} with a WWW-Authenticate challenge ${code ?? ''}`.trim(),
      ),
    });
  }
  if (error instanceof oauth.OperationProcessingError || error instanceof oauth.UnsupportedOperationError)
    return new EgressRefused('bad_response', {
      cause: egressDetail('bad_response', `${where}: ${scrub(error.message)}`),
    });
  return new EgressRefused('issuer_unavailable', {
    cause: egressDetail(
      'issuer_unavailable',
      `${where}: ${scrub((error as Error)?.message ?? String(error))}`,
    ),
  });
}
