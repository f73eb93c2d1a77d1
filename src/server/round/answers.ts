// How an MRTR request's outcome becomes its JSON-RPC answer: a result with the server's `_meta`, an error that names
// what went wrong (internals logged, not sent), or — when the round could not be recorded — no answer but a -32603.
import {
  ErrorCode,
  errorResponse,
  type Implementation,
  type JsonRpcRequest,
  type JsonRpcResponse,
  McpError,
  META_SERVER_INFO,
  type Result,
  RoundRefused,
} from '../../protocol/index.js';
import type { Logger, RequestEnvironment } from '../environment.js';
import { HookTimeoutError } from '../time-bound.js';

/** The result, with the server's name and version in `_meta` when it has them. */
export function resultAnswer(
  request: JsonRpcRequest,
  result: Result,
  serverInfo: Implementation | undefined,
): JsonRpcResponse {
  if (serverInfo !== undefined) result._meta = { ...result._meta, [META_SERVER_INFO]: serverInfo };
  return { jsonrpc: '2.0', id: request.id, result };
}

/** An McpError as sent; a guard's HTTP status (429 and Retry-After) passed on; anything else -32603, logged. */
export function errorAnswer(
  request: JsonRpcRequest,
  error: unknown,
  env: RequestEnvironment,
  logger: Logger,
): JsonRpcResponse {
  if (error instanceof RoundRefused && error.httpStatus !== undefined) {
    env.overrideHttpStatus?.(error.httpStatus, error.httpHeaders ?? {});
  }
  if (error instanceof McpError) return errorResponse(request.id, error.code, error.message, error.data);
  logger.error(
    { method: request.method, id: request.id, err: error instanceof Error ? error.stack : String(error) },
    'handler failed',
  );
  return errorResponse(
    request.id,
    ErrorCode.InternalError,
    `Internal error while handling ${request.method}`,
  );
}

const isIntentFailure = (response: JsonRpcResponse): boolean =>
  'error' in response &&
  (response.error.data as { reason?: unknown } | undefined)?.reason === 'intent_not_recorded';

/**
 * An answer whose round could not be recorded is not sent: an audit gap would be silent otherwise. An answer that
 * already says the round's intent was not recorded (so nothing ran) is kept: it is the more precise of the two.
 */
export function unrecordedAnswer(
  response: { id?: JsonRpcResponse['id'] },
  error: unknown,
  logger: Logger,
): JsonRpcResponse {
  logger.error(
    { id: response.id, err: error instanceof Error ? error.stack : String(error) },
    'round observer failed',
  );
  if ('error' in response && isIntentFailure(response as JsonRpcResponse)) return response as JsonRpcResponse;
  // An observer that did not answer in time is named as such: an operator looks at the sink, not at the round.
  if (error instanceof HookTimeoutError)
    return errorResponse(response.id, error.code, error.message, error.data);
  return errorResponse(response.id, ErrorCode.InternalError, 'Internal error while recording the round');
}
