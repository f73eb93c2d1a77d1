// The one race between a wait and an AbortSignal, for every room: the listener is always removed, the abort is
// reported the way the caller asks, and work that settles after the abort is observed (never an unhandled rejection).

const throwReason = (signal: AbortSignal): never => {
  throw signal.reason;
};

/**
 * `work`'s outcome; or, once `signal` aborts (before or while `work` runs), what `onAbort` returns or throws — by
 * default it throws the signal's reason. The work itself is not stopped: it goes on, unobserved.
 */
export function untilAborted<T, A = never>(
  work: Promise<T>,
  signal: AbortSignal | undefined,
  onAbort: (signal: AbortSignal) => A = throwReason,
): Promise<T | A> {
  if (!signal) return work;
  return new Promise<T | A>((resolve, reject) => {
    const aborted = () => {
      try {
        resolve(onAbort(signal));
      } catch (error) {
        reject(error);
      }
    };
    const settle = () => signal.removeEventListener('abort', aborted);
    work.then(
      (value) => {
        settle();
        resolve(value);
      },
      (error: unknown) => {
        settle();
        reject(error);
      },
    );
    if (signal.aborted) aborted();
    else signal.addEventListener('abort', aborted, { once: true });
  });
}

/**
 * Resolves after `ms`; or, once `signal` aborts, settles as `onAbort` says (default: throws the reason) and clears
 * the timer. `unref`: the timer does not keep the process alive.
 */
export function pauseUntilAborted<A = never>(
  ms: number,
  signal: AbortSignal | undefined,
  onAbort: (signal: AbortSignal) => A = throwReason,
  { unref = false }: { unref?: boolean } = {},
): Promise<undefined | A> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const elapsed = new Promise<undefined>((done) => {
    timer = setTimeout(() => done(undefined), ms);
    if (unref) (timer as { unref?: () => void }).unref?.();
  });
  return untilAborted(elapsed, signal, (s) => {
    clearTimeout(timer);
    return onAbort(s);
  });
}

/**
 * Abort `controller` with `outer`'s reason once `outer` aborts (at once if it has): one signal carries both, without
 * AbortSignal.any's weak references on every request. Call the returned function when done: a long-lived `outer`
 * then keeps no listener behind.
 */
export function followAbort(outer: AbortSignal | undefined, controller: AbortController): () => void {
  if (!outer) return noop;
  if (outer.aborted) {
    controller.abort(outer.reason);
    return noop;
  }
  const forward = () => controller.abort(outer.reason);
  outer.addEventListener('abort', forward, { once: true });
  return () => outer.removeEventListener('abort', forward);
}

const noop = () => {};
