// The round pipeline shared by tools/call, prompts/get and resources/read:
//   open (requestState, answers) → admit (guards) → run (flow + handler) → seal or complete → commit (guards).
// Guards join by composition; with none, every step runs synchronously for a synchronous handler.
import type { Ask, StepLedger } from '../../flow/index.js';
import { type FlowJournal, type FlowRoundOutcome, runFlowRound } from '../../flow/internal.js';
import {
  clientSupports,
  ErrorCode,
  type InputKind,
  type JsonObject,
  type JsonRpcRequest,
  McpError,
  type MrtrMethod,
  type Result,
  RoundRefused,
} from '../../protocol/index.js';
import { InputRequired, type RequestContext } from '../context.js';
import { Deadline, HandlerTimeoutError } from '../deadline.js';
import type { Logger, RequestEnvironment } from '../environment.js';
import { handlerContractError } from '../errors.js';
import type { HandlerOptions } from '../handlers.js';
import { type MaybePromise, thenOrNow } from '../maybe-async.js';
import type { RequestMeta } from '../request-meta.js';
import type { RequestStateCodec, StateBinding } from '../request-state.js';
import { checkResultShape } from '../result-shape.js';
import { HookTimeoutError } from '../time-bound.js';
import { RoundContext } from './context.js';
import {
  admitThroughGuards,
  askThroughGuards,
  commitRound,
  type GuardResult,
  type RoundGuard,
  type RoundTool,
  releaseRound,
  reportRefusal,
  type ScreenedRound,
  screenRound,
} from './guard.js';
import { GuardedRoundView } from './guarded-round.js';
import { RoundPause } from './pause.js';
import { openRound, type RoundInput, sealRound } from './state.js';
import type { RoundTrace } from './trace.js';

export interface RoundPipelineOptions {
  codec: RequestStateCodec;
  logger: Logger;
  maxRounds: number;
  /** Check each input request against the official schema before sealing (development and tests). */
  validateResults: boolean;
  handlerTimeoutMs: number;
  /** How long a guard's promise may take before the round fails closed (a store that hangs). */
  hookTimeoutMs: number;
  guards: readonly RoundGuard[];
}

/** One request on its way through the server (what every method gets). */
export interface Call {
  request: JsonRpcRequest;
  params: JsonObject;
  meta: RequestMeta;
  env: RequestEnvironment;
  /** Present when the server has round observers and this is an MRTR method. */
  trace: RoundTrace | undefined;
  /** Set once a round of this call sealed its state: the flow a task made from the call belongs to. */
  flowId?: string;
}

/**
 * An MRTR call and what its method resolved it to (target, arguments, handler), as one object the stages pass
 * along. A class built field by field: a spread of the call into a literal measured ~20 µs per request.
 */
export class RoundRequest {
  readonly request: JsonRpcRequest;
  readonly params: JsonObject;
  readonly meta: RequestMeta;
  readonly env: RequestEnvironment;
  readonly trace: RoundTrace | undefined;
  readonly method: MrtrMethod;
  readonly target: string;
  readonly args: unknown;
  readonly options: HandlerOptions;
  readonly invoke: (ctx: RequestContext) => unknown;
  readonly finalize: ((result: Result) => Result) | undefined;
  /** What `ctx.startTask()` does in this round (a tool that may become a task); undefined: nothing. */
  readonly startTask: (() => void) | undefined;
  /** The tool the method resolved (tools/call): guards read it instead of looking it up again. */
  readonly tool: RoundTool | undefined;
  /** The handler's work when it ran asynchronously; it may outlive the round's answer (a time limit passed). */
  work: Promise<Result> | undefined;
  workSettled = false;
  /** Set when the round ended the call in a way that counts as a refusal of the caller (answers invalid too often). */
  refusal: string | undefined;
  constructor(
    readonly call: Call,
    method: MrtrMethod,
    /** Tool name, prompt name or resource URI. */
    target: string,
    /** What the state is bound to besides the target (resources bind none). */
    args: unknown,
    options: HandlerOptions,
    invoke: (ctx: RequestContext) => unknown,
    /**
     * The method's last word on a result (an outputSchema check, cache hints), applied before guards commit it, so
     * that what they record is exactly the answer sent.
     */
    finalize?: (result: Result) => Result,
    startTask?: () => void,
    tool?: RoundTool,
  ) {
    this.request = call.request;
    this.params = call.params;
    this.meta = call.meta;
    this.env = call.env;
    this.trace = call.trace;
    this.method = method;
    this.target = target;
    this.args = args;
    this.options = options;
    this.invoke = invoke;
    this.finalize = finalize;
    this.startTask = startTask;
    this.tool = tool;
  }
}

