// The round observers' three moments: asking each for room before a round, telling each the round's intent before
// its handler runs, and telling each the round's event once it ended. The telling of events is shared by the
// dispatcher (rounds) and the HTTP transport (requests it refused before they reached the dispatcher), so both hold
// their answer until a durable observer has settled. Every wait is bounded: an observer that hangs fails the round.
import { isThenable } from '../maybe-async.js';
import { HookTimeoutError, withinTime } from '../time-bound.js';
import type { RoundEvent, RoundIntent, RoundObserver } from './observer.js';

/** Undefined when nothing was returned to wait for (the fast path); else all of them, bounded by `limitMs`. */
function waitForAll(
  pending: PromiseLike<unknown>[],
  limitMs: number,
  what: string,
): undefined | Promise<void> {
  if (pending.length === 0) return undefined;
  const all = pending.length === 1 ? pending[0]! : Promise.all(pending);
  return withinTime(all, limitMs, () => new HookTimeoutError('observer_timeout', what, limitMs)).then(
    () => undefined,
  );
}

/**
 * Undefined when every observer returned at once (no promise made: the fast path); else a promise that settles
 * when they all have. Throws, or rejects, with the first observer's failure, or a HookTimeoutError past `limitMs`.
 */
export function notifyObservers(
  observers: readonly RoundObserver[],
  event: RoundEvent,
  limitMs: number,
): undefined | Promise<void> {
  const pending: PromiseLike<unknown>[] = [];
  for (const observer of observers) {
    const done: unknown = observer.observe(event);
    if (isThenable(done)) pending.push(done);
  }
  return waitForAll(pending, limitMs, 'recording the round');
}

/** Undefined when every observer has room for the round at once; else a promise that settles when they all have. */
export function askObserversForRoom(
  observers: readonly RoundObserver[],
  limitMs: number,
): undefined | Promise<void> {
  const pending: PromiseLike<unknown>[] = [];
  for (const observer of observers) {
    const room: unknown = observer.admit?.();
    if (isThenable(room)) pending.push(room);
  }
  return waitForAll(pending, limitMs, 'the round observers (no room to record the round)');
}

/**
 * Tell every observer with an `intend` hook what the round is about to do. Undefined when none made it wait; else a
 * promise that settles when the intent is recorded everywhere. Throws, or rejects, when any observer could not.
 */
export function recordIntent(
  observers: readonly RoundObserver[],
  intent: RoundIntent,
  limitMs: number,
): undefined | Promise<void> {
  const pending: PromiseLike<unknown>[] = [];
  for (const observer of observers) {
    const done: unknown = observer.intend?.(intent);
    if (isThenable(done)) pending.push(done);
  }
  return waitForAll(pending, limitMs, "recording the round's intent");
}
