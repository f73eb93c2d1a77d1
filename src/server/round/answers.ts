// How a request's outcome becomes its JSON-RPC answer, in one place: a result with the server's `_meta`, or an error
// that names what went wrong (internals logged, not sent); an observed round's event is recorded before the answer
// goes, and a round that could not be recorded gets no answer but a -32603.
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
import { type MaybePromise, thenOrNow } from '../maybe-async.js';
import { HookTimeoutError } from '../time-bound.js';
import { Failed } from './failed.js';
import { notifyObservers } from './notify.js';
import type { RoundObserver } from './observer.js';
import type { RoundSpan } from './round-span.js';
import type { RoundTrace } from './trace.js';

/** What every answer needs: who to tell, how long they may take, where to log, the server's name. */
export interface AnswerSetup {
  readonly logger: Logger;
  readonly serverInfo: Implementation | undefined;
  readonly observers: readonly RoundObserver[];
  readonly hookTimeoutMs: number;
}

/**
 * `route` run and answered, observed when a trace is given; a round whose trace could not be made is answered with
 * why. Never throws.
 */
export function replyTo(
  request: JsonRpcRequest,
  env: RequestEnvironment,
  trace: RoundTrace | Failed | undefined,
  route: (trace: RoundTrace | undefined, span?: RoundSpan) => MaybePromise<Result>,
  span: RoundSpan | undefined,
  setup: AnswerSetup,
): MaybePromise<JsonRpcResponse> {
  let routed: MaybePromise<Result> | Failed;
  if (trace instanceof Failed) routed = trace;
  else {
    try {
      routed = route(trace, span);
    } catch (error) {
      routed = new Failed(error);
    }
  }
  // The one way out. A request or environment nobody could read (a caller of run() that passed a broken one) is
  // answered too, not thrown.
  const answer = (outcome: Result | Failed) =>
    answerOf(
      request ?? ({} as JsonRpcRequest),
      env ?? ({} as RequestEnvironment),
      outcome,
      trace instanceof Failed ? undefined : trace,
      span,
      setup,
    );
  if (!(routed instanceof Promise)) return answer(routed);
  return routed.then(answer, (error: unknown) => answer(new Failed(error)));
}

/**
 * The answer to `request`: its result, or the error it failed with; with a trace, the round's event is recorded
 * first and the answer waits for it; with a span, the span ends once the answer is known. Never throws.
 */
export function answerOf(
  request: JsonRpcRequest,
  env: RequestEnvironment,
  outcome: Result | Failed,
  trace: RoundTrace | undefined,
  span: RoundSpan | undefined,
  setup: AnswerSetup,
): MaybePromise<JsonRpcResponse> {
  let answered: MaybePromise<JsonRpcResponse>;
  if (!(outcome instanceof Failed)) {
    const result = outcome;
    if (setup.serverInfo !== undefined)
      result._meta = { ...result._meta, [META_SERVER_INFO]: setup.serverInfo };
    const response: JsonRpcResponse = { jsonrpc: '2.0', id: request.id, result };
    answered = trace === undefined ? response : recorded(response, trace, undefined, setup);
  } else if (outcome.unrecorded) answered = unrecordedAnswer(request, outcome.error, setup.logger);
  else {
    const response = errorAnswer(request, outcome.error, env, setup.logger);
    answered = trace === undefined ? response : recorded(response, trace, outcome.error, setup);
  }
  if (span === undefined) return answered;
  return thenOrNow(answered, (response) => {
    span.finish(response);
    return response;
  });
}

/** An McpError as sent; a guard's HTTP status (429 and Retry-After) passed on; anything else -32603, logged. */
function errorAnswer(
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

/** The round's event told to every observer; the answer held until they have it (or replaced when one failed). */
function recorded(
  response: JsonRpcResponse,
  trace: RoundTrace,
  error: unknown,
  setup: AnswerSetup,
): MaybePromise<JsonRpcResponse> {
  let pending: Promise<void> | undefined;
  try {
    // Why the request failed, remembered before the event names it.
    if (error !== undefined) trace.failed(error);
    pending = notifyObservers(setup.observers, trace.toEvent(response), setup.hookTimeoutMs);
  } catch (failure) {
    return unrecordedAnswer(response, failure, setup.logger);
  }
  if (pending === undefined) return response;
  return pending.then(
    () => response,
    (failure: unknown) => unrecordedAnswer(response, failure, setup.logger),
  );
}

const isIntentFailure = (response: JsonRpcResponse): boolean =>
  'error' in response &&
  (response.error.data as { reason?: unknown } | undefined)?.reason === 'intent_not_recorded';

/**
 * An answer whose round could not be recorded is not sent: an audit gap would be silent otherwise. An answer that
 * already says the round's intent was not recorded (so nothing ran) is kept: it is the more precise of the two.
 */
function unrecordedAnswer(
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