const NO_SCOPES: readonly string[] = Object.freeze([]);

/** The guards that ask before the handler runs (`RoundGuard.ask`), and the round as they see it. */
interface AskingGuards {
  guards: readonly RoundGuard[];
  view: GuardedRoundView;
}

/** A guard's answer in the handler's place, from its `ask`: sent as it is, without the method's output check. */
class GuardAnswer {
  constructor(readonly result: GuardResult) {}
}

export class RoundPipeline {
  constructor(private readonly options: RoundPipelineOptions) {}

  run(r: RoundRequest): MaybePromise<Result> {
    const binding: StateBinding = {
      principal: r.env.principal,
      method: r.method,
      target: r.target,
      arguments: r.args,
    };
    if (r.trace) r.trace.sensitive = r.options.sensitive;
    const guards = this.options.guards;
    if (guards.length === 0) {
      const round = this.open(r, binding);
      return this.recordedExecute(r, round, binding, undefined, undefined);
    }
    const limitMs = this.options.hookTimeoutMs;
    const screened: ScreenedRound = {
      requestId: r.request.id,
      method: r.method,
      target: r.target,
      principal: r.env.principal,
      requiredScopes: r.options.requiredScopes ?? NO_SCOPES,
    };
    // Every refusal of a guarded round, whoever decides it, is told to the guards (a refusal limit counts them).
    const refused = (error: unknown): never | Promise<never> => {
      if (!(error instanceof RoundRefused)) throw error;
      return thenOrNow(reportRefusal(guards, screened, error.reason, limitMs), () => {
        throw error;
      });
    };
    const afterScreen = (): MaybePromise<Result> => {
      let round: RoundInput;
      try {
        round = this.open(r, binding);
      } catch (error) {
        return refused(error);
      }
      return this.guarded(r, round, binding, guards, screened);
    };
    let screening: void | Promise<void>;
    try {
      screening = screenRound(guards, screened, limitMs);
    } catch (error) {
      return this.logRefusal(r, error);
    }
    return screening instanceof Promise
      ? screening.then(afterScreen, (error: unknown) => this.logRefusal(r, error))
      : afterScreen();
  }

  /** Open the round's requestState and answers; a state that does not open is logged with its precise reason. */
  private open(r: RoundRequest, binding: StateBinding): RoundInput {
    let round: RoundInput;
    try {
      round = openRound(r.params, this.options.codec, binding, r.options.unsealedAnswers ?? false);
    } catch (error) {
      if (error instanceof RoundRefused) {
        this.options.logger.warn(
          { method: r.method, target: r.target, id: r.request.id, reason: error.reason },
          'requestState rejected',
        );
      }
      throw error;
    }
    if (r.trace) r.trace.round = round;
    return round;
  }

  private logRefusal(r: RoundRequest, error: unknown): never {
    if (error instanceof RoundRefused) {
      const cause = error.cause instanceof Error ? error.cause.message : undefined;
      this.options.logger.warn(
        { method: r.method, target: r.target, id: r.request.id, reason: error.reason, cause },
        'round refused',
      );
    }
    throw error;
  }

