// The transport-independent core: validate a request (`_meta`, method, schema) → route it to its method → respond
// (`_meta` serverInfo, optional result validation, errors as JSON-RPC errors). Methods live in methods/, the MRTR
// round logic in round/.
import {
  describeSchemaErrors,
  ErrorCode,
  errorResponse,
  type Implementation,
  invalidParams,
  type JsonRpcRequest,
  type JsonRpcResponse,
  McpError,
  META_SERVER_INFO,
  MRTR_METHODS,
  precompileSchemaValidators,
  REQUEST_DEFINITION,
  RESULT_DEFINITION,
  type Result,
  RoundRefused,
  schemaValidator,
} from '../protocol/index.js';
import { SERVER_DEFAULTS } from './defaults.js';
import type { Logger, RequestEnvironment } from './environment.js';
import type { HeaderParam } from './header-params.js';
import { checkInputBounds } from './input-bounds.js';
import { type MaybePromise, thenOrNow } from './maybe-async.js';
import { type Call, type Core, METHODS } from './methods/index.js';
import type { Registry } from './registry.js';
import type { RequestHandler } from './request-handler.js';
import { legacyInitializeError, readRequestMeta } from './request-meta.js';
import type { RequestStateCodec } from './request-state.js';
import { checkResultShape } from './result-shape.js';
import type { RoundGuard } from './round/guard.js';
import { askObserversForRoom, notifyObservers, recordIntent } from './round/notify.js';
import type { RoundIntent, RoundObserver } from './round/observer.js';
import { RoundPipeline } from './round/pipeline.js';
import { HookTimeoutError } from './round/time-bound.js';
import { RoundTrace } from './round/trace.js';

export interface DispatchOptions {
  serverInfo: Implementation;
  instructions?: string;
  codec: RequestStateCodec;
  logger: Logger;
  pageSize: number;
  maxRounds: number;
  /** Cache hints on list results and discovery (server/utilities/caching.mdx). */
  listTtlMs: number;
  /** Validate every result against schema.json before sending it (tests and the conformance fixture turn it on). */
  validateResults: boolean;
  /** How long one asynchronous round of a handler may run, unless the handler sets its own timeoutMs. */
  handlerTimeoutMs: number;
  /** How long a guard's or an observer's promise may take before the round fails closed (default 10 s). */
  hookTimeoutMs?: number;
  /** How deep arguments, answers and `_meta` may nest (default 64). */
  maxInputDepth?: number;
  /** Checks every MRTR round passes before and after its handler runs, in order. */
  guards?: readonly RoundGuard[];
  /** Told the outcome of every MRTR request, refused ones included; the answer waits for their promises. */
  observers?: readonly RoundObserver[];
}

const isIntentFailure = (response: JsonRpcResponse): boolean =>
  'error' in response &&
  (response.error.data as { reason?: unknown } | undefined)?.reason === 'intent_not_recorded';

/** The methods that run the round pipeline: the only ones observers are told about. */
const MRTR_METHOD_SET: ReadonlySet<string> = new Set(MRTR_METHODS);

export class Dispatcher implements RequestHandler {
  private readonly core: Core;
  private readonly observers: readonly RoundObserver[];
  private readonly hookTimeoutMs: number;
  private readonly maxInputDepth: number;
  /** Tells every observer a round's intent (RoundTrace.intend); one closure for all rounds. */
  private readonly recordIntent = (intent: RoundIntent) =>
    recordIntent(this.observers, intent, this.hookTimeoutMs);

  constructor(
    private readonly registry: Registry,
    private readonly options: DispatchOptions,
  ) {
    precompileSchemaValidators([
      ...Object.values(REQUEST_DEFINITION),
      ...(options.validateResults ? [...Object.values(RESULT_DEFINITION), 'InputRequiredResult'] : []),
      'InputRequest',
      'ElicitResult',
      'CreateMessageResult',
      'ListRootsResult',
    ]);
    this.observers = options.observers ?? [];
    this.hookTimeoutMs = options.hookTimeoutMs ?? SERVER_DEFAULTS.hookTimeoutMs;
    this.maxInputDepth = options.maxInputDepth ?? SERVER_DEFAULTS.maxInputDepth;
    this.core = {
      registry,
      serverInfo: options.serverInfo,
      instructions: options.instructions,
      pageSize: options.pageSize,
      listTtlMs: options.listTtlMs,
      handlerTimeoutMs: options.handlerTimeoutMs,
      logger: options.logger,
      guards: options.guards ?? [],
      hookTimeoutMs: this.hookTimeoutMs,
      pipeline: new RoundPipeline({
        codec: options.codec,
        logger: options.logger,
        maxRounds: options.maxRounds,
        validateResults: options.validateResults,
        handlerTimeoutMs: options.handlerTimeoutMs,
        hookTimeoutMs: this.hookTimeoutMs,
        guards: options.guards ?? [],
      }),
    };
  }

  /** Handle one request and always produce a response: errors become JSON-RPC errors, never exceptions. */
  async handle(request: JsonRpcRequest, env: RequestEnvironment): Promise<JsonRpcResponse> {
    return this.handleRequest(request, env);
  }

