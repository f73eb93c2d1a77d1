// A guard's hooks called with their bounds: a pending answer given up on past hookTimeoutMs, a refusal named after
// its guard, every guard told of a refusal, and the screens run outside a round (a completion).
import { RoundRefused } from '../../protocol/index.js';
import { isThenable } from '../maybe-async.js';
import { atMost, HookTimeoutError, withinTime } from '../time-bound.js';
import type { RoundGuard, ScreenedRound } from './guard.js';

/** A guard's pending answer, given up on past `limitMs` (its store hangs): the round then fails closed. */
export function bounded<T>(work: PromiseLike<T>, guard: RoundGuard, limitMs: number): Promise<T> {
  return withinTime(
    work,
    limitMs,
    () =>
      new HookTimeoutError('guard_timeout', `round guard "${guard.name}"`, limitMs, 'a check of this round'),
  );
}

/** Name the guard on its refusal, for the observers (the client never sees it); rethrow it. */
export function blamed(error: unknown, guard: RoundGuard, name: string = guard.name): never {
  if (error instanceof RoundRefused) error.refusedBy ??= name;
  throw error;
}

/**
 * What a guard's screen is called in a trace, the metrics and the audit trail (one name each, snake_case like the
 * policy's `step_up`): mrtr's own guards screen for the caller's scopes and its refusal count.
 */
const SCREEN_NAMES: ReadonlyMap<string, string> = new Map([
  ['required-scopes', 'scopes'],
  ['replay', 'refusal_limit'],
]);

/** The control a guard's screen is. */
export function screenName(guard: RoundGuard): string {
  return SCREEN_NAMES.get(guard.name) ?? guard.name;
}

/** Run each guard's `screen` in order, outside a round (a completion screened like the round it completes for). */
export function screenRound(
  guards: readonly RoundGuard[],
  round: ScreenedRound,
  limitMs: number,
  from = 0,
): void | Promise<void> {
  for (let i = from; i < guards.length; i++) {
    const guard = guards[i]!;
    if (!guard.screen) continue;
    let done: void | Promise<void>;
    try {
      done = guard.screen(round);
    } catch (error) {
      blamed(error, guard, screenName(guard));
    }
    if (isThenable(done))
      return bounded(done, guard, limitMs).then(
        () => screenRound(guards, round, limitMs, i + 1),
        (error: unknown) => blamed(error, guard, screenName(guard)),
      );
  }
}

/** Tell every guard that the round was refused and why. A guard failing to listen is not the round's error. */
export function reportRefusal(
  guards: readonly RoundGuard[],
  round: ScreenedRound,
  reason: string,
  limitMs: number,
): void | Promise<void> {
  const pending: Promise<unknown>[] = [];
  for (const guard of guards) {
    try {
      const done = guard.refused?.(round, reason);
      if (isThenable(done)) pending.push(atMost(done, limitMs));
    } catch {
      // refused must not throw; the other guards are still told.
    }
  }
  if (pending.length > 0) return Promise.all(pending).then(() => undefined);
}
