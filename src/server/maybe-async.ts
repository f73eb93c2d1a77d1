// Synchronous handlers must stay synchronous end to end (no promise, no microtask): these helpers apply the next
// step now when a value is ready, or when it arrives.

export type MaybePromise<T> = T | Promise<T>;

export const thenOrNow = <T, U>(value: MaybePromise<T>, next: (v: T) => MaybePromise<U>): MaybePromise<U> =>
  value instanceof Promise ? value.then(next) : next(value);
