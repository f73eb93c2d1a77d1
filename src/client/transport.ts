// What the client needs from a transport: send one JSON-RPC request, get its response, hear its notifications.
import {
  isJsonObject,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../protocol/index.js';

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

/** Classify one decoded JSON-RPC message from the server. */
export function classifyMessage(
  value: unknown,
):
  | { type: 'response'; response: JsonRpcResponse }
  | { type: 'notification'; notification: JsonRpcNotification }
  | { type: 'request'; request: JsonRpcRequest }
  | { type: 'invalid'; reason: string } {
  if (!isJsonObject(value)) return { type: 'invalid', reason: 'a JSON-RPC message must be an object' };
  if (value.jsonrpc !== '2.0') return { type: 'invalid', reason: 'jsonrpc must be "2.0"' };
  if (typeof value.method === 'string') {
    if ('id' in value) {
      if (typeof value.id !== 'string' && typeof value.id !== 'number')
        return { type: 'invalid', reason: 'request id must be a string or a number' };
      if (value.params !== undefined && !isJsonObject(value.params))
        return { type: 'invalid', reason: 'request params must be an object' };
      return { type: 'request', request: value as unknown as JsonRpcRequest };
    }
    if (value.params !== undefined && !isJsonObject(value.params))
      return { type: 'invalid', reason: 'notification params must be an object' };
    return { type: 'notification', notification: value as unknown as JsonRpcNotification };
  }
  const hasResult = 'result' in value;
  const hasError = 'error' in value;
  if (hasResult === hasError)
    return { type: 'invalid', reason: 'a response must carry exactly one of result and error' };
  if (hasError) {
    const e = value.error;
    if (!isJsonObject(e) || !Number.isInteger(e.code) || typeof e.message !== 'string')
      return { type: 'invalid', reason: 'error must have an integer code and a string message' };
    if (
      value.id !== undefined &&
      value.id !== null &&
      typeof value.id !== 'string' &&
      typeof value.id !== 'number'
    )
      return { type: 'invalid', reason: 'response id must be a string or a number' };
    return { type: 'response', response: value as unknown as JsonRpcResponse };
  }
  if (typeof value.id !== 'string' && typeof value.id !== 'number')
    return { type: 'invalid', reason: 'response id must be a string or a number' };
  if (!isJsonObject(value.result)) return { type: 'invalid', reason: 'result must be an object' };
  return { type: 'response', response: value as unknown as JsonRpcResponse };
}

/** True when the response belongs to the request `id` (error responses may lack an id when the request was unreadable). */
export function responseMatches(response: JsonRpcResponse, id: JsonRpcRequest['id']): boolean {
  if ('error' in response && (response.id === undefined || response.id === null)) return true;
  return response.id === id;
}
