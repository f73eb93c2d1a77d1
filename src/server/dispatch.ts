// Transport-independent request handling: `_meta`, method table, schema checks, the MRTR pipeline, results.
import { type FlowJournal, type FlowRoundOutcome, runFlowRound } from '../flow/index.js';
import {
  describeSchemaErrors,
  ErrorCode,
  type Implementation,
  invalidParams,
  type JsonObject,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  LATEST_PROTOCOL_VERSION,
  McpError,
  META_SERVER_INFO,
  type MrtrMethod,
  precompileSchemaValidators,
  REQUEST_DEFINITION,
  RESULT_DEFINITION,
  type Result,
  type ServerCapabilities,
  SUPPORTED_PROTOCOL_VERSIONS,
  schemaValidator,
} from '../protocol/index.js';
import {
  clientSupports,
  type InputKind,
  InputRequired,
  type Principal,
  type RequestContext,
} from './context.js';
import { Deadline } from './deadline.js';
import { errorResponse } from './message.js';
import { openRound, type RoundInput, sealRound } from './mrtr.js';
import { paginate } from './pagination.js';
import type { MrtrOptions, Registry } from './registry.js';
import { legacyInitializeError, type RequestMeta, readRequestMeta } from './request-meta.js';
import type { RequestStateCodec, StateBinding } from './request-state.js';
import { RoundContext } from './round-context.js';

export interface Logger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

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
}

/** What the transport knows about one request. */
export interface RequestEnvironment {
  principal: Principal | undefined;
  signal: AbortSignal;
  /** Send a notification related to this request (HTTP upgrades the response to SSE on first use). */
  notify(notification: JsonRpcNotification): void;
}

const MAX_URI_LENGTH = 8192;

/** One request on its way through the MRTR methods. */
interface Call {
  request: JsonRpcRequest;
  params: JsonObject;
  meta: RequestMeta;
  env: RequestEnvironment;
}

/** Apply `next` now when the value is ready, or when it arrives: synchronous handlers stay synchronous. */
const thenOrNow = <T, U>(value: T | Promise<T>, next: (v: T) => U): U | Promise<U> =>
  value instanceof Promise ? value.then(next) : next(value);

export function isKnownMethod(method: string): boolean {
  return Object.hasOwn(REQUEST_DEFINITION, method);
}

/** One page of a list method's result, with its cache hints. */
function listPage<T extends { definition: unknown }>(
  field: string,
  items: readonly T[],
  cursor: unknown,
  pageSize: number,
  cacheable: { ttlMs: number; cacheScope: 'public' },
): Result {
  const { page, nextCursor } = paginate(items, cursor, pageSize);
  const result: Result = {
    resultType: 'complete',
    [field]: page.map((item) => item.definition),
    ...cacheable,
  };
  if (nextCursor !== undefined) result.nextCursor = nextCursor;
  return result;
}

