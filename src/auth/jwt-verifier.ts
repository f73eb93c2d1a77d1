// JWT access tokens (RFC 9068) verified with jose: signature by the issuer's JWKS (discovered, cached, refreshed on an
// unknown kid at most once per cooldown), issuer, audience (RFC 8707: this server), exp/nbf with a small tolerance,
// and an algorithm allow-list. A verified token is remembered briefly, so a flow's later rounds cost a hash lookup.
import type { JWTPayload, JWTVerifyGetKey, JWTVerifyOptions } from 'jose';
import { type ClaimNames, principalFromClaims } from './claims.js';
import { AUTH_DEFAULTS } from './defaults.js';
import { AuthConfigError, AuthRefusal, invalidToken } from './errors.js';
import { checkFetchUrl, fetchIssuerMetadata } from './issuer-metadata.js';
import type { AuthPrincipal } from './principal.js';
import type { TokenVerifier } from './verifier.js';

export interface JwtVerifierOptions {
  /** The issuer (`iss`) tokens must carry, exactly; its metadata names the JWKS unless `jwksUri` is given. */
  issuer: string;
  /** The audience (`aud`) tokens must carry: this server's resource URL (RFC 8707), or several accepted values. */
  audience: string | readonly string[];
  /** Skip discovery and read keys from here. */
  jwksUri?: string;
  /** The issuer's public keys as a JSON Web Key Set (`{ keys: [...] }`): no discovery, no network at all. */
  jwks?: { keys: readonly object[] };
  /**
   * A shared secret for HS256/HS384/HS512 tokens. Only with it are HS* algorithms accepted, and then only they:
   * a server never checks an HMAC against a key it fetched.
   */
  secret?: string | Uint8Array;
  /** Accepted `alg` values (default: the asymmetric ones; with `secret`, HS256/384/512). `none` never is. */
  algorithms?: readonly string[];
  /** Require this `typ` header, e.g. `at+jwt` (RFC 9068 §4). Default: any. */
  type?: string;
  clockToleranceSec?: number;
  scopeClaims?: readonly string[];
  rolesClaim?: string;
  jwksCooldownMs?: number;
  jwksCacheMaxAgeMs?: number;
  fetchTimeoutMs?: number;
  verifiedTokenCacheMs?: number;
  verifiedTokenCacheSize?: number;
  discoveryRetryMs?: number;
  /** For tests and proxies: how metadata is fetched. */
  fetch?: typeof fetch;
  /**
   * Accept a plain-http issuer or JWKS off loopback. Off: anyone on the network path could serve their own keys.
   * Only for a test network you control.
   */
  allowInsecureHttp?: boolean;
}

export class JwtVerifierConfigError extends AuthConfigError {
  override readonly name: string = 'JwtVerifierConfigError';
}

const HMAC_ALGORITHMS = ['HS256', 'HS384', 'HS512'];

/** jose's error codes → our reason and what the client may be told. */
const JOSE_REFUSALS: Readonly<Record<string, [reason: string, message: string]>> = {
  ERR_JWT_EXPIRED: ['expired', 'the access token expired'],
  ERR_JWS_SIGNATURE_VERIFICATION_FAILED: ['bad_signature', 'the access token signature is not valid'],
  ERR_JOSE_ALG_NOT_ALLOWED: [
    'alg_not_allowed',
    'the access token is signed with an algorithm this server refuses',
  ],
  ERR_JWKS_NO_MATCHING_KEY: [
    'unknown_key',
    'the access token is signed with a key the issuer does not publish',
  ],
  ERR_JWKS_MULTIPLE_MATCHING_KEYS: ['ambiguous_key', 'the access token names no single key of the issuer'],
  ERR_JWS_INVALID: ['malformed', 'the access token is not a valid JWS'],
  ERR_JWT_INVALID: ['malformed', 'the access token is not a valid JWT'],
  ERR_JOSE_NOT_SUPPORTED: ['alg_not_allowed', 'the access token uses an unsupported algorithm'],
};
const CLAIM_REFUSALS: Readonly<Record<string, [reason: string, message: string]>> = {
  aud: ['wrong_audience', 'the access token was not issued for this server (aud)'],
  iss: ['wrong_issuer', 'the access token was issued by an issuer this server does not trust (iss)'],
  nbf: ['not_yet_valid', 'the access token is not valid yet (nbf)'],
  typ: ['wrong_type', 'the access token has the wrong type (typ)'],
};

