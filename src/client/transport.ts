// What the client needs from a transport: send one JSON-RPC request, get its response, hear its notifications.
import type { JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../protocol/index.js';

export interface TransportRequest {
  message: JsonRpcRequest;
  /** Extra HTTP headers for this request (the `Mcp-Param-*` mirrors); ignored by stdio. */
  headers?: Record<string, string>;
  /** Aborting closes the HTTP response stream, or sends notifications/cancelled on stdio. */
  signal?: AbortSignal;
  /** Notifications the server sends about this request before its response (progress, log messages). */
  onNotification?: (notification: JsonRpcNotification) => void;
  /**
   * Legacy sessions (2025-11-25 and earlier) only: a request the server sends while this one is open (elicitation,
   * sampling, roots, ping). The transport sends back what this returns. Without it, such a request is a protocol
   * error (2026-07-28 servers use MRTR instead).
   */
  onServerRequest?: (request: JsonRpcRequest) => Promise<JsonRpcResponse>;
  /** HTTP only: told the status of the response, before it is read (era detection inspects 4xx answers). */
  onHttpStatus?: (status: number) => void;
}

/** A legacy session's wire state, for transports that carry one (initialize + Mcp-Session-Id). */
export interface LegacySessionWire {
  /** Begin speaking the legacy protocol at `protocolVersion` (headers, session id capture, server requests). */
  beginSession(protocolVersion: string): void;
  /** Forget the session (it expired): the next initialize starts a new one. */
  resetSession(): void;
  /** Send a notification (no response), e.g. notifications/initialized. */
  notify(notification: JsonRpcNotification, signal?: AbortSignal): Promise<void>;
  /**
   * Listen for requests the server sends outside any response (HTTP: the session's GET stream). `answer` gets each
   * one and returns the response to send back.
   */
  listen(answer: (request: JsonRpcRequest) => Promise<JsonRpcResponse>): void;
}

/**
 * A JSON-RPC error response is a normal return value. Failures to get any valid response throw:
 * `ProtocolViolation`, `TransportFailure` or `RequestAborted`.
 */
export interface ClientTransport {
  readonly kind: 'http' | 'stdio';
  /** A label for people: the URL or the command line. */
  readonly label: string;
  /** Where the server is, for people: the URL's host and port, or the command. Default: `label`. */
  readonly endpoint?: string;
  send(request: TransportRequest): Promise<JsonRpcResponse>;
  close(): Promise<void>;
  /** Present on transports that can carry a legacy (2025) session. */
  readonly legacy?: LegacySessionWire;
}

/** True when the response belongs to the request `id` (error responses may lack an id when the request was unreadable). */
export function responseMatches(response: JsonRpcResponse, id: JsonRpcRequest['id']): boolean {
  if ('error' in response && (response.id === undefined || response.id === null)) return true;
  return response.id === id;
}