  /** The round with guards around it: admit, then run and commit — or release when anything after admit fails. */
  private guarded(
    r: RoundRequest,
    round: RoundInput,
    binding: StateBinding,
    guards: readonly RoundGuard[],
    screened: ScreenedRound,
  ): MaybePromise<Result> {
    const token = typeof r.params.requestState === 'string' ? r.params.requestState : undefined;
    const view = new GuardedRoundView(
      r.request.id,
      r.method,
      r.target,
      r.args,
      r.env.principal,
      token,
      round,
      r.tool,
    );
    const limitMs = this.options.hookTimeoutMs;
    const logRefusal = (error: unknown): never | Promise<never> => {
      if (!(error instanceof RoundRefused)) throw error;
      return thenOrNow(reportRefusal(guards, screened, error.reason, limitMs), () =>
        this.logRefusal(r, error),
      );
    };
    let admission: ReturnType<typeof admitThroughGuards>;
    try {
      admission = admitThroughGuards(guards, view, limitMs);
    } catch (error) {
      return logRefusal(error);
    }
    const afterAdmission = ({ admitted, answer }: Awaited<typeof admission>): MaybePromise<Result> => {
      if (answer) {
        // A guard answered in the handler's place (e.g. the recorded answer to an identical retry).
        if (r.trace) r.trace.decidedBy = guards[admitted.length]?.name;
        const sent: Result =
          (answer as Partial<Result>).resultType === undefined
            ? { ...answer, resultType: 'complete' }
            : answer;
        return thenOrNow(commitRound(admitted, view, sent, limitMs), () => sent);
      }
      const failed = (error: unknown) => {
        const work = r.work;
        if (work && !r.workSettled) {
          // Answered before the handler finished (its time limit passed): release means "nothing this round started
          // can still take effect", so the guards let go only once the handler's work has settled.
          const letGo = () => releaseRound(admitted, view, error, limitMs);
          work.then(letGo, letGo);
          throw error;
        }
        // A refusal after admission (a guard's `ask` refused) is reported to the guards like any other.
        return thenOrNow(releaseRound(admitted, view, error, limitMs), () => logRefusal(error));
      };
      let steps: StepLedger | undefined;
      for (const guard of admitted) {
        steps = guard.stepLedger?.(view);
        if (steps) break;
      }
      let asking: AskingGuards | undefined;
      if (admitted.some((guard) => guard.ask))
        asking = { guards: admitted.filter((guard) => guard.ask), view };
      let result: MaybePromise<Result>;
      try {
        result = this.recordedExecute(r, round, binding, steps, asking);
      } catch (error) {
        return failed(error);
      }
      const commit = (value: Result) =>
        thenOrNow(commitRound(admitted, view, value, limitMs), () =>
          // Answers invalid past their limit end the call with a result, yet count as a refusal of the caller.
          r.refusal ? thenOrNow(reportRefusal(guards, screened, r.refusal, limitMs), () => value) : value,
        );
      return result instanceof Promise ? result.then(commit, failed) : commit(result);
    };
    return admission instanceof Promise
      ? admission.then(afterAdmission, logRefusal)
      : afterAdmission(admission);
  }

  /**
   * Record the round's intent with the observers, then run it. Write-ahead: the handler — and any effect it has —
   * runs only once the intent is recorded (an audit trail: durable); a round whose intent cannot be recorded does not
   * run at all. Without observers, or with none that records intents, this is `execute` with no promise added.
   */
  private recordedExecute(
    r: RoundRequest,
    round: RoundInput,
    binding: StateBinding,
    steps: StepLedger | undefined,
    asking: AskingGuards | undefined,
  ): MaybePromise<Result> {
    let intended: undefined | Promise<void>;
    try {
      intended = r.trace?.intend(r.target);
    } catch (error) {
      throw this.intentNotRecorded(r, error);
    }
    if (intended === undefined) return this.execute(r, round, binding, steps, asking);
    return intended.then(
      () => this.execute(r, round, binding, steps, asking),
      (error: unknown) => {
        throw this.intentNotRecorded(r, error);
      },
    );
  }

