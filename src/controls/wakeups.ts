// In-process wake-ups for checks that wait for a person: a pending step-up or approval check holds its round for a
// while instead of answering "still waiting" at once (clients that retry immediately would spend their round cap in
// seconds), and the page that records the person's action wakes it. Another instance's page cannot wake it: there
// the hold ends at its limit and the round reads the shared store afresh.
import type { ControlContext } from './context.js';

export class Wakeups {
  private readonly waiting = new Map<string, Set<() => void>>();

  /** Resolves on `wake(key)`, after `ms`, or when `signal` aborts (the client went away), whichever comes first. */
  wait(key: string, ms: number, signal?: AbortSignal): Promise<void> {
    if (ms <= 0 || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        const set = this.waiting.get(key);
        set?.delete(done);
        if (set?.size === 0) this.waiting.delete(key);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
      let set = this.waiting.get(key);
      if (!set) {
        set = new Set();
        this.waiting.set(key, set);
      }
      set.add(done);
    });
  }

  wake(key: string): void {
    for (const done of [...(this.waiting.get(key) ?? [])]) done();
  }

  /** Checks holding now (tests and metrics). */
  get size(): number {
    let n = 0;
    for (const set of this.waiting.values()) n += set.size;
    return n;
  }
}

/**
 * A check's hold: the round waits on a person, so the handler's time limit stops meanwhile (a 5 s limit would
 * otherwise end the call while the approver reads the request). After the hold the check asks its question again.
 */
export function heldForPerson(ctx: ControlContext, hold: Promise<void>): Promise<void> {
  return ctx.waitForPerson ? ctx.waitForPerson(hold) : hold;
}

/** The person answered the previous round's link with "accept": their client came back to check, so hold. */
export function cameBack(inputResponses: Readonly<Record<string, unknown>>, key: string): boolean {
  const previous = Object.hasOwn(inputResponses, key) ? inputResponses[key] : undefined;
  return (previous as { action?: unknown } | undefined)?.action === 'accept';
}

/** The person answered the previous round's link with decline or cancel, or undefined. */
export function gaveUp(
  inputResponses: Readonly<Record<string, unknown>>,
  key: string,
): 'decline' | 'cancel' | undefined {
  const previous = Object.hasOwn(inputResponses, key) ? inputResponses[key] : undefined;
  const action = (previous as { action?: unknown } | undefined)?.action;
  return action === 'decline' || action === 'cancel' ? action : undefined;
}
