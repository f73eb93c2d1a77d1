// One round of questions answered: who answers what is decided before anyone is asked, machines answer at once, a
// person one question at a time in the server's order. Shared by MRTR rounds and a task's inputRequests, so both
// are answered by the same resolvers under the same rules.
import { emptyRecord, type InputResponse, type InputResponses } from '../protocol/index.js';
import { describeError, RequestAborted } from './errors.js';
import type { InputQuestion } from './input.js';
import { type InputResolver, isElicitResult, pickResolver, type ResolveContext } from './resolvers.js';

export interface PendingQuestion {
  key: string;
  kind: InputQuestion['kind'];
  message: string | undefined;
  /** A person's reason (consent, second_factor, approval, url, unspecified), or 'no_resolver'. */
  why: NonNullable<InputQuestion['personRequired']> | 'no_resolver';
}

export const pendingOf = (q: InputQuestion, why?: PendingQuestion['why']): PendingQuestion => ({
  key: q.key,
  kind: q.kind,
  message: q.message,
  why: why ?? q.personRequired ?? 'no_resolver',
});

/** Internal to the client: caught by the driver and ended as the `resolver_error` outcome, never thrown at a caller. */
export class ResolverFailed extends Error {
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(message);
  }
}

export interface AnsweredQuestion {
  key: string;
  by: string;
  action: 'accept' | 'decline' | 'cancel' | undefined;
}

/**
 * Answer every question, or none: when one has nobody to answer it, nobody is asked anything and the questions
 * without an answerer come back as `unanswerable`. Throws ResolverFailed for a resolver that fails or answers an
 * elicitation without a valid action, RequestAborted when the signal ends it.
 */
export async function answerQuestions(
  questions: readonly InputQuestion[],
  resolvers: readonly InputResolver[],
  ctx: ResolveContext,
  onAnswered: (answered: AnsweredQuestion) => void,
): Promise<{ answers: InputResponses } | { unanswerable: PendingQuestion[] }> {
  const plan = questions.map((q) => {
    try {
      return { q, r: pickResolver(resolvers, q, ctx) };
    } catch (error) {
      throw new ResolverFailed(q.key, `could not decide who answers "${q.key}": ${describeError(error)}`);
    }
  });
  const unanswerable = plan.filter((p) => p.r === undefined);
  if (unanswerable.length > 0) return { unanswerable: unanswerable.map((p) => pendingOf(p.q)) };

  // Keyed by the server's input keys: `__proto__` must stay a key that is sent, not become the prototype.
  const answers: InputResponses = emptyRecord();
  const answer = async (q: InputQuestion, r: InputResolver) => {
    let a: InputResponse;
    try {
      a = await r.resolve(q, ctx);
    } catch (error) {
      if (ctx.signal.aborted || error instanceof RequestAborted) throw error;
      throw new ResolverFailed(q.key, `${r.name} could not answer "${q.key}": ${describeError(error)}`);
    }
    if (q.kind.startsWith('elicitation') && !isElicitResult(a))
      throw new ResolverFailed(q.key, `${r.name} gave "${q.key}" an answer without a valid action`);
    answers[q.key] = a;
    onAnswered({ key: q.key, by: r.name, action: isElicitResult(a) ? a.action : undefined });
  };
  // Machines answer concurrently; a person answers one question at a time, in the server's order.
  const machine = Promise.allSettled(
    plan.filter((p) => !p.r?.person).map((p) => answer(p.q, p.r as InputResolver)),
  );
  let personError: unknown;
  try {
    for (const p of plan) if (p.r?.person) await answer(p.q, p.r);
  } catch (error) {
    personError = error;
  }
  const settled = await machine;
  if (personError !== undefined) throw personError;
  for (const s of settled) if (s.status === 'rejected') throw s.reason;
  return { answers };
}
