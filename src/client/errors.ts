// Errors the client raises locally. They are never JSON-RPC shaped, so they cannot be mistaken for a server's answer
// (basic/index.mdx "Error Codes": local errors must not look like errors received from the peer).
import { type JsonRpcError, MrtrError } from '../protocol/index.js';

/** The server broke the protocol: garbage JSON, a wrong id, an unknown resultType, an undeclared input kind, … */
export class ProtocolViolation extends MrtrError {
  override readonly name = 'ProtocolViolation';
  declare readonly code: 'ERR_PROTOCOL_VIOLATION';
  constructor(message: string) {
    super('ERR_PROTOCOL_VIOLATION', message);
  }
}

/** The request never got an answer: connection refused or reset, an HTTP error without a JSON-RPC body, a dead child. */
export class TransportFailure extends MrtrError {
  override readonly name = 'TransportFailure';
  declare readonly code: 'ERR_TRANSPORT' | 'ERR_SESSION_EXPIRED' | 'ERR_OAUTH';
  readonly httpStatus: number | undefined;
  /** On a 401 to a request that carried a bearer token: which token was refused (bearerDigest), never the token. */
  refusedBearer?: string;
  constructor(message: string, httpStatus?: number, code: TransportFailure['code'] = 'ERR_TRANSPORT') {
    super(code, message);
    this.httpStatus = httpStatus;
  }
}

/** A legacy (2025) server ended the session (HTTP 404 on a request carrying its Mcp-Session-Id). */
export class SessionExpired extends TransportFailure {
  declare readonly code: 'ERR_SESSION_EXPIRED';
  constructor(message: string) {
    super(message, 404, 'ERR_SESSION_EXPIRED');
  }
}

/** A call ended without a result (declined, round cap, server error, …); the message says how. */
export class CallIncompleteError extends MrtrError {
  override readonly name = 'CallIncompleteError';
  declare readonly code: 'ERR_CALL_INCOMPLETE';
  constructor(message: string) {
    super('ERR_CALL_INCOMPLETE', message);
  }
}

/**
 * The server answered with a JSON-RPC error response. Not an MrtrError: its numeric `code` is the server's, the
 * protocol's JSON-RPC error code (basic/index.mdx "Error Codes").
 */
export class RemoteError extends Error {
  override readonly name = 'RemoteError';
  readonly code: number;
  readonly data: unknown;
  constructor(error: JsonRpcError) {
    super(error.message);
    this.code = error.code;
    this.data = error.data;
  }
  toJSON(): JsonRpcError {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

/** Thrown by transports when the caller's signal aborts; `reason` is the signal's reason, `message` its own when given. */
export class RequestAborted extends MrtrError {
  override readonly name = 'RequestAborted';
  declare readonly code: 'ERR_ABORTED';
  readonly reason: unknown;
  constructor(reason: unknown, message?: string) {
    super('ERR_ABORTED', message ?? (reason instanceof Error ? reason.message : 'request aborted'));
    this.reason = reason;
  }
}

export function abortError(signal: AbortSignal): RequestAborted {
  return new RequestAborted(signal.reason);
}

export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export type HeldCallErrorCode =
  /** No call is held under this requestState for this holder (never was, another holder's, or the client closed). */
  | 'ERR_HELD_CALL_UNKNOWN'
  /** The held call waited past its time limit: it was dropped and its upstream call cancelled. */
  | 'ERR_HELD_CALL_EXPIRED'
  /** This requestState was already presented: each is good for one round. */
  | 'ERR_HELD_CALL_USED';

/** `McpClient.round` was given the requestState of a held 2025 call it cannot go on with; `code` says why. */
export class HeldCallError extends MrtrError {
  override readonly name = 'HeldCallError';
  declare readonly code: HeldCallErrorCode;
  constructor(code: HeldCallErrorCode, message: string) {
    super(code, message);
  }
}
