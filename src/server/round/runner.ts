// The whole MRTR round as one unit: ask the observers for room, read the call, run the round's chain (chain.ts:
// screen, open the state, admit, record the intent, run, seal or complete, commit), and tell the observers the event.
// The dispatcher runs every tools/call, prompts/get and resources/read through it; anything else that answers MRTR
// requests (a gateway whose tools live upstream) runs its rounds through the same unit and gets every guard, every
// observer and the state codec without re-building any of them.
import {
  type JsonRpcRequest,
  type JsonRpcResponse,
  MRTR_METHODS,
  type MrtrMethod,
  type Result,
} from '../../protocol/index.js';
import { SERVER_DEFAULTS } from '../defaults.js';
import { type Logger, type RequestEnvironment, stderrLogger } from '../environment.js';
import { type MaybePromise, thenOrNow } from '../maybe-async.js';
import { type AnswerSetup, answerOf, Failed } from './answers.js';
import { roundChain } from './chain.js';
import type { RoundGuard } from './guard.js';
import { composeRound } from './link.js';
import { askObserversForRoom, recordIntent } from './notify.js';
import type { RoundIntent, RoundObserver } from './observer.js';
import { type CallFront, readCall } from './read-call.js';
import { Round } from './round.js';
import { type RoundSpan, startRoundSpan } from './round-span.js';
import type { RoundCall, RoundEntry, RoundRunnerOptions } from './run-options.js';
import { RoundTrace } from './trace.js';

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
  /** What every answer needs (answers.ts). */
  private readonly answers: AnswerSetup;
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
    this.answers = {
      logger: this.logger,
      serverInfo: options.serverInfo,
      observers: this.observers,
      hookTimeoutMs: this.hookTimeoutMs,
    };
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
   * Any request's answer: an MRTR method's round observed (as `answer` does), any other method answered bare. The
   * dispatcher hands every request here. Never throws.
   */
  respond(
    request: JsonRpcRequest,
    env: RequestEnvironment,
    route: (trace: RoundTrace | undefined, span?: RoundSpan) => MaybePromise<Result>,
  ): MaybePromise<JsonRpcResponse> {
    return this.answered(request, env, route, MRTR_METHOD_SET.has(request.method));
  }

  /**
   * Observation around one MRTR request: room first (an observer may hold the round until it has some), a trace
   * for `route` to fill, then the answer (answers.ts), held until every observer has recorded the round's event.
   * Without observers, `route` runs bare. With tracing on, the round's span ends once the answer is known. Never
   * throws.
   */
  answer(
    request: JsonRpcRequest,
    env: RequestEnvironment,
    route: (trace: RoundTrace | undefined, span?: RoundSpan) => MaybePromise<Result>,
  ): MaybePromise<JsonRpcResponse> {
    return this.answered(request, env, route, true);
  }

  private answered(
    request: JsonRpcRequest,
    env: RequestEnvironment,
    route: (trace: RoundTrace | undefined, span?: RoundSpan) => MaybePromise<Result>,
    round: boolean,
  ): MaybePromise<JsonRpcResponse> {
    let span: RoundSpan | undefined;
    try {
      if (round) span = startRoundSpan(request, env);
    } catch {
      // A request nobody could read: answered below, untraced.
    }
    // An observed round: room first, then a trace for the round to fill.
    const trace = round && this.observers.length > 0 ? this.traceAfterRoom(request, env) : undefined;
    return thenOrNow(trace, (made) => this.reply(request, env, made, route, span));
  }

  /** Room first (an observer whose sink is full holds the round until it has some), then the round's trace. */
  private traceAfterRoom(
    request: JsonRpcRequest,
    env: RequestEnvironment,
  ): MaybePromise<RoundTrace | Failed> {
    let room: Promise<unknown> | undefined;
    try {
      room = askObserversForRoom(this.observers, this.hookTimeoutMs);
    } catch (error) {
      return new Failed(error, true);
    }
    if (room === undefined) return this.newTrace(request, env);
    return room.then(
      () => this.newTrace(request, env),
      (error: unknown) => new Failed(error, true),
    );
  }

  private newTrace(request: JsonRpcRequest, env: RequestEnvironment): RoundTrace | Failed {
    try {
      return new RoundTrace(
        request.id,
        request.method,
        request.params,
        env.principal,
        this.recordIntent,
        env.bridged,
      );
    } catch (error) {
      return new Failed(error);
    }
  }

  /**
   * `route` run and answered (answers.ts), observed when a trace is given; a round whose trace could not be made is
   * answered with why. Never throws.
   */
  private reply(
    request: JsonRpcRequest,
    env: RequestEnvironment,
    trace: RoundTrace | Failed | undefined,
    route: (trace: RoundTrace | undefined, span?: RoundSpan) => MaybePromise<Result>,
    span?: RoundSpan,
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
        this.answers,
      );
    if (!(routed instanceof Promise)) return answer(routed);
    return routed.then(answer, (error: unknown) => answer(new Failed(error)));
  }
}
