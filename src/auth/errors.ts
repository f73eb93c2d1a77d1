// Why a request was not authenticated, in the terms RFC 6750 §3 gives a resource server to answer with.
import { MrtrError } from '../protocol/index.js';

/** RFC 6750 error codes, plus `unavailable` (we could not check: the issuer did not answer). */
export type AuthErrorCode = 'invalid_request' | 'invalid_token' | 'insufficient_scope' | 'unavailable';

/** Thrown by a token verifier or the bearer check; the transport turns it into 401/403/503 + WWW-Authenticate. */
export class AuthRefusal extends MrtrError {
  override readonly name = 'AuthRefusal';
  /** Stable machine-readable code (`ERR_AUTH_INVALID_TOKEN`, …): branch on this, never on the message. */
  declare readonly code: `ERR_AUTH_${Uppercase<AuthErrorCode>}`;
  readonly error: AuthErrorCode;
  /** HTTP status the answer carries: 401 (no or bad token), 403 (insufficient scope), 503 (issuer unreachable). */
  readonly status: 401 | 403 | 503;
  /** Precise reason for the log (`expired`, `wrong_audience`, …); the client gets `message`. */
  readonly reason: string;
  /** Scopes the operation needs (insufficient_scope). */
  readonly scopes: readonly string[] | undefined;

  constructor(
    error: AuthErrorCode,
    reason: string,
    message: string,
    options: { scopes?: readonly string[]; cause?: unknown } = {},
  ) {
    super(
      `ERR_AUTH_${error.toUpperCase() as Uppercase<AuthErrorCode>}`,
      message,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.error = error;
    this.reason = reason;
    this.status = error === 'insufficient_scope' ? 403 : error === 'unavailable' ? 503 : 401;
    this.scopes = options.scopes;
  }
}

/** A BearerAuth or JwtVerifier option that cannot work: the one class of ERR_AUTH_CONFIG (each has its subclass). */
export class AuthConfigError extends MrtrError {
  override readonly name: string = 'AuthConfigError';
  declare readonly code: 'ERR_AUTH_CONFIG';
  constructor(message: string, options?: ErrorOptions) {
    super('ERR_AUTH_CONFIG', message, options);
  }
}

/** A refusal for a request that carried no credentials at all: RFC 6750 §3.1 says such a challenge has no error. */
export class MissingToken extends AuthRefusal {
  constructor() {
    super('invalid_request', 'no_token', 'Unauthorized: this server needs an Authorization: Bearer token');
  }
}

export const invalidToken = (reason: string, message: string, cause?: unknown): AuthRefusal =>
  new AuthRefusal('invalid_token', reason, `Unauthorized: ${message}`, { cause });