function refusalFor(error: unknown): AuthRefusal {
  if (error instanceof AuthRefusal) return error;
  const e = error as { code?: string; claim?: string; name?: string };
  if (e.code === 'ERR_JWT_CLAIM_VALIDATION_FAILED') {
    const known =
      e.claim !== undefined && Object.hasOwn(CLAIM_REFUSALS, e.claim) ? CLAIM_REFUSALS[e.claim] : undefined;
    if (known) return invalidToken(known[0], known[1], error);
    return invalidToken(
      'missing_claim',
      `the access token lacks a valid ${e.claim ?? 'required'} claim`,
      error,
    );
  }
  if (e.code !== undefined && Object.hasOwn(JOSE_REFUSALS, e.code)) {
    const [reason, message] = JOSE_REFUSALS[e.code]!;
    return invalidToken(reason, message, error);
  }
  // The JWKS could not be fetched (timeout, refused, not 200): we could not check, which is not the token's fault.
  return new AuthRefusal('unavailable', 'jwks_unavailable', "the issuer's keys could not be fetched", {
    cause: error,
  });
}

interface Remembered {
  principal: AuthPrincipal;
  until: number;
}

type Jose = typeof import('jose');
let jose: Promise<Jose> | undefined;
/** jose is loaded when the first signature is checked: a server with no JWT issuer never carries it (~8 MiB). */
function loadJose(): Promise<Jose> {
  jose ??= import('jose').catch((error: unknown) => {
    // Tried again on the next check; meanwhile the caller learns that the verifier, not the issuer, failed.
    jose = undefined;
    throw new AuthRefusal('unavailable', 'verifier_unavailable', 'the token verifier could not be loaded', {
      cause: error,
    });
  });
  return jose;
}

export class JwtVerifier implements TokenVerifier {
  readonly authorizationServers: readonly string[];
  private readonly verifyOptions: JWTVerifyOptions;
  private readonly claimNames: ClaimNames;
  private keys: JWTVerifyGetKey | Uint8Array | undefined;
  /** A configured JWKS address whose key set is made with the first check (jose is not loaded before). */
  private jwksUri: string | undefined;
  private discovering: Promise<JWTVerifyGetKey> | undefined;
  private discoveryFailedAt = Number.NEGATIVE_INFINITY;
  private discoveryError: unknown;
  private readonly remembered = new Map<string, Remembered>();
  private readonly cacheMs: number;
  private readonly cacheSize: number;

