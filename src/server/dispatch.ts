// The transport-independent core: validate a request (`_meta`, method, schema) → route it to its method → respond
// (`_meta` serverInfo, optional result validation, errors as JSON-RPC errors). Methods live in methods/, the MRTR
// round logic in round/.
import {
  type Implementation,
  type JsonRpcRequest,
  type JsonRpcResponse,
  MRTR_METHODS,
  precompileSchemaValidators,
  REQUEST_DEFINITION,
  RESULT_DEFINITION,
  type Result,
} from '../protocol/index.js';
import type { SharedStore } from '../stores/index.js';
import type { Catalog } from './catalog/catalog.js';
import type { ToolEntry } from './catalog/entries.js';
import type { AskConnector, Principal } from './context.js';
import { SERVER_DEFAULTS } from './defaults.js';
import type { Logger, RequestEnvironment } from './environment.js';
import type { HeaderParam } from './header-params.js';
import { type MaybePromise, thenOrNow } from './maybe-async.js';
import { type Call, type Core, type FoundTool, METHODS } from './methods/index.js';
import type { RequestHandler } from './request-handler.js';
import { legacyInitializeError } from './request-meta.js';
import type { RequestStateCodec } from './request-state.js';
import { checkResultShape } from './result-shape.js';
import type { RoundGuard } from './round/guard.js';
import type { RoundLink } from './round/link.js';
import { notifyObservers } from './round/notify.js';
import type { RoundObserver } from './round/observer.js';
import { type CallFront, readCall } from './round/read-call.js';
import type { RoundSpan } from './round/round-span.js';
import { RoundRunner } from './round/runner.js';
import type { RoundTrace } from './round/trace.js';
import { OpenTasks } from './tasks/open-tasks.js';
import { TaskBook } from './tasks/task-book.js';
import { TaskService } from './tasks/task-service.js';

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
  /** Links in every round's flow before the handler (the policy position). */
  links?: readonly RoundLink[];
  /** The tasks extension: where tasks are kept and how long; undefined offers no tasks. */
  tasks?: TasksSetup;
  /** What `ctx.ask.connect` calls: the connections attached to the server. */
  connector?: () => AskConnector | undefined;
}

export interface TasksSetup {
  store: SharedStore;
  ttlMs: number;
  pollIntervalMs: number;
  leaseMs: number;
  maxPerPrincipal: number;
  /** Told the flow of every task its caller cancelled (the human controls withdraw its approval requests). */
  cancelled?: (flowId: string) => void;
}

/** The methods that run as rounds (round/runner.ts): the only ones observers are told about. */
const MRTR_METHOD_SET: ReadonlySet<string> = new Set(MRTR_METHODS);
const KNOWN_METHODS: ReadonlySet<string> = new Set(Object.keys(METHODS));
const notFound = (method: string) => `Method not found: ${method}`;

type KeptTool = FoundTool & { caller: Principal | undefined };

export class Dispatcher implements RequestHandler {
  private readonly core: Core;
  private readonly front: CallFront;
  /** The tool each request's front found for its header parameters, kept for its method (keyed by the request's env). */
  private readonly found = new WeakMap<RequestEnvironment, KeptTool>();
  /**
   * The latest request's find, outside the WeakMap: a synchronous request takes it back at once, and a WeakMap entry
   * per request measured ~1 % of the server's CPU. A request that took over the slot moves the one before to the map.
   */
  private latest: { env: RequestEnvironment; kept: KeptTool } | undefined;

  constructor(
    private readonly catalog: Catalog,
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
    const maxInputDepth = options.maxInputDepth ?? SERVER_DEFAULTS.maxInputDepth;
    // METHODS has no prototype, so a method named like an Object member finds nothing.
    this.front = { methods: KNOWN_METHODS, notFound, maxInputDepth, validate: true };
    const rounds = new RoundRunner({
      codec: options.codec,
      logger: options.logger,
      maxRounds: options.maxRounds,
      validateResults: options.validateResults,
      handlerTimeoutMs: options.handlerTimeoutMs,
      hookTimeoutMs: options.hookTimeoutMs,
      maxInputDepth,
      guards: options.guards,
      observers: options.observers,
      links: options.links,
      serverInfo: options.serverInfo,
      ...(options.connector ? { connector: options.connector } : {}),
    });
    this.core = {
      catalog,
      serverInfo: options.serverInfo,
      instructions: options.instructions,
      pageSize: options.pageSize,
      listTtlMs: options.listTtlMs,
      handlerTimeoutMs: options.handlerTimeoutMs,
      logger: options.logger,
      guards: rounds.guards,
      hookTimeoutMs: rounds.hookTimeoutMs,
      rounds,
      tasks: options.tasks ? this.taskService(options.tasks, rounds) : undefined,
    };
  }

