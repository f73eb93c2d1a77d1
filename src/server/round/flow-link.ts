// The chain's last outer link: the handler's time limit, the flow (journal replay, answers checked by kind), the
// links that run in the flow before the handler, then the outcome concluded (conclude.ts): seal the next round or
// complete.
import type { Ask } from '../../flow/index.js';
import { type FlowRoundOutcome, runFlowRound } from '../../flow/internal.js';
import { clientSupports, type InputKind, type Result, RoundRefused } from '../../protocol/index.js';
import type { AskConnector, RequestContext } from '../context.js';
import { Deadline, HandlerTimeoutError } from '../deadline.js';
import type { Logger } from '../environment.js';
import type { MaybePromise } from '../maybe-async.js';
import { type ConcludeOptions, conclude, sealPaused } from './conclude.js';
import { RoundContext } from './context.js';
import { composeRound, type RoundLink } from './link.js';
import type { Round } from './round.js';
import { timedOutAnswer } from './timed-out.js';

export interface FlowLinkOptions extends ConcludeOptions {
  logger: Logger;
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
    const concluded = (f: FlowRoundOutcome<unknown>) => conclude(o, f, r, askedByHandler);
    const paused = (error: unknown): never => sealPaused(o, error, r);
    finished = flow instanceof Promise ? flow.then(concluded, paused) : concluded(flow);
  } catch (error) {
    deadline.release();
    sealPaused(o, error, r);
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
