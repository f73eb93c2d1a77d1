// A handler's time limit. JavaScript cannot stop a running handler, so on expiry the request is answered at once,
// the handler's signal aborts (it should pass ctx.signal to its I/O), and whatever it settles to later is dropped.
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

  constructor(readonly timeoutMs: number) {}

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
    this.#detach?.();
    this.#detach = undefined;
  }

  /**
   * Settle with `work`, or with `onTimeout()` once the limit passes, whichever comes first. Callers race only what
   * is really asynchronous, so a synchronous handler never costs a timer.
   */
  race<T>(work: Promise<T>, onTimeout: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      // Not unref'd: a pending answer is work, so a process whose input ended (stdio) waits to send it.
      const timer = setTimeout(() => {
        this.#expired = true;
        this.#controller?.abort(new HandlerTimeoutError(this.timeoutMs));
        this.release();
        try {
          resolve(onTimeout());
        } catch (error) {
          reject(error);
        }
      }, this.timeoutMs);
      // Both callbacks stay attached after a timeout, so a late rejection is handled (and ignored), never unhandled.
      work.then(
        (value) => {
          clearTimeout(timer);
          this.release();
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          this.release();
          reject(error);
        },
      );
    });
  }
}
