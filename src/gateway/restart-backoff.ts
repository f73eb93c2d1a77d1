// When a dead stdio upstream may be started again. The first death is a restart at once (the next call must not
// fail for it); a process that keeps dying before it ever answers is started again ever more slowly, up to once a
// minute, so a broken command does not spin a process per call.
import { TransportFailure } from '../client/index.js';

/** The longest wait between two starts of a process that keeps dying (ms). */
export const MAX_RESTART_WAIT_MS = 60_000;

export class RestartBackoff {
  #deaths = 0;
  #lastDeath = 0;
  #lastWhy = '';

  constructor(
    private readonly upstream: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** Deaths in a row, with no answer from any of those processes in between. */
  get deaths(): number {
    return this.#deaths;
  }

  /** A process died (`why`: how it ended). */
  died(why: string): void {
    this.#deaths++;
    this.#lastDeath = this.now();
    this.#lastWhy = why;
  }

  /** A process answered: it started well, so the count starts over. */
  answered(): void {
    this.#deaths = 0;
  }

  /** Throws a TransportFailure naming the upstream while a new start must wait; returns when one may start now. */
  checkStart(): void {
    if (this.#deaths < 2) return;
    const waitMs = Math.min(MAX_RESTART_WAIT_MS, 1000 * 2 ** (this.#deaths - 2));
    const left = this.#lastDeath + waitMs - this.now();
    if (left <= 0) return;
    throw new TransportFailure(
      `upstream ${this.upstream} cannot start: its process ended ${this.#deaths} times in a row without answering (last: ${this.#lastWhy.split('\n')[0]}); the next start is tried in ${Math.ceil(left / 1000)} s`,
    );
  }
}
