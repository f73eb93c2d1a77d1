// What one decoded JSON value is as a JSON-RPC 2.0 message (schema.json JSONRPCMessage): request, notification,
// response, or invalid with the reason. Server and client read what their peer sent with this one rule; it runs on
// every message, so it reads each member once and returns the value itself, uncopied.
import { isJsonObject } from './json.js';
import type {
  JsonObject,
  JsonRpcErrorResponse,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResponse,
  RequestId,
} from './wire.js';

export type ClassifiedMessage =
  | { kind: 'request'; request: JsonRpcRequest }
  | { kind: 'notification'; notification: JsonRpcNotification }
  | { kind: 'response'; response: JsonRpcResponse }
  /** `id` is the message's own when it is a valid one (an error answer echoes it), else undefined. */
  | { kind: 'invalid'; id: RequestId | undefined; reason: string };

/** A JSON-RPC error response; without an id when the request's could not be read. */
export function errorResponse(
  id: RequestId | undefined,
  code: number,
  message: string,
  data?: unknown,
): JsonRpcErrorResponse {
  const error = data === undefined ? { code, message } : { code, message, data };
  return id === undefined ? { jsonrpc: '2.0', error } : { jsonrpc: '2.0', id, error };
}

// schema.json RequestId: a string or an integer (JSON has no NaN or Infinity, and MCP allows no null).
const isRequestId = (id: unknown): id is RequestId => typeof id === 'string' || Number.isInteger(id);

/** An invalid message, answered with its own id when that id is valid. Off the hot path, so `id` is read here. */
const invalid = (msg: JsonObject | undefined, reason: string): ClassifiedMessage => {
  const id = msg?.id;
  return { kind: 'invalid', id: isRequestId(id) ? id : undefined, reason };
};

export function classifyMessage(value: unknown): ClassifiedMessage {
  if (typeof value !== 'object' || value === null) return invalid(undefined, 'expected an object');
  if (Array.isArray(value))
    return invalid(undefined, 'JSON-RPC batches are not supported; send one message at a time');
  const msg = value as JsonObject;
  if (msg.jsonrpc !== '2.0') return invalid(msg, 'jsonrpc must be "2.0"');
  const method = msg.method;
  if (method !== undefined) {
    if (typeof method !== 'string' || method === '') return invalid(msg, 'method must be a non-empty string');
    // A request that also answers, or an answer that also asks: neither side can tell what to do with it.
    if ('result' in msg || 'error' in msg)
      return invalid(msg, 'a message has a method or a result/error, not both');
    const params = msg.params;
    if (params !== undefined && !isJsonObject(params)) return invalid(msg, 'params must be an object');
    if (!('id' in msg))
      return { kind: 'notification', notification: value as unknown as JsonRpcNotification };
    if (!isRequestId(msg.id)) return invalid(undefined, 'id must be a string or an integer');
    return { kind: 'request', request: value as unknown as JsonRpcRequest };
  }
  const id = msg.id;
  if ('error' in msg) {
    if ('result' in msg) return invalid(msg, 'a response carries a result or an error, not both');
    const e = msg.error;
    if (!isJsonObject(e) || !Number.isInteger(e.code) || typeof e.message !== 'string')
      return invalid(msg, 'error must have an integer code and a string message');
    // JSON-RPC 2.0 answers a request whose id could not be read with "id": null (or, in MCP, none at all).
    if (id !== undefined && id !== null && !isRequestId(id))
      return invalid(undefined, 'response id must be a string or an integer');
    return { kind: 'response', response: value as unknown as JsonRpcResponse };
  }
  if (!('result' in msg)) return invalid(msg, 'a message needs a method, a result or an error');
  if (!isRequestId(id)) return invalid(undefined, 'response id must be a string or an integer');
  if (!isJsonObject(msg.result)) return invalid(msg, 'result must be an object');
  return { kind: 'response', response: value as unknown as JsonRpcResponse };
}
