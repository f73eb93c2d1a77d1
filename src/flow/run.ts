// One round of a sequential flow: re-run the handler from the top, answer its questions from the journal and this
// round's responses, and park the first unanswered ones as the next round's inputRequests.
import type { ClientCapabilities, InputRequest, InputRequests, InputResponse } from '../protocol/index.js';
import {
  type Ask,
  createAsk,
  FlowEnded,
  type FlowInputKind,
  type Question,
  type QuestionResolver,
} from './ask.js';
import {
  emptyJournal,
  type FlowJournal,
  type JournalEntry,
  type PendingQuestion,
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
}

export type FlowRoundOutcome<R> =
  | { kind: 'complete'; result: R }
  | { kind: 'input_required'; inputRequests: InputRequests; journal: FlowJournal }
  | { kind: 'ended'; error: FlowEnded };

const SUSPENDED = Symbol('suspended');

/**
 * Run `body` once with a fresh `ask`. Questions already answered resolve from the journal; an unanswered question
 * never settles, and once the handler has nothing else to do this turn the round ends with every question it is
 * waiting on — so independent questions asked together (Promise.all / ask.all) go out in one round.
 */
export async function runFlowRound<R>(
  input: FlowRoundInput,
  body: (ask: Ask) => Promise<R> | R,
): Promise<FlowRoundOutcome<R>> {
  const previous = input.journal ?? emptyJournal();
  const answered = new Map<number, JournalEntry>(previous.e.map((e) => [e.p, e]));
  const askedLastRound = new Map<number, PendingQuestion>(previous.q.map((q) => [q.p, q]));
  const invalidCounts: Record<string, number> = { ...previous.r };
  const journal: JournalEntry[] = [];
  const pending: Array<{ p: number; h: string; k: string; request: InputRequest }> = [];
  let position = 0;
  let ended: FlowEnded | undefined;
  let suspend: (() => void) | undefined;
  const suspended = new Promise<typeof SUSPENDED>((resolve) => {
    suspend = () => setImmediate(() => resolve(SUSPENDED));
  });
  const never = new Promise<never>(() => {});

  const park = (p: number, h: string, question: Question, request: InputRequest) => {
    const key = question.options.key ?? `q${p}`;
    if (pending.some((x) => x.k === key)) throw new Error(`two questions in one round use the key "${key}"`);
    if (pending.length === 0) suspend?.();
    pending.push({ p, h, k: key, request });
    return never;
  };

  const resolver: QuestionResolver = {
    capabilities: input.capabilities,
    resolve(question) {
      const p = ++position;
      const h = questionDigest(question.request);
      const known = answered.get(p);
      // Answers are pinned to the question shown: after a handler change the stale answer is not applied.
      if (known && known.h === h) {
        const replayed = question.accept(known.a);
        // A journaled answer the current code no longer accepts (a changed refinement) is asked again.
        if ('value' in replayed) {
          journal.push(known);
          return Promise.resolve(replayed.value);
        }
      }
      const last = askedLastRound.get(p);
      const response = last && last.h === h ? input.inputResponses[last.k] : undefined;
      if (response === undefined) return park(p, h, question, question.request);
      const checked = question.accept(response);
      if ('value' in checked) {
        journal.push({ p, h, a: response });
        delete invalidCounts[p];
        return Promise.resolve(checked.value);
      }
      const count = (invalidCounts[p] ?? 0) + 1;
      invalidCounts[p] = count;
      const limit = question.options.maxInvalidAnswers ?? input.maxInvalidAnswers ?? 3;
      if (count > limit) {
        ended = new FlowEnded(`too many invalid answers (${limit}): ${checked.invalid}`, 'invalid_answers');
        suspend?.();
        return never;
      }
      return park(p, h, question, withRetryMessage(question.request, checked.invalid));
    },
    async step(name, run) {
      const p = ++position;
      const h = questionDigest({ step: name });
      const known = answered.get(p);
      if (known && known.h === h) {
        journal.push(known);
        return known.a as never;
      }
      // Effects wait until no question is outstanding in this run: the answer may change what the step should do.
      if (pending.length > 0) return never;
      const value = await run();
      journal.push({ p, h, a: value === undefined ? null : value });
      return value;
    },
  };

  const ask = createAsk(resolver, input.supports);
  let outcome: R | typeof SUSPENDED;
  try {
    outcome = await Promise.race([Promise.resolve().then(() => body(ask)), suspended]);
  } catch (error) {
    if (error instanceof FlowEnded) return { kind: 'ended', error };
    throw error;
  }
  if (ended) return { kind: 'ended', error: ended };
  // A question left unanswered wins over whatever the handler returned: it returned without that answer.
  if (pending.length > 0) {
    const inputRequests: InputRequests = {};
    for (const q of pending) inputRequests[q.k] = q.request;
    const next: FlowJournal = { e: journal, q: pending.map(({ p, h, k }) => ({ p, h, k })) };
    if (Object.keys(invalidCounts).length > 0) next.r = invalidCounts;
    return { kind: 'input_required', inputRequests, journal: next };
  }
  if (outcome === SUSPENDED) throw new Error('flow suspended without a pending question');
  return { kind: 'complete', result: outcome };
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
