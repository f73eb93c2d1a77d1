// A handler's time limit. JavaScript cannot stop a running handler, so on expiry the request is answered at once,
// the handler's signal aborts (it should pass ctx.signal to its I/O), and whatever it settles to later is dropped.
// Time the handler spends waiting for a person (ctx.waitForPerson: an approval, a second factor) does not count.
import { MrtrError } from '../protocol/index.js';

/** The abort reason a handler sees when its time is up. */
export class HandlerTimeoutError extends MrtrError {
  override readonly name = 'HandlerTimeoutError';
  declare readonly code: 'ERR_HANDLER_TIMEOUT';
  constructor(readonly timeoutMs: number) {
    super('ERR_HANDLER_TIMEOUT', `the handler did not finish within ${timeoutMs} ms`);
  }
}

export class Deadline {
  #controller: AbortController | undefined;
  #combined: AbortSignal | undefined;
  #expired = false;
  #detach: (() => void) | undefined;
  #released = false;
  // The clock runs only while the handler works: waits on a person (paused) stop it, and it resumes with what was left.
  #leftMs: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #armedAt = 0;
  #pauses = 0;
  #onExpiry: (() => void) | undefined;

  constructor(readonly timeoutMs: number) {
    this.#leftMs = timeoutMs;
  }

  /** The limit passed: the request has been answered without this handler. */
  get expired(): boolean {
    return this.#expired;
  }

  /**
   * `outer` (the transport's signal: the client went away) joined with this limit. Made only when a handler asks
   * for its signal, so a handler that never looks costs no AbortController.
   */
  signalWith(outer: AbortSignal): AbortSignal {
    if (this.#combined) return this.#combined;
    const controller = new AbortController();
    this.#controller = controller;
    this.#combined = controller.signal;
    if (this.#expired) controller.abort(new HandlerTimeoutError(this.timeoutMs));
    else if (outer.aborted) controller.abort(outer.reason);
    else if (!this.#released) {
      const forward = () => controller.abort(outer.reason);
      outer.addEventListener('abort', forward, { once: true });
      // A custom transport may pass one long-lived signal for every request: never leave a listener behind on it.
      this.#detach = () => outer.removeEventListener('abort', forward);
    }
    return controller.signal;
  }

  /** The round is over (answered or timed out): stop listening to the transport's signal. */
  release(): void {
    this.#released = true;
    this.#onExpiry = undefined;
    this.#stop();
    this.#detach?.();
    this.#detach = undefined;
  }

  /**
   * Settle with `work`, or with `onTimeout()` once the limit passes, whichever comes first. Callers race only what
   * is really asynchronous, so a synchronous handler never costs a timer.
   */
  race<T>(work: Promise<T>, onTimeout: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#onExpiry = () => {
        this.#expired = true;
        this.#controller?.abort(new HandlerTimeoutError(this.timeoutMs));
        this.release();
        try {
          resolve(onTimeout());
        } catch (error) {
          reject(error);
        }
      };
      if (this.#pauses === 0) this.#start();
      // Both callbacks stay attached after a timeout, so a late rejection is handled (and ignored), never unhandled.
      work.then(
        (value) => {
          this.release();
          resolve(value);
        },
        (error: unknown) => {
          this.release();
          reject(error);
        },
      );
    });
  }

  /**
   * Wait for `work` with the clock stopped: the handler waits on a person (an approval, a second factor), not on
   * its own work. The clock resumes with the time it had left once `work` settles.
   */
  paused<T>(work: PromiseLike<T>): Promise<T> {
    if (this.#expired || this.#released) return Promise.resolve(work);
    this.#pauses++;
    this.#stop();
    const resume = () => {
      this.#pauses--;
      if (this.#pauses === 0 && this.#onExpiry) this.#start();
    };
    return Promise.resolve(work).finally(resume);
  }

  #start(): void {
    if (this.#timer !== undefined || !this.#onExpiry) return;
    this.#armedAt = performance.now();
    // Not unref'd: a pending answer is work, so a process whose input ended (stdio) waits to send it.
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        this.#onExpiry?.();
      },
      Math.max(0, this.#leftMs),
    );
  }

  #stop(): void {
    if (this.#timer === undefined) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#leftMs -= performance.now() - this.#armedAt;
  }
}
