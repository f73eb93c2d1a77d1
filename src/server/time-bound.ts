// A time bound on the promises of code the server waits for but does not own: a guard's store, an observer's sink.
// A store that hangs (a Redis that stopped answering, a disk that stalled) must not hold requests open for ever:
// past the bound the server stops waiting and answers, failing closed where waiting guarded something.
import { ErrorCode, McpError } from '../protocol/index.js';

/** Why a round's guard or observer was given up on. Sent as -32603, with the reason in `data` for the trail. */
export class HookTimeoutError extends McpError {
  override readonly name = 'HookTimeoutError';
  constructor(
    readonly reason: 'guard_timeout' | 'observer_timeout',
    /** What did not answer, for the operator's log. */
    readonly what: string,
    readonly limitMs: number,
    /** What the client is told did not answer (a guard's name is ours, not the client's to learn). */
    shown: string = what,
  ) {
    super(ErrorCode.InternalError, `Internal error: ${shown} did not answer within ${limitMs} ms`, {
      reason,
    });
  }
}

/** `work`, or a rejection with `late()` once `limitMs` passed, whichever comes first. */
export function withinTime<T>(work: PromiseLike<T>, limitMs: number, late: () => unknown): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(late()), limitMs);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** `work`, or undefined once `limitMs` passed: for hooks whose failure is not the round's (release, refused). */
export function atMost(work: PromiseLike<unknown>, limitMs: number): Promise<void> {
  return withinTime(work, limitMs, () => undefined).then(
    () => undefined,
    () => undefined,
  );
}
