// A turnstile: tasks run one after another in the order they arrived. A person reads one question at a time, so
// whatever asks them (concurrent server requests, concurrent calls) waits its turn instead of drawing over another.
import { untilAborted } from '../protocol/internal.js';
import { abortError, RequestAborted } from './errors.js';

/** Runs `task` once every task handed in before it has settled; `signal` gives up the place in the line. */
export type Turnstile = <T>(signal: AbortSignal, task: () => Promise<T>) => Promise<T>;

export function oneAtATime(): Turnstile {
  let last: Promise<void> = Promise.resolve();
  return async (signal, task) => {
    const before = last;
    let release!: () => void;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The next task waits for this one and, if this one gives up early, still for the one before it.
    last = before.then(() => mine);
    try {
      await untilAborted(before, signal, (s) => {
        throw abortError(s);
      });
      if (signal.aborted) throw new RequestAborted(signal.reason);
      return await task();
    } finally {
      release();
    }
  };
}
