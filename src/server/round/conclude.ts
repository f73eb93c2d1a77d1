// How the flow's outcome becomes the round's result, in one place: an ending, the next round sealed, the handler's
// result (its last word and shape checked), or a link's answer; and a round that paused to go on as a task, sealed.
import type { FlowJournal, FlowRoundOutcome } from '../../flow/internal.js';
import {
  ErrorCode,
  type InputRequests,
  type JsonObject,
  McpError,
  type Result,
} from '../../protocol/index.js';
import { InputRequired } from '../context.js';
import { handlerContractError } from '../errors.js';
import type { RequestStateCodec } from '../request-state.js';
import { checkResultShape } from '../result-shape.js';
import { RoundPause } from './pause.js';
import type { Round } from './round.js';
import { sealRound } from './state.js';

/** What concluding a round needs of the server's options. */
export interface ConcludeOptions {
  codec: RequestStateCodec;
  maxRounds: number;
  /** Check each result and input request against the official schema before it is sent (development and tests). */
  validateResults: boolean;
}

/** The round's result from its flow's outcome; `askedByHandler`: the handler (not a link) used ctx.ask. */
export function conclude(
  o: ConcludeOptions,
  flow: FlowRoundOutcome<unknown>,
  r: Round,
  askedByHandler: boolean,
): Result {
  let result: Result;
  if (flow.kind === 'complete' && r.answeredBy !== undefined) {
    // A link in the flow answered in the handler's place: sent as it is, without the method's output check.
    r.trace?.answeredBy(r.answeredBy);
    result = { ...(flow.result as Result), resultType: 'complete' };
  } else {
    result = finish(o, flow, r, askedByHandler);
    if (r.finalize) result = r.finalize(result);
  }
  if (o.validateResults) checkResultShape(r.method, result);
  return result;
}

/**
 * Rethrow `error`; a round that paused to go on elsewhere (a task) first has what it resolved sealed into its
 * `requestState`, so that the round continuing it does not ask or run it again.
 */
export function sealPaused(o: ConcludeOptions, error: unknown, r: Round): never {
  if (!(error instanceof RoundPause) || !error.journal) throw error;
  error.requestState = sealNext(
    o,
    r,
    new InputRequired(undefined, undefined, false),
    error.journal,
    error,
  ).requestState;
  throw error;
}

/**
 * The next round's state sealed, bound as this round's was. A round that `paused` into a task is not one the client
 * takes: the continuing round applies the round cap, and its flow id is not the call's yet.
 */
function sealNext(
  o: ConcludeOptions,
  r: Round,
  outcome: InputRequired,
  journal: FlowJournal | undefined,
  paused?: RoundPause,
): { inputRequests?: InputRequests; requestState?: string } {
  const input = r.input!;
  const sealed = sealRound(outcome, input, {
    caps: r.meta.clientCapabilities,
    codec: o.codec,
    binding: r.binding,
    maxRounds: paused ? Number.MAX_SAFE_INTEGER : (r.options.maxRounds ?? o.maxRounds),
    unsealedAnswers: paused ? false : (r.options.unsealedAnswers ?? false),
    journal,
    ttlMs: paused ? paused.stateTtlMs : r.options.stateTtlMs,
    validateShape: paused ? false : o.validateResults,
    trace: r.span?.flowTraceparent,
  });
  // The flow id the seal gave the round: a task made from this call cancels (and withdraws) that flow.
  if (!paused && input.flowId !== undefined) r.call.flowId = input.flowId;
  return sealed;
}

/** The flow's outcome as the round's result: an ending, the next round sealed, or the handler's result. */
function finish(
  o: ConcludeOptions,
  flow: FlowRoundOutcome<unknown>,
  r: Round,
  askedByHandler: boolean,
): Result {
  const { method, target } = r;
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
  const seal = (outcome: InputRequired, journal: FlowJournal | undefined): Result => ({
    resultType: 'input_required',
    ...sealNext(o, r, outcome, journal),
  });
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
