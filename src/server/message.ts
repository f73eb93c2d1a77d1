// Classify one decoded JSON value as a JSON-RPC request, a notification, or an invalid message.
import {
  ErrorCode,
  isJsonObject,
  type JsonObject,
  type JsonRpcErrorResponse,
  type JsonRpcRequest,
} from '../protocol/index.js';

export type IncomingMessage =
  | { kind: 'request'; request: JsonRpcRequest }
  | { kind: 'notification'; method: string; params: JsonObject | undefined }
  | { kind: 'invalid'; response: JsonRpcErrorResponse };

export function errorResponse(
  id: string | number | undefined,
  code: number,
  message: string,
  data?: unknown,
): JsonRpcErrorResponse {
  const error = data === undefined ? { code, message } : { code, message, data };
  return id === undefined ? { jsonrpc: '2.0', error } : { jsonrpc: '2.0', id, error };
}

const invalid = (id: string | number | undefined, message: string): IncomingMessage => ({
  kind: 'invalid',
  response: errorResponse(id, ErrorCode.InvalidRequest, message),
});

export function classifyMessage(value: unknown): IncomingMessage {
  if (Array.isArray(value)) return invalid(undefined, 'Invalid Request: JSON-RPC batches are not supported');
  if (typeof value !== 'object' || value === null)
    return invalid(undefined, 'Invalid Request: expected an object');
  const msg = value as Record<string, unknown>;
  const rawId = msg.id;
  const id =
    typeof rawId === 'string' || (typeof rawId === 'number' && Number.isFinite(rawId)) ? rawId : undefined;
  if (msg.jsonrpc !== '2.0') return invalid(id, 'Invalid Request: jsonrpc must be "2.0"');
  if ('result' in msg || 'error' in msg)
    return invalid(id, 'Invalid Request: clients must not send responses');
  if (typeof msg.method !== 'string' || msg.method === '')
    return invalid(id, 'Invalid Request: method must be a string');
  const params = msg.params;
  if (params !== undefined && !isJsonObject(params)) {
    return invalid(id, 'Invalid Request: params must be an object');
  }
  if (!('id' in msg))
    return { kind: 'notification', method: msg.method, params: params as JsonObject | undefined };
  if (id === undefined) return invalid(undefined, 'Invalid Request: id must be a string or a number');
  if (typeof rawId === 'number' && !Number.isInteger(rawId))
    return invalid(undefined, 'Invalid Request: id must be an integer');
  return {
    kind: 'request',
    request: { jsonrpc: '2.0', id, method: msg.method, params: params as JsonObject },
  };
}

/**
 * JSON text of a response, never throwing: a result that cannot be serialized (a BigInt, a cycle) becomes a -32603
 * for the same id, so a transport never dies or leaves a stream open over a handler's bad value.
 */
export function serializeResponse(response: JsonRpcErrorResponse | { id?: string | number }): string {
  try {
    return JSON.stringify(response);
  } catch {
    return JSON.stringify(
      errorResponse(
        response.id,
        ErrorCode.InternalError,
        'Internal error: the result could not be serialized',
      ),
    );
  }
}

/** JSON text of a notification, or undefined when it cannot be serialized (it is then dropped). */
export function serializeNotification(notification: unknown): string | undefined {
  try {
    return JSON.stringify(notification);
  } catch {
    return undefined;
  }
}
