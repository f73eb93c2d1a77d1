import { MrtrError } from '../protocol/index.js';

// A server author's misuse of connections (an unknown connection name, no sign-in to send people to, an anonymous
// caller): a bug to fix, not a refusal to show the person.
export class ConnectionsUsageError extends MrtrError {
  override readonly name = 'ConnectionsUsageError';
  declare readonly code: 'ERR_CONNECTIONS_USAGE';
  constructor(message: string, options?: ErrorOptions) {
    super('ERR_CONNECTIONS_USAGE', message, options);
  }
}

/** Why a third party's authorization server gave no usable token. */
export type ConnectionRefusedReason =
  /** The person said no at the authorization server, or it answered an OAuth error. */
  | 'denied'
  /** The callback was not the one this request expects (state, iss, redirect): possibly an attack. */
  | 'mismatch'
  /** A refresh token that no longer works (revoked, expired): the person must connect again. */
  | 'invalid_grant'
  /** The authorization server could not be reached, answered too slowly, or answered what is not OAuth. */
  | 'unavailable';

/** An authorization server refused, or its answer failed a check: the message says which, never a token. */
export class ConnectionRefused extends MrtrError {
  override readonly name = 'ConnectionRefused';
  declare readonly code: 'ERR_CONNECTION_REFUSED';
  constructor(
    readonly reason: ConnectionRefusedReason,
    message: string,
    options?: ErrorOptions,
  ) {
    super('ERR_CONNECTION_REFUSED', message, options);
  }
}