  private intentNotRecorded(r: RoundRequest, error: unknown): McpError {
    this.options.logger.error(
      {
        method: r.method,
        target: r.target,
        id: r.request.id,
        err: error instanceof Error ? error.message : String(error),
      },
      'round intent not recorded: the handler did not run',
    );
    const late = error instanceof HookTimeoutError ? ` within ${error.limitMs} ms` : '';
    return new McpError(
      ErrorCode.InternalError,
      `Internal error: the round's intent could not be recorded${late}, so ${r.target} did not run`,
      { reason: 'intent_not_recorded' },
    );
  }

  /**
   * Run the handler for one round under its time limit — after the questions of the guards that ask, in the same
   * flow — then seal the next round or return the result.
   */
  private execute(
    r: RoundRequest,
    round: RoundInput,
    binding: StateBinding,
    steps: StepLedger | undefined,
    asking: AskingGuards | undefined,
  ): MaybePromise<Result> {
    const { request, meta, env } = r;
    const supports = (kind: InputKind) => clientSupports(meta.clientCapabilities, kind);
    const deadline = new Deadline(r.options.timeoutMs ?? this.options.handlerTimeoutMs);
    // Whether a use of ctx.ask this round was the handler's (then it may not also ask by hand), not a guard's before
    // it. With no guard asking, every use is the handler's.
    let askedByHandler = asking === undefined;
    const body = (getAsk: () => Ask): unknown => {
      const context = (ask: () => Ask) =>
        new RoundContext(request, meta, env, round, ask, deadline, r.trace, r.startTask);
      if (asking === undefined) return r.invoke(context(getAsk));
      return askThroughGuards(asking.guards, asking.view, context(getAsk)).then((answered) => {
        // The round was answered already (its time limit passed, or the client left) while a guard asked: the
        // handler must not start an effect nobody was told of.
        if (deadline.expired || env.signal.aborted) throw new HandlerTimeoutError(deadline.timeoutMs);
        if (answered) {
          if (r.trace) r.trace.decidedBy = answered.guard.name;
          return new GuardAnswer(answered.result);
        }
        return r.invoke(
          context(() => {
            askedByHandler = true;
            return getAsk();
          }),
        );
      });
    };
    let finished: MaybePromise<Result>;
    try {
      const flow = runFlowRound(
        {
          journal: round.journal,
          inputResponses: round.inputResponses,
          capabilities: meta.clientCapabilities,
          supports,
          steps,
          onStep: r.trace?.stepRan,
        },
        body,
      );
      // Synchronous all the way when the handler is: no promise, no microtask, no timer.
      const concluded = (f: FlowRoundOutcome<unknown>) => {
        let result: Result;
        if (f.kind === 'complete' && f.result instanceof GuardAnswer)
          result = { ...f.result.result, resultType: 'complete' };
        else {
          result = this.finish(f, r, round, binding, askedByHandler);
          if (r.finalize) result = r.finalize(result);
        }
        if (this.options.validateResults) checkResultShape(r.method, result);
        return result;
      };
      const paused = (error: unknown): never => this.pause(error, r, round, binding);
      finished = flow instanceof Promise ? flow.then(concluded, paused) : concluded(flow);
    } catch (error) {
      deadline.release();
      this.pause(error, r, round, binding);
    }
    if (!(finished instanceof Promise)) {
      deadline.release();
      return finished;
    }
    r.work = finished;
    // Registered before the race's own callbacks, so a failure handler after the race sees whether the work ended.
    const settled = () => {
      r.workSettled = true;
    };
    finished.then(settled, settled);
    return deadline.race(finished, () =>
      timedOutAnswer(r.method, r.target, deadline.timeoutMs, request, env, this.options.logger),
    );
  }

