// What the server answers a message it will not take, and the JSON text of what it sends. What a message is (request,
// notification, response, invalid) is protocol's rule: classifyMessage in src/protocol/message.ts.
import {
  type ClassifiedMessage,
  ErrorCode,
  errorResponse,
  type JsonRpcErrorResponse,
} from '../protocol/index.js';

/**
 * The -32600 answer to a message a client may not send: an invalid one, or a response (the server asked nothing; a
 * 2025 client's answers to the bridge's questions are taken before this).
 */
export function refusalOf(
  message: Extract<ClassifiedMessage, { kind: 'invalid' | 'response' }>,
): JsonRpcErrorResponse {
  if (message.kind === 'invalid')
    return errorResponse(message.id, ErrorCode.InvalidRequest, `Invalid Request: ${message.reason}`);
  return errorResponse(
    message.response.id ?? undefined,
    ErrorCode.InvalidRequest,
    'Invalid Request: clients must not send responses',
  );
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
