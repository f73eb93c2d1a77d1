// The chain's last outer link: the handler's time limit, the flow (journal replay, answers checked by kind), the
// links that run in the flow before the handler, then seal the next round or complete.
import type { Ask } from '../../flow/index.js';
import { type FlowJournal, type FlowRoundOutcome, runFlowRound } from '../../flow/internal.js';
import {
  clientSupports,
  ErrorCode,
  type InputKind,
  type JsonObject,
  McpError,
  type Result,
  RoundRefused,
} from '../../protocol/index.js';
import { type AskConnector, InputRequired, type RequestContext } from '../context.js';
import { Deadline, HandlerTimeoutError } from '../deadline.js';
import type { Logger } from '../environment.js';
import { handlerContractError } from '../errors.js';
import type { MaybePromise } from '../maybe-async.js';
import type { RequestStateCodec } from '../request-state.js';
import { checkResultShape } from '../result-shape.js';
import { RoundContext } from './context.js';
import { composeRound, type RoundLink } from './link.js';
import { RoundPause } from './pause.js';
import type { Round } from './round.js';
import { type RoundInput, sealRound } from './state.js';
import { timedOutAnswer } from './timed-out.js';

export interface FlowLinkOptions {
  codec: RequestStateCodec;
  logger: Logger;
  maxRounds: number;
  /** Check each result and input request against the official schema before it is sent (development and tests). */
  validateResults: boolean;
  handlerTimeoutMs: number;
  /** What `ctx.ask.connect` calls: the connections attached to the server, if any. */
  connector?: () => AskConnector | undefined;
}

/** The handler, as the last link in the flow. The round may have been answered while a link asked: then it stops. */
const handlerLink: RoundLink = {
  name: 'handler',
  handle(round) {
    const deadline = round.deadline!;
    if (deadline.expired || round.env.signal.aborted) throw new HandlerTimeoutError(deadline.timeoutMs);
    return round.invoke(round.handlerCtx!) as MaybePromise<Result>;
  },
};

/**
 * A link in the flow from the server's `links` option: one that returns without calling next() answers in the
 * handler's place, and the round's event names it.
 */
export function policyLink(link: RoundLink): RoundLink {
  return {
    name: link.name,
    handle(round, next) {
      let passed = false;
      // A refusal before the link passed the round on is the link's: the round's event names it.
      const blame = (error: unknown): never => {
        if (!passed && error instanceof RoundRefused) error.refusedBy ??= link.name;
        throw error;
      };
      let result: MaybePromise<Result>;
      try {
        result = link.handle(round, () => {
          passed = true;
          return next();
        });
      } catch (error) {
        return blame(error);
      }
      const answered = (value: Result) => {
        if (!passed) round.answeredBy ??= link.name;
        return value;
      };
      return result instanceof Promise ? result.then(answered, blame) : answered(result);
    },
  };
}

/** The flow link; `inFlow` run in the flow before the handler (they may ask with `round.ctx`, or answer). */
export function flowLink(options: FlowLinkOptions, inFlow: readonly RoundLink[]): RoundLink {
  const inner = inFlow.length === 0 ? undefined : composeRound([...inFlow, handlerLink]);
  return { name: 'flow', handle: (round) => runFlow(options, inner, round) };
}