  /**
   * Rethrow `error`; a round that paused to go on elsewhere (a task) first has what it resolved sealed into its
   * `requestState`, so that the round continuing it does not ask or run it again.
   */
  private pause(error: unknown, r: RoundRequest, round: RoundInput, binding: StateBinding): never {
    if (!(error instanceof RoundPause) || !error.journal) throw error;
    error.requestState = sealRound(new InputRequired(undefined, undefined, false), round, {
      caps: r.meta.clientCapabilities,
      codec: this.options.codec,
      binding,
      // Not a round the client takes: the round cap is the continuing round's to apply.
      maxRounds: Number.MAX_SAFE_INTEGER,
      unsealedAnswers: false,
      journal: error.journal,
      ttlMs: error.stateTtlMs,
      validateShape: false,
    }).requestState;
    throw error;
  }

  private finish(
    flow: FlowRoundOutcome<unknown>,
    r: RoundRequest,
    round: RoundInput,
    binding: StateBinding,
    askedByHandler: boolean,
  ): Result {
    const { method, target, meta, options } = r;
    if (flow.kind === 'ended') {
      // Decline, cancel or too many invalid answers: a clear outcome, not an exception.
      if (flow.error.reason === 'invalid_answers') r.refusal = 'invalid_answers';
      if (r.trace) {
        r.trace.reason = flow.error.reason;
        // A person's decline or a cancel is the decision the trail names; other endings stay a tool error.
        const ending = flow.error.reason;
        if (ending === 'declined' || ending === 'cancelled')
          r.trace.decision ??= { outcome: ending, reason: flow.error.message };
      }
      if (method === 'tools/call')
        return {
          resultType: 'complete',
          content: [{ type: 'text', text: flow.error.message }],
          isError: true,
        };
      throw new McpError(ErrorCode.InvalidRequest, flow.error.message, { reason: flow.error.reason });
    }
    const seal = (outcome: InputRequired, journal: FlowJournal | undefined): Result => {
      const sealed = sealRound(outcome, round, {
        caps: meta.clientCapabilities,
        codec: this.options.codec,
        binding,
        maxRounds: options.maxRounds ?? this.options.maxRounds,
        unsealedAnswers: options.unsealedAnswers ?? false,
        journal,
        ttlMs: options.stateTtlMs,
        validateShape: this.options.validateResults,
      });
      // The flow id the seal gave the round: a task made from this call cancels (and withdraws) that flow.
      if (round.flowId !== undefined) r.call.flowId = round.flowId;
      return { resultType: 'input_required', ...sealed };
    };
    if (flow.kind === 'input_required')
      return seal(new InputRequired(flow.inputRequests, undefined, false), flow.journal);
    const outcome = flow.result;
    if (outcome instanceof InputRequired) {
      // Mixing would seal a journal out of step with the questions asked: answers could land on the wrong question.
      if (flow.usedAsk && askedByHandler)
        throw handlerContractError(
          `handler for ${method} ${target} used ctx.ask and also returned inputRequired()`,
        );
      // Guards that asked first left answers in the journal: it travels with the handler's own state.
      return seal(outcome, flow.journal);
    }
    if (typeof outcome !== 'object' || outcome === null) {
      throw handlerContractError(
        `handler for ${method} ${target} returned ${String(outcome)} instead of a result`,
      );
    }
    return { ...(outcome as JsonObject), resultType: 'complete' };
  }
}

/** The answer for a round (or a completion) still running when its time limit passed. */
export function timedOutAnswer(
  method: string,
  target: string,
  timeoutMs: number,
  request: JsonRpcRequest,
  env: RequestEnvironment,
  logger: Logger,
): Result {
  // A request the client already gave up on is nobody's timeout: its answer is dropped by the transport.
  if (!env.signal.aborted) logger.warn({ method, target, id: request.id, timeoutMs }, 'handler timed out');
  const message = `${target} did not finish within ${timeoutMs} ms`;
  // Like any tool failure, a tool's timeout is a result the model can read (server/tools.mdx "Error Handling").
  if (method === 'tools/call')
    return { resultType: 'complete', content: [{ type: 'text', text: message }], isError: true };
  throw new McpError(ErrorCode.InternalError, `Request timed out: ${message}`);
}