export class Dispatcher {
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
  }

  capabilities(): ServerCapabilities {
    const caps: ServerCapabilities = {};
    if (this.registry.tools.size > 0) caps.tools = {};
    if (this.registry.prompts.size > 0) caps.prompts = {};
    if (this.registry.resources.size > 0 || this.registry.templates.length > 0) caps.resources = {};
    if (this.registry.prompts.size > 0 || this.registry.templates.length > 0) caps.completions = {};
    caps.logging = {};
    return caps;
  }

  /** Handle one request and always produce a response: errors become JSON-RPC errors, never exceptions. */
  async handle(request: JsonRpcRequest, env: RequestEnvironment): Promise<JsonRpcResponse> {
    return this.handleMaybeSync(request, env);
  }

  /**
   * `handle` without the promise when the response is ready at once (every step synchronous: no promise, no
   * microtask); else the promise. Never throws. For transports on the hot path; most callers want `handle`.
   */
  handleMaybeSync(
    request: JsonRpcRequest,
    env: RequestEnvironment,
  ): JsonRpcResponse | Promise<JsonRpcResponse> {
    try {
      if (request.method === 'initialize') throw legacyInitializeError(request.params);
      const meta = readRequestMeta(request.params);
      if (!isKnownMethod(request.method)) {
        throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${request.method}`);
      }
      this.validateRequest(request);
      const routed = this.route(request, meta, env);
      if (!(routed instanceof Promise)) return this.respond(request, routed);
      return routed
        .then((result) => this.respond(request, result))
        .catch((error: unknown) => this.toErrorResponse(request, error));
    } catch (error) {
      return this.toErrorResponse(request, error);
    }
  }

  private respond(request: JsonRpcRequest, result: Result): JsonRpcResponse {
    result._meta = { ...result._meta, [META_SERVER_INFO]: this.options.serverInfo };
    if (this.options.validateResults) this.validateResult(request.method, result);
    return { jsonrpc: '2.0', id: request.id, result };
  }

  private toErrorResponse(request: JsonRpcRequest, error: unknown): JsonRpcResponse {
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
    // inputResponses is checked key by key against what was asked (mrtr.ts), so unknown keys can be ignored.
    let subject: unknown = request;
    if ('inputResponses' in params) {
      const { inputResponses: _ignored, ...rest } = params;
      subject = { ...request, params: rest };
    }
    if (!validate(subject)) {
      throw invalidParams(`Invalid params: ${describeSchemaErrors(validate).replace(/^params\//, '')}`);
    }
  }

  private validateResult(method: string, result: Result): void {
    const definition =
      result.resultType === 'input_required' ? 'InputRequiredResult' : RESULT_DEFINITION[method]!;
    const validate = schemaValidator(definition);
    if (!validate(result)) {
      throw new Error(`result of ${method} does not match ${definition}: ${describeSchemaErrors(validate)}`);
    }
  }

  private route(
    request: JsonRpcRequest,
    meta: RequestMeta,
    env: RequestEnvironment,
  ): Promise<Result> | Result {
    const params = request.params ?? {};
    const reg = this.registry;
    const o = this.options;
    const cacheable = { ttlMs: o.listTtlMs, cacheScope: 'public' as const };
    switch (request.method) {
      case 'server/discover': {
        const result: Result = {
          resultType: 'complete',
          supportedVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
          capabilities: this.capabilities(),
          ...cacheable,
        };
        if (o.instructions !== undefined) result.instructions = o.instructions;
        return result;
      }
      case 'tools/list':
        return listPage('tools', [...reg.tools.values()], params.cursor, o.pageSize, cacheable);
      case 'prompts/list':
        return listPage('prompts', [...reg.prompts.values()], params.cursor, o.pageSize, cacheable);
      case 'resources/list':
        return listPage('resources', [...reg.resources.values()], params.cursor, o.pageSize, cacheable);
      case 'resources/templates/list':
        return listPage('resourceTemplates', reg.templates, params.cursor, o.pageSize, cacheable);
      case 'completion/complete':
        return this.complete({ request, params, meta, env });
      case 'tools/call':
        return this.callTool({ request, params, meta, env });
      case 'prompts/get':
        return this.getPrompt({ request, params, meta, env });
      case 'resources/read':
        return this.readResource({ request, params, meta, env });
      default:
        throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${request.method}`);
    }
  }

  private callTool(call: Call): Result | Promise<Result> {
    const { params } = call;
    const name = params.name as string;
    const tool = this.registry.tools.get(name);
    if (!tool) throw invalidParams(`Unknown tool: ${name}`, { name });
    const args = params.arguments ?? {};
    const result = this.runRound(call, 'tools/call', name, args, tool.mrtr, (ctx) => {
      const checked = tool.args.check(args);
      if (!checked.ok) {
        return {
          content: [{ type: 'text', text: `Invalid arguments for tool ${name}: ${checked.message}` }],
          isError: true,
        };
      }
      // Not awaited here: a synchronous handler then completes without an extra turn of the event loop.
      return tool.handler(checked.value as Record<string, unknown>, ctx);
    });
    const check = tool.checkOutput;
    if (!check) return result;
    const checkOutput = (r: Result): Result => {
      if (r.resultType !== 'complete' || r.isError === true) return r;
      const problem = check(r.structuredContent);
      // The tool broke its own contract: a server bug, reported as -32603 (the detail goes to the log).
      if (problem)
        throw new Error(`tool ${name} returned structuredContent that breaks its outputSchema: ${problem}`);
      return r;
    };
    return thenOrNow(result, checkOutput);
  }

  private getPrompt(call: Call): Result | Promise<Result> {
    const { params } = call;
    const name = params.name as string;
    const prompt = this.registry.prompts.get(name);
    if (!prompt) throw invalidParams(`Unknown prompt: ${name}`, { name });
    const args = (params.arguments ?? {}) as Record<string, string>;
    for (const arg of prompt.definition.arguments ?? []) {
      if (arg.required && typeof args[arg.name] !== 'string') {
        throw invalidParams(`Invalid params: prompt ${name} requires argument "${arg.name}"`);
      }
    }
    return this.runRound(call, 'prompts/get', name, args, prompt.mrtr, (ctx) => prompt.handler(args, ctx));
  }

  private readResource(call: Call): Result | Promise<Result> {
    const { params } = call;
    const uri = params.uri as string;
    // Template matching is a regular expression: bound its input before it runs.
    if (uri.length > MAX_URI_LENGTH)
      throw invalidParams(`Invalid params: uri is longer than ${MAX_URI_LENGTH} characters`);
    const found = this.registry.findResource(uri);
    if (!found) throw invalidParams('Resource not found', { uri });
    const result = this.runRound(call, 'resources/read', uri, null, found.mrtr, (ctx) =>
      found.handler(uri, ctx, found.variables),
    );
    const withCacheHints = (r: Result): Result => {
      if (r.resultType === 'complete') {
        // A result reached through MRTR rounds depends on answers outside the cache key: never cacheable.
        const retried = params.requestState !== undefined;
        r.ttlMs = retried ? 0 : this.options.listTtlMs;
        r.cacheScope = retried || call.env.principal !== undefined ? 'private' : 'public';
      }
      return r;
    };
    return thenOrNow(result, withCacheHints);
  }

  private async complete(call: Call): Promise<Result> {
    const { params } = call;
    const ref = params.ref as { type: string; name?: string; uri?: string };
    const argument = params.argument as { name: string; value: string };
    const context = ((params.context as JsonObject | undefined)?.arguments ?? {}) as Record<string, string>;
    let completer: ((value: string, ctx: Record<string, string>) => unknown) | undefined;
    // A completer runs under its prompt's or template's time limit, like the handler it completes for.
    let owner: { mrtr: MrtrOptions };
    if (ref.type === 'ref/prompt') {
      const prompt = this.registry.prompts.get(ref.name ?? '');
      if (!prompt) throw invalidParams(`Unknown prompt: ${ref.name}`);
      completer = prompt.completions.get(argument.name);
      owner = prompt;
    } else if (ref.type === 'ref/resource') {
      const template = this.registry.templates.find((t) => t.definition.uriTemplate === ref.uri);
      if (!template) throw invalidParams(`Unknown resource template: ${ref.uri}`);
      completer = template.completions.get(argument.name);
      owner = template;
    } else {
      throw invalidParams(`Invalid params: unknown completion reference type ${String(ref.type)}`);
    }
    const suggested = completer ? completer(argument.value, context) : { values: [] };
    const timeoutMs = owner.mrtr.timeoutMs ?? this.options.handlerTimeoutMs;
    const found = (
      suggested instanceof Promise
        ? await new Deadline(timeoutMs).race(suggested, () =>
            this.timedOut('completion/complete', `completion of ${argument.name}`, timeoutMs, call),
          )
        : suggested
    ) as { values: string[]; total?: number; hasMore?: boolean };
    const completion: JsonObject = { values: found.values.slice(0, 100) };
    if (found.total !== undefined) completion.total = found.total;
    if (found.hasMore !== undefined || found.values.length > 100) completion.hasMore = found.hasMore ?? true;
    return { resultType: 'complete', completion };
  }

  /** One MRTR round: open state, run the handler, then either seal the next round or return the complete result. */
  private runRound(
    call: Call,
    method: MrtrMethod,
    target: string,
    args: unknown,
    mrtr: MrtrOptions,
    invoke: (ctx: RequestContext) => unknown,
  ): Result | Promise<Result> {
    const { request, params, meta, env } = call;
    const binding: StateBinding = { principal: env.principal, method, target, arguments: args };
    const logger = this.options.logger;
    const unsealedAnswers = mrtr.unsealedAnswers ?? false;
    const round: RoundInput = openRound(params, this.options.codec, binding, unsealedAnswers, (reason) =>
      logger.warn({ method, target, id: request.id, reason }, 'requestState rejected'),
    );
    const supports = (kind: InputKind) => clientSupports(meta.clientCapabilities, kind);
    const deadline = new Deadline(mrtr.timeoutMs ?? this.options.handlerTimeoutMs);
    let finished: Result | Promise<Result>;
    try {
      const flow = runFlowRound(
        {
          journal: round.journal,
          inputResponses: round.inputResponses,
          capabilities: meta.clientCapabilities,
          supports,
        },
        (getAsk) => invoke(new RoundContext(request, meta, env, round, getAsk, deadline)),
      );
      // Synchronous all the way when the handler is: no promise, no microtask, no timer.
      finished = thenOrNow(flow, (f: FlowRoundOutcome<unknown>) =>
        this.finishRound(f, round, binding, meta, mrtr, method, target),
      );
    } catch (error) {
      deadline.release();
      throw error;
    }
    if (!(finished instanceof Promise)) {
      deadline.release();
      return finished;
    }
    return deadline.race(finished, () => this.timedOut(method, target, deadline.timeoutMs, call));
  }

  /** The answer for a round (or a completion) still running when its time limit passed. */
  private timedOut(method: string, target: string, timeoutMs: number, { request, env }: Call): Result {
    // A request the client already gave up on is nobody's timeout: its answer is dropped by the transport.
    if (!env.signal.aborted)
      this.options.logger.warn({ method, target, id: request.id, timeoutMs }, 'handler timed out');
    const message = `${target} did not finish within ${timeoutMs} ms`;
    // Like any tool failure, a tool's timeout is a result the model can read (server/tools.mdx "Error Handling").
    if (method === 'tools/call')
      return { resultType: 'complete', content: [{ type: 'text', text: message }], isError: true };
    throw new McpError(ErrorCode.InternalError, `Request timed out: ${message}`);
  }

  private finishRound(
    flow: FlowRoundOutcome<unknown>,
    round: RoundInput,
    binding: StateBinding,
    meta: RequestMeta,
    mrtr: MrtrOptions,
    method: MrtrMethod,
    target: string,
  ): Result {
    const unsealedAnswers = mrtr.unsealedAnswers ?? false;
    if (flow.kind === 'ended') {
      // Decline, cancel or too many invalid answers: a clear outcome, not an exception.
      if (method === 'tools/call')
        return {
          resultType: 'complete',
          content: [{ type: 'text', text: flow.error.message }],
          isError: true,
        };
      throw new McpError(ErrorCode.InvalidRequest, flow.error.message, { reason: flow.error.reason });
    }
    const seal = (outcome: InputRequired, journal: FlowJournal | undefined): Result => ({
      resultType: 'input_required',
      ...sealRound(outcome, round, {
        caps: meta.clientCapabilities,
        codec: this.options.codec,
        binding,
        maxRounds: mrtr.maxRounds ?? this.options.maxRounds,
        unsealedAnswers,
        journal,
        ttlMs: mrtr.stateTtlMs,
        validateShape: this.options.validateResults,
      }),
    });
    if (flow.kind === 'input_required')
      return seal(new InputRequired(flow.inputRequests, undefined, false), flow.journal);
    const outcome = flow.result;
    if (outcome instanceof InputRequired) {
      // Mixing would seal a journal out of step with the questions asked: answers could land on the wrong question.
      if (flow.usedAsk)
        throw new Error(`handler for ${method} ${target} used ctx.ask and also returned inputRequired()`);
      return seal(outcome, undefined);
    }
    if (typeof outcome !== 'object' || outcome === null) {
      throw new Error(`handler for ${method} ${target} returned ${String(outcome)} instead of a result`);
    }
    return { ...(outcome as JsonObject), resultType: 'complete' };
  }
}

export { LATEST_PROTOCOL_VERSION };
