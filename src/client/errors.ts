// Errors the client raises locally. They are never JSON-RPC shaped, so they cannot be mistaken for a server's answer
// (basic/index.mdx "Error Codes": local errors must not look like errors received from the peer).
import type { JsonRpcError } from '../protocol/index.js';

/** The server broke the protocol: garbage JSON, a wrong id, an unknown resultType, an undeclared input kind, … */
export class ProtocolViolation extends Error {
  override readonly name = 'ProtocolViolation';
}

/** The request never got an answer: connection refused or reset, an HTTP error without a JSON-RPC body, a dead child. */
export class TransportFailure extends Error {
  override readonly name = 'TransportFailure';
  readonly httpStatus: number | undefined;
  constructor(message: string, httpStatus?: number) {
    super(message);
    this.httpStatus = httpStatus;
  }
}

/** A legacy (2025) server ended the session (HTTP 404 on a request carrying its Mcp-Session-Id). */
export class SessionExpired extends TransportFailure {
  constructor(message: string) {
    super(message, 404);
  }
}

/** The server answered with a JSON-RPC error response. */
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

/** Thrown by transports when the caller's signal aborts; `reason` is the signal's reason. */
export class RequestAborted extends Error {
  override readonly name = 'RequestAborted';
  readonly reason: unknown;
  constructor(reason: unknown) {
    super(reason instanceof Error ? reason.message : 'request aborted');
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
export class HeldCallError extends Error {
  override readonly name = 'HeldCallError';
  constructor(
    readonly code: HeldCallErrorCode,
    message: string,
  ) {
    super(message);
  }
}