function runFlow(
  o: FlowLinkOptions,
  inner: ((round: Round) => MaybePromise<Result>) | undefined,
  r: Round,
): MaybePromise<Result> {
  const { request, meta, env } = r;
  const input = r.input!;
  const deadline = new Deadline(r.options.timeoutMs ?? o.handlerTimeoutMs);
  r.deadline = deadline;
  // Whether a use of ctx.ask this round was the handler's (then it may not also return inputRequired), not a link's
  // before it. With no link in the flow, every use is the handler's.
  let askedByHandler = inner === undefined;
  const context = (ask: () => Ask): RequestContext =>
    new RoundContext(request, meta, env, input, ask, deadline, r.trace, r.startTask, r.span, o.connector);
  const body = (getAsk: () => Ask): unknown => {
    if (inner === undefined) return r.invoke(context(getAsk));
    r.ctx = context(getAsk);
    r.handlerCtx = context(() => {
      askedByHandler = true;
      return getAsk();
    });
    return inner(r);
  };
  let finished: MaybePromise<Result>;
  try {
    const flow = runFlowRound(
      {
        journal: input.journal,
        inputResponses: input.inputResponses,
        capabilities: meta.clientCapabilities,
        supports: (kind: InputKind) => clientSupports(meta.clientCapabilities, kind),
        steps: r.steps,
        onStep: r.trace?.stepRan,
      },
      body,
    );
    // Synchronous all the way when the handler is: no promise, no microtask, no timer.
    const concluded = (f: FlowRoundOutcome<unknown>) => {
      let result: Result;
      if (f.kind === 'complete' && r.answeredBy !== undefined) {
        // A link in the flow answered in the handler's place: sent as it is, without the method's output check.
        r.trace?.answeredBy(r.answeredBy);
        result = { ...(f.result as Result), resultType: 'complete' };
      } else {
        result = finish(o, f, r, input, askedByHandler);
        if (r.finalize) result = r.finalize(result);
      }
      if (o.validateResults) checkResultShape(r.method, result);
      return result;
    };
    const paused = (error: unknown): never => pause(o, error, r, input);
    finished = flow instanceof Promise ? flow.then(concluded, paused) : concluded(flow);
  } catch (error) {
    deadline.release();
    pause(o, error, r, input);
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
    timedOutAnswer(r.method, r.target, deadline.timeoutMs, request, env, o.logger),
  );
}

/**
 * Rethrow `error`; a round that paused to go on elsewhere (a task) first has what it resolved sealed into its
 * `requestState`, so that the round continuing it does not ask or run it again.
 */
function pause(o: FlowLinkOptions, error: unknown, r: Round, input: RoundInput): never {
  if (!(error instanceof RoundPause) || !error.journal) throw error;
  error.requestState = sealRound(new InputRequired(undefined, undefined, false), input, {
    caps: r.meta.clientCapabilities,
    codec: o.codec,
    binding: r.binding,
    // Not a round the client takes: the round cap is the continuing round's to apply.
    maxRounds: Number.MAX_SAFE_INTEGER,
    unsealedAnswers: false,
    journal: error.journal,
    ttlMs: error.stateTtlMs,
    validateShape: false,
    trace: r.span?.flowTraceparent,
  }).requestState;
  throw error;
}

/** The flow's outcome as the round's result: an ending, the next round sealed, or the handler's result. */
function finish(
  o: FlowLinkOptions,
  flow: FlowRoundOutcome<unknown>,
  r: Round,
  input: RoundInput,
  askedByHandler: boolean,
): Result {
  const { method, target, meta, options } = r;
  if (flow.kind === 'ended') {
    // Decline, cancel or too many invalid answers: a clear outcome, not an exception.
    if (flow.error.reason === 'invalid_answers') r.refusal = 'invalid_answers';
    // A person's decline or a cancel is the decision the trail names; other endings stay a tool error.
    r.trace?.ended(flow.error.reason, flow.error.message);
    if (method === 'tools/call')
      return {
        resultType: 'complete',
        content: [{ type: 'text', text: flow.error.message }],
        isError: true,
      };
    throw new McpError(ErrorCode.InvalidRequest, flow.error.message, { reason: flow.error.reason });
  }
  const seal = (outcome: InputRequired, journal: FlowJournal | undefined): Result => {
    const sealed = sealRound(outcome, input, {
      caps: meta.clientCapabilities,
      codec: o.codec,
      binding: r.binding,
      maxRounds: options.maxRounds ?? o.maxRounds,
      unsealedAnswers: options.unsealedAnswers ?? false,
      journal,
      ttlMs: options.stateTtlMs,
      validateShape: o.validateResults,
      trace: r.span?.flowTraceparent,
    });
    // The flow id the seal gave the round: a task made from this call cancels (and withdraws) that flow.
    if (input.flowId !== undefined) r.call.flowId = input.flowId;
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
    // Links that asked first left answers in the journal: it travels with the handler's own state.
    return seal(outcome, flow.journal);
  }
  if (typeof outcome !== 'object' || outcome === null) {
    throw handlerContractError(
      `handler for ${method} ${target} returned ${String(outcome)} instead of a result`,
    );
  }
  return { ...(outcome as JsonObject), resultType: 'complete' };
}
