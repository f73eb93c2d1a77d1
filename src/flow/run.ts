// One round of a sequential flow: re-run the handler from the top, answer its questions from the journal and this
// round's responses, and park the first unanswered ones as the next round's inputRequests.
import {
  type ClientCapabilities,
  emptyRecord,
  type InputRequest,
  type InputRequests,
  type InputResponse,
} from '../protocol/index.js';
import {
  type Ask,
  createAsk,
  FlowEnded,
  type FlowInputKind,
  type Question,
  type QuestionResolver,
} from './ask.js';
import { FLOW_DEFAULTS } from './defaults.js';
import { FlowPause, FlowUsageError } from './errors.js';
import {
  type AskedQuestion,
  emptyJournal,
  type FlowJournal,
  type JournalEntry,
  questionDigest,
} from './journal.js';

export interface FlowRoundInput {
  /** The journal opened from requestState (undefined on the first round). */
  journal: FlowJournal | undefined;
  /** Answers to the keys the previous round asked; the server has already dropped every other key. */
  inputResponses: Readonly<Record<string, InputResponse>>;
  capabilities: ClientCapabilities;
  supports(kind: FlowInputKind): boolean;
  /** Invalid answers tolerated per question unless the question says otherwise. */
  maxInvalidAnswers?: number;
  /**
   * Where step results are also kept outside the journal (a replay guard's shared store). A round that runs again
   * — its process died after a step ran, or a later check failed it — finds the result there instead of repeating
   * the step's effect.
   */
  steps?: StepLedger;
  /** Told the name of each step whose effect runs this round (an audit trail lists them); not for journal hits. */
  onStep?: (name: string) => void;
}

/** Step results kept per flow in a shared store, keyed by the step's position and name digest. */
export interface StepLedger {
  recall(stepKey: string): Promise<{ value: unknown } | undefined>;
  /** Resolves once the result is durable: the round's answer is sent only after. */
  record(stepKey: string, value: unknown): Promise<void>;
}

export type FlowRoundOutcome<R> =
  /**
   * `usedAsk`: `ask` was touched this round. `journal`: what this round's questions and steps resolved to, when
   * `ask` was touched — the state to carry when the result asks by hand (a round guard asked first, the handler
   * answered with inputRequired()).
   */
  | { kind: 'complete'; result: R; usedAsk: boolean; journal: FlowJournal | undefined }
  | { kind: 'input_required'; inputRequests: InputRequests; journal: FlowJournal }
  | { kind: 'ended'; error: FlowEnded };

const SUSPENDED = Symbol('suspended');

const isThenable = <T>(value: T | PromiseLike<T>): value is PromiseLike<T> =>
  typeof (value as { then?: unknown } | null)?.then === 'function';

/**
 * Run `body` once with a fresh `ask`. Questions already answered resolve from the journal; an unanswered question
 * never settles, and once the handler has nothing else to do this turn the round ends with every question it is
 * waiting on — so independent questions asked together (Promise.all / ask.all) go out in one round.
 */
export function runFlowRound<R>(
  input: FlowRoundInput,
  body: (getAsk: () => Ask) => Promise<R> | R,
): FlowRoundOutcome<R> | Promise<FlowRoundOutcome<R>> {
  // The journal machinery is built only when the handler first touches `ask`: most handlers never do.
  let session: FlowSession | undefined;
  let wake: ((value: typeof SUSPENDED) => void) | undefined;
  const getAsk = () => {
    session ??= new FlowSession(input, () => setImmediate(() => wake?.(SUSPENDED)));
    return session.ask;
  };
  const ended = (error: unknown): FlowRoundOutcome<R> => {
    if (error instanceof FlowEnded) return { kind: 'ended', error };
    // A paused round goes on elsewhere with what it resolved so far (a step already run must not run again there).
    if (error instanceof FlowPause && session) error.journal = session.nextRound().journal;
    throw error;
  };
  let running: R | PromiseLike<R>;
  try {
    running = body(getAsk);
  } catch (error) {
    // A synchronous handler may have started a step before it paused: the step's result belongs in the journal.
    if (error instanceof FlowPause && session?.hasRunningSteps())
      return session.settleSteps().then(
        () => ended(error),
        (failure: unknown) => ended(pausedOrFailed(error, failure)),
      );
    return ended(error);
  }
  // A synchronous handler finishes here, without a single extra turn of the event loop.
  if (!isThenable(running)) return finishRound(session, running);
  // An async handler may park a question later: race it against the round's suspension.
  const suspended = new Promise<typeof SUSPENDED>((resolve) => {
    wake = resolve;
  });
  return Promise.race([running, suspended]).then(
    (outcome) => finishRound(session, outcome),
    (error: unknown) => {
      // A step still running when the handler fails must finish before the round does: whoever acts on the failure
      // (a retry, a guard letting go of the state) must not race an effect that is still under way.
      if (session?.hasRunningSteps())
        return session.settleSteps().then(
          () => ended(error),
          (failure: unknown) => ended(pausedOrFailed(error, failure)),
        );
      return ended(error);
    },
  );
}

