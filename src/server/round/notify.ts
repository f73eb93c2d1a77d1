// Asking every round observer for room before a round, and telling every one about its event afterwards. The telling: shared by the dispatcher (rounds) and the HTTP transport (requests it
// refused before they reached the dispatcher), so both hold their answer until a durable observer has settled.
import type { RoundEvent, RoundObserver } from './observer.js';

/**
 * Undefined when every observer returned at once (no promise made: the fast path); else a promise that settles
 * when they all have. Throws, or rejects, with the first observer's failure.
 */
export function notifyObservers(
  observers: readonly RoundObserver[],
  event: RoundEvent,
): undefined | Promise<void> {
  const pending: Promise<void>[] = [];
  for (const observer of observers) {
    const done: unknown = observer.observe(event);
    // Any thenable counts: an audit write through a query builder or another library's promise is awaited too.
    if (typeof (done as { then?: unknown } | undefined)?.then === 'function') {
      pending.push(Promise.resolve(done as PromiseLike<void>));
    }
  }
  if (pending.length === 0) return undefined;
  if (pending.length === 1) return pending[0];
  return Promise.all(pending).then(() => undefined);
}

/** Undefined when every observer admits the round at once; else a promise that settles when they all have. */
export function admitRound(observers: readonly RoundObserver[]): undefined | Promise<unknown> {
  const waiting: Promise<unknown>[] = [];
  for (const observer of observers) {
    const room: unknown = observer.admit?.();
    if (typeof (room as { then?: unknown } | undefined)?.then === 'function')
      waiting.push(Promise.resolve(room as PromiseLike<unknown>));
  }
  if (waiting.length === 0) return undefined;
  return waiting.length === 1 ? waiting[0] : Promise.all(waiting);
}