  /** Stop the tasks' background rounds and checks (the server is closing). */
  close(): void {
    this.core.tasks?.close();
  }

  private taskService(setup: TasksSetup, rounds: RoundRunner): TaskService {
    const book = new TaskBook(setup.store);
    return new TaskService({
      book,
      open: new OpenTasks(setup.store, book, setup.maxPerPrincipal),
      // A task's rounds go the way a client's would: through this dispatcher, observed and guarded.
      route: (request, env) => this.handleRequest(request, env),
      record: (event) => notifyObservers(rounds.observers, event, rounds.hookTimeoutMs),
      logger: this.options.logger,
      ttlMs: setup.ttlMs,
      pollIntervalMs: setup.pollIntervalMs,
      leaseMs: setup.leaseMs,
      ...(setup.cancelled ? { cancelled: setup.cancelled } : {}),
    });
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
    // MRTR methods run as rounds: observed, their results checked inside the round before guards commit them. The
    // others are answered the same way, unobserved, their results checked by route.
    return this.core.rounds.respond(request, env, (trace, span) => this.route(request, env, trace, span));
  }

  /**
   * The tool as this caller finds it: one hidden from the caller has no header parameters to check. What is found is
   * kept for the request's method, so that the request resolves its tool once.
   */
  headerParams(tool: string, env: RequestEnvironment): MaybePromise<HeaderParam[] | undefined> {
    const found = this.catalog.findTool(tool, env);
    if (found instanceof Promise) return found.then((entry) => this.keep(env, tool, entry));
    return this.keep(env, tool, found);
  }

  private keep(
    env: RequestEnvironment,
    name: string,
    entry: ToolEntry | undefined,
  ): HeaderParam[] | undefined {
    const kept: KeptTool = { name, entry, caller: env.principal };
    const before = this.latest;
    if (before !== undefined && before.env !== env) this.found.set(before.env, before.kept);
    this.latest = { env, kept };
    return entry?.headerParams;
  }

  /** The tool the request's front found, taken once; only for the same name and the same caller. */
  private takeFound(request: JsonRpcRequest, env: RequestEnvironment): FoundTool | undefined {
    let found: KeptTool | undefined;
    if (this.latest?.env === env) {
      found = this.latest.kept;
      this.latest = undefined;
    } else {
      found = this.found.get(env);
      if (found === undefined) return undefined;
      this.found.delete(env);
    }
    return found.name === request.params?.name && found.caller === env.principal ? found : undefined;
  }

  /**
   * Check the request (depth, `_meta`, method, schema), find its method and run it; a result other than a round's is
   * checked here when the server validates results. Throws what the client is told.
   */
  private route(
    request: JsonRpcRequest,
    env: RequestEnvironment,
    trace: RoundTrace | undefined,
    span?: RoundSpan,
  ): MaybePromise<Result> {
    if (request.method === 'initialize') throw legacyInitializeError(request.params);
    // What the front found is taken first, so that a request refused below leaves nothing behind.
    const found = request.method === 'tools/call' ? this.takeFound(request, env) : undefined;
    const call: Call = readCall(request, env, trace, this.front, span);
    if (found !== undefined) call.found = found;
    const routed = METHODS[request.method]!(this.core, call);
    // An MRTR round checks its result inside the round, before guards commit it; any other method here.
    if (!this.options.validateResults || MRTR_METHOD_SET.has(request.method)) return routed;
    return thenOrNow(routed, (result) => {
      checkResultShape(request.method, result);
      return result;
    });
  }
}
