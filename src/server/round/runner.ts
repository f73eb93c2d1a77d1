// The whole MRTR round as one unit: ask the observers for room, read the call, run the round's chain (chain.ts:
// screen, open the state, admit, record the intent, run, seal or complete, commit), and tell the observers the event.
// The dispatcher runs every tools/call, prompts/get and resources/read through it; anything else that answers MRTR
// requests (a gateway whose tools live upstream) runs its rounds through the same unit and gets every guard, every
// observer and the state codec without re-building any of them.
import {
  type Implementation,
  type JsonRpcRequest,
  type JsonRpcResponse,
  MRTR_METHODS,
  type MrtrMethod,
  type Result,
} from '../../protocol/index.js';
import type { AskConnector, RequestContext } from '../context.js';
import { SERVER_DEFAULTS } from '../defaults.js';
import { type Logger, type RequestEnvironment, stderrLogger } from '../environment.js';
import type { HandlerOptions } from '../handlers.js';
import { type MaybePromise, thenOrNow } from '../maybe-async.js';
import type { RequestStateCodec } from '../request-state.js';
import { errorAnswer, resultAnswer, unrecordedAnswer } from './answers.js';
import { roundChain } from './chain.js';
import type { RoundGuard, RoundTool } from './guard.js';
import { composeRound, type RoundLink } from './link.js';
import { askObserversForRoom, notifyObservers, recordIntent } from './notify.js';
import type { RoundIntent, RoundObserver } from './observer.js';
import { type CallFront, readCall } from './read-call.js';
import { type Call, Round } from './round.js';
import { type RoundSpan, startRoundSpan } from './round-span.js';
import { RoundTrace } from './trace.js';

export interface RoundRunnerOptions {
  /** Seals and opens every round's requestState (e.g. `new SealedStateCodec({ keyring, audience })`). */
  codec: RequestStateCodec;
  /** Checks every round passes before and after its handler runs, in order. */
  guards?: readonly RoundGuard[];
  /** Told every round's intent and outcome, refused ones included; the answer waits for their promises. */
  observers?: readonly RoundObserver[];
  /** Links in the flow before the handler (the policy position): they may ask with `round.ctx`, answer or pass. */
  links?: readonly RoundLink[];
  logger?: Logger;
  /** Most input_required rounds one call may take, unless its entry says otherwise (default 10). */
  maxRounds?: number;
  /** How long one round of a handler may run, unless its entry sets `timeoutMs` (default 120 s). */
  handlerTimeoutMs?: number;
  /** How long a guard's or an observer's promise may take before the round fails closed (default 10 s). */
  hookTimeoutMs?: number;
  /** How deep arguments, answers and `_meta` may nest (default 64); checked by `run`, before anything reads them. */
  maxInputDepth?: number;
  /** Check every result and question against the official schema before it is sent (development and tests). */
  validateResults?: boolean;
  /** Put into every answer's `_meta` (the server's name and version), as the dispatcher does. */
  serverInfo?: Implementation;
  /** What `ctx.ask.connect` calls: the connections attached to the server (read when a handler connects). */
  connector?: () => AskConnector | undefined;
}

/** What one MRTR request resolved to: the target, what its state is bound to, and the handler that answers it. */
export interface RoundEntry {
  /** Tool name, prompt name or resource URI. */
  target: string;
  /** What the sealed state is bound to besides the target (default: the request's `arguments`). */
  arguments?: unknown;
  /** The handler's MRTR options (time limit, round cap, requiredScopes, sensitive fields, …). */
  options?: HandlerOptions;
  /** The handler: a result, `inputRequired(...)`, or questions asked with `ctx.ask` (a promise of either). */
  invoke(ctx: RequestContext): unknown;
  /** The last word on a complete result (an output check), applied before guards commit it. */
  finalize?(result: Result): Result;
  /** What `ctx.startTask()` does in this round (tools that may become tasks). */
  startTask?(): void;
  /** The tool entry a tools/call resolved to: carried to the guards (`GuardedRound.tool`), not looked up again. */
  tool?: RoundTool;
}

/** One MRTR request on its way: the request, its params and `_meta`, the transport's environment. */
export type RoundCall = Call;

const MRTR_METHOD_SET: ReadonlySet<string> = new Set(MRTR_METHODS);
const notMrtr = (method: string) =>
  `Method not found: ${method} is not an MRTR method (tools/call, prompts/get, resources/read)`;

export class RoundRunner {
  readonly guards: readonly RoundGuard[];
  readonly observers: readonly RoundObserver[];
  readonly hookTimeoutMs: number;
  /** The round's links, composed once (chain.ts lists them in order). */
  private readonly chain: (round: Round) => MaybePromise<Result>;
  private readonly logger: Logger;
  private readonly front: CallFront;
  private readonly serverInfo: Implementation | undefined;
  /** Tells every observer a round's intent (RoundTrace.intend); one closure for all rounds. */
  private readonly recordIntent = (intent: RoundIntent) =>
    recordIntent(this.observers, intent, this.hookTimeoutMs);

