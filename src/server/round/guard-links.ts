// The adapter that joins RoundGuards to the chain: each hook becomes a link at its place. Screens run in guard order
// before the state opens; admits in order after it; commits in reverse order on the way back (the outermost guard
// records last); a guard lets go (release) when anything after its admit failed; asks run in the flow.
import { type Result, RoundRefused } from '../../protocol/index.js';
import { isThenable, type MaybePromise, thenOrNow } from '../maybe-async.js';
import { atMost } from '../time-bound.js';
import type { GuardedRound, RoundGuard } from './guard.js';
import { blamed, bounded, reportRefusal, screenName } from './guard-calls.js';
import type { RoundLink } from './link.js';
import type { Round } from './round.js';

/** Each guard's `screen`, before the state opens, in guard order (required scopes, the refusal limit, …). */
export function screenLinks(guards: readonly RoundGuard[], limitMs: number): RoundLink[] {
  return guards.flatMap((guard) => {
    const screen = guard.screen?.bind(guard);
    if (!screen) return [];
    const name = screenName(guard);
    const link: RoundLink = {
      name,
      handle(round, next) {
        let done: void | Promise<void>;
        try {
          done = screen(round.screened);
        } catch (error) {
          blamed(error, guard, name);
        }
        if (!isThenable(done)) return next();
        return bounded(done, guard, limitMs).then(next, (error: unknown) => blamed(error, guard, name));
      },
    };
    return [link];
  });
}

/**
 * Every refusal from here on (a state that does not open, a guard's, answers invalid past their limit) is told to
 * every guard's `refused` before it is sent: a refusal limit counts them. None when no guard listens.
 */
export function refusalReporting(guards: readonly RoundGuard[], limitMs: number): RoundLink[] {
  if (!guards.some((guard) => guard.refused)) return [];
  const tell = (round: Round, reason: string) => reportRefusal(guards, round.screened, reason, limitMs);
  const link: RoundLink = {
    name: 'refusal reporting',
    handle(round, next) {
      const refused = (error: unknown): never | Promise<never> => {
        if (!(error instanceof RoundRefused) || error === round.quiet || round.outlived) throw error;
        return thenOrNow(tell(round, error.reason), () => {
          throw error;
        });
      };
      // Answers invalid past their limit end the call with a result, yet count as a refusal of the caller.
      const told = (result: Result) =>
        round.refusal === undefined ? result : thenOrNow(tell(round, round.refusal), () => result);
      let result: MaybePromise<Result>;
      try {
        result = next();
      } catch (error) {
        return refused(error);
      }
      return result instanceof Promise ? result.then(told, refused) : told(result);
    },
  };
  return [link];
}

/**
 * Each guard's `admit`, then its `commit` once the rest answered, or its `release` when the rest failed. A guard
 * that answers in admit stops the chain there: the guards before it commit that answer.
 */
export function admitLinks(guards: readonly RoundGuard[], limitMs: number): RoundLink[] {
  return guards
    .filter((guard) => guard.admit || guard.commit || guard.release)
    .map((guard) => ({
      name: guard.name,
      handle(round: Round, next: () => MaybePromise<Result>): MaybePromise<Result> {
        const view = round.guarded;
        // biome-ignore lint/suspicious/noConfusingVoidType: what admit returns, as declared on RoundGuard.
        let verdict: void | Result | Promise<void | Result>;
        try {
          verdict = guard.admit?.(view);
        } catch (error) {
          blamed(error, guard);
        }
        if (isThenable(verdict))
          return bounded(verdict, guard, limitMs).then(
            (v) => admitted(guard, round, view, v, next, limitMs),
            (error: unknown) => blamed(error, guard),
          );
        return admitted(guard, round, view, verdict, next, limitMs);
      },
    }));
}

function admitted(
  guard: RoundGuard,
  round: Round,
  view: GuardedRound,
  // biome-ignore lint/suspicious/noConfusingVoidType: what admit returns, as declared on RoundGuard.
  verdict: Result | undefined | void,
  next: () => MaybePromise<Result>,
  limitMs: number,
): MaybePromise<Result> {
  if (verdict) {
    // The guard answered in the handler's place (e.g. the recorded answer to an identical retry).
    round.trace?.answeredBy(guard.name);
    return (verdict as Partial<Result>).resultType === undefined
      ? { ...verdict, resultType: 'complete' }
      : verdict;
  }
  const letGo = (error: unknown): never | Promise<never> =>
    thenOrNow(release(guard, view, error, limitMs), () => {
      throw error;
    });
  const failed = (error: unknown): never | Promise<never> => {
    const work = round.work;
    if (work && !round.workSettled && error !== round.quiet) {
      // Answered before the handler finished (its time limit passed): release means "nothing this round started
      // can still take effect", so the guard lets go only once the handler's work has settled.
      const later = () => release(guard, view, error, limitMs);
      work.then(later, later);
      throw error;
    }
    return letGo(error);
  };
  // A commit that throws fails the round: this guard and the ones outside it let go; the ones inside committed.
  const commitFailed = (error: unknown) => {
    round.quiet = error;
    return letGo(error);
  };
  const commit = (result: Result): MaybePromise<Result> => {
    let done: void | Promise<void>;
    try {
      done = guard.commit?.(view, result);
    } catch (error) {
      return commitFailed(error);
    }
    return isThenable(done) ? bounded(done, guard, limitMs).then(() => result, commitFailed) : result;
  };
  let result: MaybePromise<Result>;
  try {
    result = next();
  } catch (error) {
    return failed(error);
  }
  return result instanceof Promise ? result.then(commit, failed) : commit(result);
}

/** A guard failing to let go is not the round's error; one that hangs is waited for no longer than `limitMs`. */
function release(
  guard: RoundGuard,
  view: GuardedRound,
  error: unknown,
  limitMs: number,
): undefined | Promise<unknown> {
  try {
    const done = guard.release?.(view, error);
    if (isThenable(done)) return atMost(done, limitMs);
  } catch {
    // release must not throw; if one does anyway, the other guards still get to let go.
  }
  return undefined;
}

/** Where ask.step results of this round's flow are kept: the first guard that keeps them. */
export function stepLedgerLinks(guards: readonly RoundGuard[]): RoundLink[] {
  const keeping = guards.filter((guard) => guard.stepLedger);
  if (keeping.length === 0) return [];
  const link: RoundLink = {
    name: 'step ledger',
    handle(round, next) {
      for (const guard of keeping) {
        round.steps = guard.stepLedger?.(round.guarded);
        if (round.steps) break;
      }
      return next();
    },
  };
  return [link];
}

/** Each guard's `ask`, in the flow before the handler: it may ask with `round.ctx`, answer, refuse or pass. */
export function askLinks(guards: readonly RoundGuard[]): RoundLink[] {
  return guards.flatMap((guard) => {
    const ask = guard.ask?.bind(guard);
    if (!ask) return [];
    const link: RoundLink = {
      name: guard.name,
      handle(round, next) {
        const after = (answer: unknown): MaybePromise<Result> => {
          if (!answer) return next();
          round.answeredBy = guard.name;
          return answer as Result;
        };
        let asked: unknown;
        try {
          asked = ask(round.guarded, round.ctx!);
        } catch (error) {
          blamed(error, guard);
        }
        if (!isThenable(asked)) return after(asked);
        return Promise.resolve(asked).then(after, (error: unknown) => blamed(error, guard));
      },
    };
    return [link];
  });
}