/**
 * A round that paused while a step was running, and the step failed: the round fails with the step, as it would have
 * without the pause — whoever continues a paused round would otherwise run the failed step again (its effect may be
 * half done). Any other error the handler threw stays the round's error.
 */
function pausedOrFailed(error: unknown, stepFailure: unknown): unknown {
  return error instanceof FlowPause ? stepFailure : error;
}

function finishRound<R>(
  session: FlowSession | undefined,
  outcome: R | typeof SUSPENDED,
): FlowRoundOutcome<R> | Promise<FlowRoundOutcome<R>> {
  // A step already running when the round ends must finish and be journaled, or the next round would run it again.
  if (session?.hasRunningSteps()) return session.settleSteps().then(() => concludeRound(session, outcome));
  return concludeRound(session, outcome);
}

function concludeRound<R>(
  session: FlowSession | undefined,
  outcome: R | typeof SUSPENDED,
): FlowRoundOutcome<R> {
  if (session?.ended) return { kind: 'ended', error: session.ended };
  // A question left unanswered wins over whatever the handler returned: it returned without that answer.
  if (session && session.pending.length > 0) return { kind: 'input_required', ...session.nextRound() };
  // Internal assertion: SUSPENDED is returned only after a question was parked, so this cannot happen.
  if (outcome === SUSPENDED) throw new Error('flow suspended without a pending question');
  return {
    kind: 'complete',
    result: outcome,
    usedAsk: session !== undefined,
    journal: session?.nextRound().journal,
  };
}

/** One run's view of the journal: answers questions from it, parks the unanswered ones, journals steps. */
class FlowSession {
  readonly ask: Ask;
  readonly pending: Array<{ p: number; h: string; k: string; request: InputRequest }> = [];
  ended: FlowEnded | undefined;
  private readonly answered: Map<number, JournalEntry>;
  private readonly askedLastRound: Map<number, AskedQuestion>;
  private readonly invalidCounts: Record<string, number>;
  private readonly journal: JournalEntry[] = [];
  private readonly runningSteps = new Set<Promise<unknown>>();
  private position = 0;
  private readonly never = new Promise<never>(() => {});

  constructor(
    private readonly input: FlowRoundInput,
    private readonly suspend: () => void,
  ) {
    const previous = input.journal ?? emptyJournal();
    this.answered = new Map(previous.e.map((e) => [e.p, e]));
    this.askedLastRound = new Map(previous.q.map((q) => [q.p, q]));
    this.invalidCounts = { ...previous.r };
    const resolver: QuestionResolver = {
      capabilities: input.capabilities,
      resolve: (question) => this.resolve(question),
      step: (name, run) => this.step(name, run),
    };
    this.ask = createAsk(resolver, input.supports);
  }

  nextRound(): { inputRequests: InputRequests; journal: FlowJournal } {
    // Keys are the handler's own (QuestionOptions.key): `__proto__` must stay a question, not become the prototype.
    const inputRequests: InputRequests = emptyRecord();
    for (const q of this.pending) inputRequests[q.k] = q.request;
    const journal: FlowJournal = { e: this.journal, q: this.pending.map(({ p, h, k }) => ({ p, h, k })) };
    if (Object.keys(this.invalidCounts).length > 0) journal.r = this.invalidCounts;
    return { inputRequests, journal };
  }

  hasRunningSteps(): boolean {
    return this.runningSteps.size > 0;
  }

