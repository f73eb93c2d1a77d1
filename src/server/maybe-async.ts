// Synchronous handlers must stay synchronous end to end (no promise, no microtask): these helpers apply the next
// step now when a value is ready, or when it arrives.

export type MaybePromise<T> = T | Promise<T>;

export const thenOrNow = <T, U>(value: MaybePromise<T>, next: (v: T) => MaybePromise<U>): MaybePromise<U> =>
  value instanceof Promise ? value.then(next) : next(value);

/**
 * Any thenable counts, not only a Promise of this realm: a store or a sink built on a query builder or another
 * library's promise is awaited (and bounded) the same way.
 */
export const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