  constructor(private readonly options: JwtVerifierOptions) {
    if (typeof options.issuer !== 'string' || !/^https?:\/\//.test(options.issuer))
      throw new JwtVerifierConfigError(
        `JwtVerifier: issuer must be an http(s) URL, got ${String(options.issuer)}`,
      );
    for (const [what, value] of [
      ['issuer', options.issuer],
      ['jwksUri', options.jwksUri],
    ] as const) {
      const problem = value === undefined ? undefined : checkFetchUrl(value, what, options.allowInsecureHttp);
      if (problem) throw new JwtVerifierConfigError(`JwtVerifier: ${problem}`);
    }
    const audiences =
      typeof options.audience === 'string' ? [options.audience] : [...(options.audience ?? [])];
    if (audiences.length === 0 || audiences.some((a) => typeof a !== 'string' || a === ''))
      throw new JwtVerifierConfigError('JwtVerifier: audience must name this server (its resource URL)');
    const algorithms = [
      ...(options.algorithms ?? (options.secret ? HMAC_ALGORITHMS : AUTH_DEFAULTS.asymmetricAlgorithms)),
    ];
    if (algorithms.some((a) => a.toLowerCase() === 'none'))
      throw new JwtVerifierConfigError('JwtVerifier: the "none" algorithm is never accepted');
    const hmac = algorithms.filter((a) => HMAC_ALGORITHMS.includes(a));
    if (options.secret === undefined && hmac.length > 0)
      throw new JwtVerifierConfigError(
        `JwtVerifier: ${hmac.join(', ')} needs an explicitly configured secret (an HMAC checked against a published key is forgeable)`,
      );
    if (options.secret !== undefined && hmac.length !== algorithms.length)
      throw new JwtVerifierConfigError(
        'JwtVerifier: with a shared secret, only HS256/HS384/HS512 are accepted',
      );
    const keySources = [options.secret, options.jwksUri, options.jwks].filter((k) => k !== undefined);
    if (keySources.length > 1)
      throw new JwtVerifierConfigError('JwtVerifier: give one of secret, jwksUri or jwks, not several');
    if (options.jwks !== undefined && !Array.isArray(options.jwks?.keys))
      throw new JwtVerifierConfigError('JwtVerifier: jwks must be a JSON Web Key Set, { keys: [...] }');
    // Checked here, as the key set that uses them is made with the first token check: a bad value must stop the
    // server at start, not refuse every request later.
    const timeoutMs = options.fetchTimeoutMs;
    if (timeoutMs !== undefined && !(Number.isSafeInteger(timeoutMs) && timeoutMs >= 0))
      throw new JwtVerifierConfigError(
        `JwtVerifier: fetchTimeoutMs must be a whole number of milliseconds, 0 or more, got ${timeoutMs}`,
      );
    for (const name of ['jwksCooldownMs', 'jwksCacheMaxAgeMs'] as const) {
      const value = options[name];
      if (value !== undefined && !(typeof value === 'number' && value >= 0))
        throw new JwtVerifierConfigError(
          `JwtVerifier: ${name} must be a number of milliseconds, 0 or more, got ${value}`,
        );
    }
    const secretBytes =
      typeof options.secret === 'string' ? Buffer.byteLength(options.secret) : options.secret?.byteLength;
    if (secretBytes !== undefined && secretBytes < 32)
      throw new JwtVerifierConfigError(
        `JwtVerifier: the shared secret is ${secretBytes} bytes; HS256 needs at least 32 random bytes`,
      );
    this.authorizationServers = [options.issuer];
    this.verifyOptions = {
      issuer: options.issuer,
      audience: audiences,
      algorithms,
      clockTolerance: options.clockToleranceSec ?? AUTH_DEFAULTS.clockToleranceSec,
      requiredClaims: ['exp', 'sub'],
      ...(options.type === undefined ? {} : { typ: options.type }),
    };
    this.claimNames = {
      scopeClaims: options.scopeClaims ?? AUTH_DEFAULTS.scopeClaims,
      rolesClaim: options.rolesClaim ?? AUTH_DEFAULTS.rolesClaim,
    };
    this.cacheMs = options.verifiedTokenCacheMs ?? AUTH_DEFAULTS.verifiedTokenCacheMs;
    this.cacheSize = options.verifiedTokenCacheSize ?? AUTH_DEFAULTS.verifiedTokenCacheSize;
    if (options.secret !== undefined) {
      this.keys =
        typeof options.secret === 'string' ? new TextEncoder().encode(options.secret) : options.secret;
    } else if (options.jwksUri !== undefined) {
      this.jwksUri = options.jwksUri;
    }
  }

  verify(token: string): AuthPrincipal | Promise<AuthPrincipal> {
    // Keyed by the token itself: hashing it first measured more than the lookup it guards. Only tokens whose
    // signature verified are ever keys, so a flood of forgeries cannot fill the map.
    if (this.cacheMs > 0) {
      const hit = this.remembered.get(token);
      if (hit !== undefined) {
        if (Date.now() < hit.until) return hit.principal;
        this.remembered.delete(token);
      }
    }
    return this.verifySignature(token);
  }

  private async verifySignature(token: string): Promise<AuthPrincipal> {
    let payload: JWTPayload;
    try {
      payload = await this.checkSignature(token);
    } catch (first) {
      const refusal = refusalFor(first);
      // One immediate retry when the keys could not be fetched: a pooled connection to an issuer that restarted
      // fails once and then works. A second failure is the issuer's outage.
      if (refusal.reason !== 'jwks_unavailable') throw refusal;
      try {
        payload = await this.checkSignature(token);
      } catch (second) {
        throw refusalFor(second);
      }
    }
    if (typeof payload.sub !== 'string' || payload.sub === '')
      throw invalidToken('missing_claim', 'the access token has no subject (sub)');
    const principal = principalFromClaims(payload as Record<string, unknown>, this.claimNames);
    if (this.cacheMs > 0) this.remember(token, principal);
    return principal;
  }

  private async checkSignature(token: string): Promise<JWTPayload> {
    const jose = await loadJose();
    if (this.keys === undefined && this.options.jwks !== undefined)
      this.keys = jose.createLocalJWKSet(this.options.jwks as Parameters<Jose['createLocalJWKSet']>[0]);
    if (this.keys === undefined && this.jwksUri !== undefined)
      this.keys = this.remoteKeys(jose, this.jwksUri);
    const keys = this.keys ?? (await this.discover(jose));
    return (await jose.jwtVerify(token, keys as JWTVerifyGetKey, this.verifyOptions)).payload;
  }

  private remember(token: string, principal: AuthPrincipal): void {
    const until = Math.min(Date.now() + this.cacheMs, principal.expiresAt ?? Number.POSITIVE_INFINITY);
    // Oldest first out: a Map iterates in insertion order.
    if (this.remembered.size >= this.cacheSize) this.remembered.delete(this.remembered.keys().next().value!);
    this.remembered.set(token, { principal, until });
  }

  private remoteKeys(jose: Jose, jwksUri: string): JWTVerifyGetKey {
    return jose.createRemoteJWKSet(new URL(jwksUri), {
      cooldownDuration: this.options.jwksCooldownMs ?? AUTH_DEFAULTS.jwksCooldownMs,
      cacheMaxAge: this.options.jwksCacheMaxAgeMs ?? AUTH_DEFAULTS.jwksCacheMaxAgeMs,
      timeoutDuration: this.options.fetchTimeoutMs ?? AUTH_DEFAULTS.fetchTimeoutMs,
    });
  }

  /** The issuer's JWKS, found through its metadata once; a failure is retried no more often than discoveryRetryMs. */
  private discover(jose: Jose): Promise<JWTVerifyGetKey> {
    if (this.discovering) return this.discovering;
    const retryMs = this.options.discoveryRetryMs ?? AUTH_DEFAULTS.discoveryRetryMs;
    if (Date.now() - this.discoveryFailedAt < retryMs)
      return Promise.reject(
        new AuthRefusal(
          'unavailable',
          'issuer_metadata_unavailable',
          "the issuer's metadata could not be fetched",
          {
            cause: this.discoveryError,
          },
        ),
      );
    const timeout = this.options.fetchTimeoutMs ?? AUTH_DEFAULTS.fetchTimeoutMs;
    // Any failure — the fetch, the checks, building the key set — resets discovery, so it is tried again later.
    this.discovering = fetchIssuerMetadata(this.options.issuer, timeout, this.options.fetch)
      .then((metadata) => {
        const keys = this.remoteKeys(jose, metadata.jwks_uri);
        this.keys = keys;
        return keys;
      })
      .catch((error: unknown) => {
        this.discovering = undefined;
        this.discoveryFailedAt = Date.now();
        this.discoveryError = error;
        throw new AuthRefusal(
          'unavailable',
          'issuer_metadata_unavailable',
          "the issuer's metadata could not be fetched",
          { cause: error },
        );
      });
    return this.discovering;
  }
}