  /**
   * `handle` without the promise when the response is ready at once (every step synchronous: no promise, no
   * microtask); else the promise. Never throws. For transports on the hot path; most callers want `handle`.
   */
  handleRequest(request: JsonRpcRequest, env: RequestEnvironment): MaybePromise<JsonRpcResponse> {
    if (this.observers.length === 0 || !MRTR_METHOD_SET.has(request.method)) {
      return this.answer(request, env, undefined);
    }
    let admitted: Promise<unknown> | undefined;
    try {
      admitted = askObserversForRoom(this.observers, this.hookTimeoutMs);
    } catch (error) {
      return this.unobserved(request, error);
    }
    if (admitted === undefined) return this.observedRound(request, env);
    // An observer has no room (an audit queue full of events waiting for the disk): the round waits to start.
    return admitted.then(
      () => this.observedRound(request, env),
      (error: unknown) => this.unobserved(request, error),
    );
  }

  private observedRound(request: JsonRpcRequest, env: RequestEnvironment): MaybePromise<JsonRpcResponse> {
    const trace = new RoundTrace(
      request.id,
      request.method,
      request.params,
      env.principal,
      this.recordIntent,
      env.bridged,
    );
    return thenOrNow(this.answer(request, env, trace), (response) => this.observed(trace, response));
  }

  headerParams(tool: string): HeaderParam[] | undefined {
    return this.registry.tools.get(tool)?.headerParams;
  }

  private answer(
    request: JsonRpcRequest,
    env: RequestEnvironment,
    trace: RoundTrace | undefined,
  ): MaybePromise<JsonRpcResponse> {
    try {
      if (request.method === 'initialize') throw legacyInitializeError(request.params);
      // Before anything reads them: arguments, answers and `_meta` nest no deeper than every later step can bear.
      checkInputBounds(request.params, this.maxInputDepth);
      const meta = readRequestMeta(request.params);
      // METHODS has no prototype, so a method named like an Object member finds nothing.
      const method = METHODS[request.method];
      if (!method) throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${request.method}`);
      this.validateRequest(request);
      const call: Call = { request, params: request.params ?? {}, meta, env, trace };
      const routed = method(this.core, call);
      if (!(routed instanceof Promise)) return this.respond(request, routed);
      return routed
        .then((result) => this.respond(request, result))
        .catch((error: unknown) => this.toErrorResponse(request, error, env, trace));
    } catch (error) {
      return this.toErrorResponse(request, error, env, trace);
    }
  }

  /** Tell every observer; the answer waits for those that return a promise (a durable audit sink does). */
  private observed(trace: RoundTrace, response: JsonRpcResponse): MaybePromise<JsonRpcResponse> {
    let pending: Promise<void> | undefined;
    try {
      pending = notifyObservers(this.observers, trace.toEvent(response), this.hookTimeoutMs);
    } catch (error) {
      return this.unobserved(response, error);
    }
    if (pending === undefined) return response;
    return pending.then(
      () => response,
      (error: unknown) => this.unobserved(response, error),
    );
  }

  /**
   * An answer whose round could not be recorded is not sent: an audit gap would be silent otherwise. An answer that
   * already says the round's intent was not recorded (so nothing ran) is kept: it is the more precise of the two.
   */
  private unobserved(response: { id?: JsonRpcResponse['id'] }, error: unknown): JsonRpcResponse {
    this.options.logger.error(
      { id: response.id, err: error instanceof Error ? error.stack : String(error) },
      'round observer failed',
    );
    if ('error' in response && isIntentFailure(response as JsonRpcResponse))
      return response as JsonRpcResponse;
    // An observer that did not answer in time is named as such: an operator looks at the sink, not at the round.
    if (error instanceof HookTimeoutError)
      return errorResponse(response.id, error.code, error.message, error.data);
    return errorResponse(response.id, ErrorCode.InternalError, 'Internal error while recording the round');
  }

  private respond(request: JsonRpcRequest, result: Result): JsonRpcResponse {
    result._meta = { ...result._meta, [META_SERVER_INFO]: this.options.serverInfo };
    // MRTR results were checked inside the pipeline, before guards committed them.
    if (this.options.validateResults && !MRTR_METHOD_SET.has(request.method))
      checkResultShape(request.method, result);
    return { jsonrpc: '2.0', id: request.id, result };
  }

  private toErrorResponse(
    request: JsonRpcRequest,
    error: unknown,
    env: RequestEnvironment,
    trace: RoundTrace | undefined,
  ): JsonRpcResponse {
    trace?.failed(error);
    if (error instanceof RoundRefused && error.httpStatus !== undefined) {
      env.overrideHttpStatus?.(error.httpStatus, error.httpHeaders ?? {});
    }
    if (error instanceof McpError) return errorResponse(request.id, error.code, error.message, error.data);
    this.options.logger.error(
      { method: request.method, id: request.id, err: error instanceof Error ? error.stack : String(error) },
      'handler failed',
    );
    return errorResponse(
      request.id,
      ErrorCode.InternalError,
      `Internal error while handling ${request.method}`,
    );
  }

  private validateRequest(request: JsonRpcRequest): void {
    const validate = schemaValidator(REQUEST_DEFINITION[request.method]!);
    const params = request.params ?? {};
    // inputResponses is checked key by key against what was asked (round/state.ts), so unknown keys can be ignored.
    let subject: unknown = request;
    if ('inputResponses' in params) {
      const { inputResponses: _ignored, ...rest } = params;
      subject = { ...request, params: rest };
    }
    if (!validate(subject)) {
      throw invalidParams(`Invalid params: ${describeSchemaErrors(validate).replace(/^params\//, '')}`);
    }
  }
}
