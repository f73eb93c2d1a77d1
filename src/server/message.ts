// Classify one decoded JSON value as a JSON-RPC request, a notification, or an invalid message.
import {
  ErrorCode,
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
  if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params))) {
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