  /** Wait for every step still running; a step that failed fails the round (its effect may be half done). */
  async settleSteps(): Promise<void> {
    while (this.runningSteps.size > 0) {
      const outcomes = await Promise.allSettled([...this.runningSteps]);
      for (const o of outcomes) if (o.status === 'rejected') throw o.reason;
    }
  }

  private trackStep<T>(step: Promise<T>): Promise<T> {
    this.runningSteps.add(step);
    const done = () => this.runningSteps.delete(step);
    step.then(done, done);
    return step;
  }

  private park(p: number, h: string, question: Question, request: InputRequest): Promise<never> {
    const key = question.options.key ?? `q${p}`;
    if (this.pending.some((x) => x.k === key))
      throw new FlowUsageError(`two questions in one round use the key "${key}"`);
    if (this.pending.length === 0) this.suspend();
    this.pending.push({ p, h, k: key, request });
    return this.never;
  }

  private resolve(question: Question): Promise<unknown> {
    const p = ++this.position;
    const h = questionDigest(question.request);
    const known = this.answered.get(p);
    // Answers are pinned to the question shown: after a handler change the stale answer is not applied.
    if (known && known.h === h) {
      const replayed = question.accept(known.a);
      // A journaled answer the current code no longer accepts (a changed refinement) is asked again.
      if ('value' in replayed) {
        this.journal.push(known);
        return Promise.resolve(replayed.value);
      }
    }
    const last = this.askedLastRound.get(p);
    // Own keys only: an unanswered question keyed `constructor` has no answer, not Object's constructor.
    const response =
      last && last.h === h && Object.hasOwn(this.input.inputResponses, last.k)
        ? this.input.inputResponses[last.k]
        : undefined;
    if (response === undefined) return this.park(p, h, question, question.request);
    const checked = question.accept(response);
    if ('value' in checked) {
      // Only what the question reads is kept: extra fields a client adds never reach the sealed journal.
      this.journal.push({ p, h, a: question.journaled(response) });
      delete this.invalidCounts[p];
      return Promise.resolve(checked.value);
    }
    const count = (this.invalidCounts[p] ?? 0) + 1;
    this.invalidCounts[p] = count;
    const limit =
      question.options.maxInvalidAnswers ?? this.input.maxInvalidAnswers ?? FLOW_DEFAULTS.maxInvalidAnswers;
    if (count > limit) {
      this.ended = new FlowEnded(
        `too many invalid answers (${limit}): ${checked.invalid}`,
        'invalid_answers',
      );
      this.suspend();
      return this.never;
    }
    return this.park(p, h, question, withRetryMessage(question.request, checked.invalid));
  }

  private step<T>(name: string, run: () => T | Promise<T>): Promise<T> {
    const p = ++this.position;
    const h = questionDigest({ step: name });
    const known = this.answered.get(p);
    if (known && known.h === h) {
      this.journal.push(known);
      return Promise.resolve(known.a as T);
    }
    // Effects wait until no question is outstanding in this run (the answer may change what the step should do), and
    // never run once the flow has ended. A waiting step is not tracked as running, or the round would wait for it.
    if (this.ended || this.pending.length > 0) return this.never;
    return this.trackStep(this.runStep(p, h, name, run));
  }

  private async runStep<T>(p: number, h: string, name: string, run: () => T | Promise<T>): Promise<T> {
    const ledger = this.input.steps;
    const stepKey = `${p}:${h}`;
    if (ledger) {
      // Ran in an earlier attempt at this round whose answer was never sent: use its result, do not repeat it.
      const recorded = await ledger.recall(stepKey);
      if (recorded) {
        this.journal.push({ p, h, a: recorded.value });
        return recorded.value as T;
      }
    }
    this.input.onStep?.(name);
    const value = await run();
    const journaled = value === undefined ? null : value;
    if (ledger) await ledger.record(stepKey, journaled);
    this.journal.push({ p, h, a: journaled });
    return value;
  }
}

function withRetryMessage(request: InputRequest, problem: string): InputRequest {
  if (request.method !== 'elicitation/create') return request;
  const params = request.params as { message: string };
  return {
    ...request,
    params: {
      ...request.params,
      message: `${params.message}\n(Your previous answer was not valid: ${problem})`,
    },
  } as InputRequest;
}
