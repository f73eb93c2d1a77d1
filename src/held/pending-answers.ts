// Things held open until the other side answers: each under an id, in a group (the 2025 session that was asked, the
// caller a held call belongs to) that alone may answer it, with a time limit, a cancellation signal and a place in
// the holders' fair shares. The 2025 bridge waits here for a client's answers to its questions; the client's held
// 2025 upstream calls wait here for their next round. An answer from the wrong group is no answer: ids travel
// through the other side, which may be anyone.
import type { FairShares } from './fair-shares.js';

export interface WaitFor<C> {
  /** Unique among the things waiting here; whoever answers names it. */
  id: string;
  /** Whose fair share the wait takes. */
  holder: string;
  /** Only an answer given for this group settles the wait. */
  group: string;
  /** Past this, the wait fails with `timedOut()`. */
  timeoutMs: number;
  /** Aborting fails the wait with `cancelled()`. */
  signal?: AbortSignal;
  timedOut: () => Error;
  cancelled: () => Error;
  /** What the waiter tells whoever looks it up before answering (`peek`). */
  context: C;
}

interface Waiting<A, C> {
  group: string;
  context: C;
  settle(answer: A): void;
  fail(error: Error): void;
}

export class PendingAnswers<A, C = undefined> {
  readonly #waiting = new Map<string, Waiting<A, C>>();

  /** `shares`: the places waits take (none: unbounded here, the caller bounds what it holds). */
  constructor(private readonly shares?: FairShares) {}

  /** Waits in progress. */
  get size(): number {
    return this.#waiting.size;
  }

  /**
   * Wait for the answer to `for.id`. Refused at once (the share's refusal, or `cancelled()` when the signal has
   * already aborted) without calling `onWaiting`; otherwise `onWaiting` runs once the wait can be answered (send the
   * question there, so an answer arriving at once finds it).
   */
  wait(w: WaitFor<C>, onWaiting?: () => void): Promise<A> {
    const refused = this.shares?.take(w.id, w.holder, w.group, Date.now() + w.timeoutMs);
    if (refused) return Promise.reject(refused);
    return new Promise<A>((resolve, reject) => {
      const timer = setTimeout(() => end(() => reject(w.timedOut())), w.timeoutMs);
      timer.unref?.();
      const onAbort = () => end(() => reject(w.cancelled()));
      const end = (then: () => void) => {
        clearTimeout(timer);
        w.signal?.removeEventListener('abort', onAbort);
        this.#waiting.delete(w.id);
        this.shares?.give(w.id);
        then();
      };
      if (w.signal?.aborted) return onAbort();
      w.signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiting.set(w.id, {
        group: w.group,
        context: w.context,
        settle: (answer) => end(() => resolve(answer)),
        fail: (error) => end(() => reject(error)),
      });
      onWaiting?.();
    });
  }

  /** The context of the wait `id` of `group`, if one is waiting (nothing of another group's wait is told). */
  peek(id: string, group: string): C | undefined {
    const w = this.#waiting.get(id);
    return w && w.group === group ? w.context : undefined;
  }

  /** Answer the wait `id`; false when none waits under that id for `group`. */
  settle(id: string, group: string, answer: A): boolean {
    const w = this.#waiting.get(id);
    if (!w || w.group !== group) return false;
    w.settle(answer);
    return true;
  }

  /** Fail every wait of `group` (its session ended, its caller went away). */
  failGroup(group: string, error: () => Error): void {
    for (const w of [...this.#waiting.values()]) if (w.group === group) w.fail(error());
  }

  /** Fail every wait (the server or client is closing). */
  failAll(error: () => Error): void {
    for (const w of [...this.#waiting.values()]) w.fail(error());
  }
}