  constructor(options: RoundRunnerOptions) {
    this.guards = options.guards ?? [];
    this.observers = options.observers ?? [];
    this.hookTimeoutMs = options.hookTimeoutMs ?? SERVER_DEFAULTS.hookTimeoutMs;
    this.logger = options.logger ?? stderrLogger;
    this.front = {
      methods: MRTR_METHOD_SET,
      notFound: notMrtr,
      maxInputDepth: options.maxInputDepth ?? SERVER_DEFAULTS.maxInputDepth,
      validate: false,
    };
    this.serverInfo = options.serverInfo;
    this.chain = composeRound(
      roundChain({
        codec: options.codec,
        logger: this.logger,
        maxRounds: options.maxRounds ?? SERVER_DEFAULTS.maxRounds,
        validateResults: options.validateResults ?? false,
        handlerTimeoutMs: options.handlerTimeoutMs ?? SERVER_DEFAULTS.handlerTimeoutMs,
        hookTimeoutMs: this.hookTimeoutMs,
        guards: this.guards,
        observed: this.observers.length > 0,
        links: options.links ?? [],
        ...(options.connector ? { connector: options.connector } : {}),
      }),
    );
  }

  /**
   * Answer one MRTR request (`tools/call`, `prompts/get` or `resources/read`) with `entry`, or with what `resolve`
   * finds for it (a catalog lookup, which may refuse with an McpError). Checks the input's depth and `_meta` first,
   * as the dispatcher does. Never throws: failures are JSON-RPC errors, and every outcome is observed.
   */
  run(
    request: JsonRpcRequest,
    env: RequestEnvironment,
    entry: RoundEntry | ((call: RoundCall) => MaybePromise<RoundEntry>),
  ): MaybePromise<JsonRpcResponse> {
    return this.answer(request, env, (trace, span) => {
      const call = readCall(request, env, trace, this.front, span);
      const found = typeof entry === 'function' ? entry(call) : entry;
      return thenOrNow(found, (e) => this.round(call, request.method as MrtrMethod, e));
    });
  }

  /** The round's links for a call already checked and resolved (the methods of the dispatcher use this). */
  round(call: RoundCall, method: MrtrMethod, entry: RoundEntry): MaybePromise<Result> {
    const args = Object.hasOwn(entry, 'arguments') ? entry.arguments : (call.params.arguments ?? {});
    return this.chain(
      new Round(
        call,
        method,
        entry.target,
        args,
        entry.options ?? {},
        entry.invoke,
        entry.finalize,
        entry.startTask,
        entry.tool,
      ),
    );
  }

  /**
   * Observation around one MRTR request: room first (an observer may hold the round until it has some), a trace
   * for `route` to fill, the answer — a result or the JSON-RPC error it failed with — and then the round's event,
   * the answer held until every observer has recorded it. Without observers, `route` runs bare. With tracing on, the
   * round's span ends once the answer is known. Never throws.
   */
  answer(
    request: JsonRpcRequest,
    env: RequestEnvironment,
    route: (trace: RoundTrace | undefined, span?: RoundSpan) => MaybePromise<Result>,
  ): MaybePromise<JsonRpcResponse> {
    let span: RoundSpan | undefined;
    try {
      span = startRoundSpan(request, env);
    } catch {
      // A request nobody could read: answered below, untraced.
    }
    if (span === undefined) return this.observe(request, env, route);
    const traced = span;
    return thenOrNow(
      this.observe(request, env, (trace) => route(trace, traced)),
      (response) => {
        traced.finish(response);
        return response;
      },
    );
  }

  private observe(
    request: JsonRpcRequest,
    env: RequestEnvironment,
    route: (trace: RoundTrace | undefined) => MaybePromise<Result>,
  ): MaybePromise<JsonRpcResponse> {
    if (this.observers.length === 0) return this.respond(request, env, undefined, route);
    let room: Promise<unknown> | undefined;
    try {
      room = askObserversForRoom(this.observers, this.hookTimeoutMs);
    } catch (error) {
      return unrecordedAnswer(request, error, this.logger);
    }
    if (room === undefined) return this.observed(request, env, route);
    // An observer has no room (an audit queue full of events waiting for the disk): the round waits to start.
    return room.then(
      () => this.observed(request, env, route),
      (error: unknown) => unrecordedAnswer(request, error, this.logger),
    );
  }

  private observed(
    request: JsonRpcRequest,
    env: RequestEnvironment,
    route: (trace: RoundTrace | undefined) => MaybePromise<Result>,
  ): MaybePromise<JsonRpcResponse> {
    let trace: RoundTrace;
    try {
      trace = new RoundTrace(
        request.id,
        request.method,
        request.params,
        env.principal,
        this.recordIntent,
        env.bridged,
      );
    } catch (error) {
      // A request or environment nobody could read (a caller of run() that passed a broken one): answered, not thrown.
      return errorAnswer(
        request ?? ({} as JsonRpcRequest),
        error,
        env ?? ({} as RequestEnvironment),
        this.logger,
      );
    }
    return thenOrNow(this.respond(request, env, trace, route), (response) => {
      let pending: Promise<void> | undefined;
      try {
        pending = notifyObservers(this.observers, trace.toEvent(response), this.hookTimeoutMs);
      } catch (error) {
        return unrecordedAnswer(response, error, this.logger);
      }
      if (pending === undefined) return response;
      return pending.then(
        () => response,
        (error: unknown) => unrecordedAnswer(response, error, this.logger),
      );
    });
  }

  private respond(
    request: JsonRpcRequest,
    env: RequestEnvironment,
    trace: RoundTrace | undefined,
    route: (trace: RoundTrace | undefined) => MaybePromise<Result>,
  ): MaybePromise<JsonRpcResponse> {
    const failed = (error: unknown) => {
      trace?.failed(error);
      return errorAnswer(request, error, env, this.logger);
    };
    try {
      const routed = route(trace);
      if (!(routed instanceof Promise)) return resultAnswer(request, routed, this.serverInfo);
      return routed.then((result) => resultAnswer(request, result, this.serverInfo), failed);
    } catch (error) {
      return failed(error);
    }
  }
}
