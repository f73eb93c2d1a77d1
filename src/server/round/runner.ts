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
import { type AnswerSetup, replyTo } from './answers.js';
import { roundChain } from './chain.js';
import type { RoundGuard } from './guard.js';
import { composeRound } from './link.js';
import { recordIntent } from './notify.js';
import type { RoundIntent, RoundObserver } from './observer.js';
import { type CallFront, readCall } from './read-call.js';
import { type Round, roundOf } from './round.js';
import { type RoundSpan, startRoundSpan } from './round-span.js';
import type { RoundCall, RoundEntry, RoundRunnerOptions } from './run-options.js';
import { type RoundTrace, traceAfterRoom } from './trace.js';

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
      return thenOrNow(found, (e) => this.chain(roundOf(call, request.method as MrtrMethod, e)));
    });
  }

  /** The round's links for a call already checked and resolved (the methods of the dispatcher use this). */
  round(call: RoundCall, method: MrtrMethod, entry: RoundEntry): MaybePromise<Result> {
    return this.chain(roundOf(call, method, entry));
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
    const trace =
      round && this.observers.length > 0
        ? traceAfterRoom(request, env, this.observers, this.hookTimeoutMs, this.recordIntent)
        : undefined;
    return thenOrNow(trace, (made) => replyTo(request, env, made, route, span, this.answers));
  }
}
