// The 2025 upstream calls round() holds between rounds, each under a handle its holder presents as the next round's
// requestState. A held call waits in the held room's table (held/pending-answers.ts) for that round; the holders'
// fair shares (held/fair-shares.ts) bound the calls each holder may hold and all of them together; a call nobody
// comes back for within the time limit is dropped — its upstream request cancelled, its handle refused from then on.
// A handle is 32 random bytes (nobody guesses one), good for one round (the next input_required brings a new one),
// and answers only to its holder: another holder presenting it learns nothing, not even that it exists.
import { randomBytes } from 'node:crypto';
import { FairShares, PendingAnswers, shareLimitProblem, slowedRefusal } from '../held/index.js';
import { ErrorCode, InvalidOptionError, McpError } from '../protocol/index.js';
import { HeldCallError } from './errors.js';
import type { UpstreamCall } from './upstream-call.js';

export interface HeldCallLimits {
  /** How long a held call waits for its next round before it is dropped (ms). */
  holdMs: number;
  /** Calls one holder may hold at once (from its start to its end). */
  maxPerHolder: number;
  /** Calls held at once, all holders together. */
  maxTotal: number;
}

type Ended = 'expired' | 'used';

export class HeldCalls {
  readonly #limits: HeldCallLimits;
  readonly #shares: FairShares;
  /** Calls waiting for their next round, by handle, grouped by holder. */
  readonly #waiting = new PendingAnswers<true, UpstreamCall>();
  /** Calls that have their place in a share (held, or in a round between two holds). */
  readonly #placed = new WeakMap<UpstreamCall, string>();
  /** Handles no longer held and why, so their holder hears a clear reason (the oldest forgotten past `maxTotal`). */
  readonly #ended = new Map<string, { holder: string; why: Ended }>();
  #count = 0;

  constructor(limits: HeldCallLimits) {
    const problem = shareLimitProblem(
      { total: limits.maxTotal, perHolder: limits.maxPerHolder },
      { total: 'heldCalls.maxTotal', perHolder: 'heldCalls.maxPerHolder' },
    );
    if (problem) throw new InvalidOptionError(problem);
    if (!(Number.isFinite(limits.holdMs) && limits.holdMs > 0))
      throw new InvalidOptionError(
        `heldCalls.holdMs must be a positive number of milliseconds, got ${limits.holdMs}`,
      );
    this.#limits = limits;
    const tooMany = (what: string, seconds: number) =>
      slowedRefusal(
        'held_call_share_full',
        `Too many held calls: ${what}; finish or abandon them, or retry after ${seconds} s`,
        seconds,
      );
    this.#shares = new FairShares(
      { total: limits.maxTotal, perHolder: limits.maxPerHolder },
      {
        perHolder: (count, limit, seconds) =>
          tooMany(`${count} calls of this holder are already open (limit ${limit})`, seconds),
        total: (limit) =>
          new McpError(
            ErrorCode.InternalError,
            `Busy: ${limit} calls to 2025 servers are already open here; try again later`,
          ),
      },
    );
  }

  /** Calls held or in a round, all holders together. */
  get size(): number {
    return this.#shares.size;
  }

  /**
   * Give `call` its place in `holder`'s share as it starts, before anything is sent: a call to a 2025 server may ask
   * and be held at any moment, so its place is taken now and kept until it ends. Taken only at its first question,
   * a holder could start any number of calls at once and be refused only after the server had begun them all.
   * Throws the refusal (a holder past its share, the pool full).
   */
  enter(call: UpstreamCall, holder: string): void {
    if (this.#placed.has(call)) return;
    const place = `call-${++this.#count}`;
    const refused = this.#shares.take(place, holder, holder, Date.now() + this.#limits.holdMs);
    if (refused) throw refused;
    this.#placed.set(call, place);
    void call.ended.then(() => this.#shares.give(place));
  }

  /** Hold `call` (placed by `enter` as it started) for its next round and return its handle. */
  hold(call: UpstreamCall, holder: string): string {
    if (!this.#placed.has(call)) {
      // A call that started outside enter() takes its place now, or is dropped.
      try {
        this.enter(call, holder);
      } catch (refused) {
        call.cancel(refused as Error);
        throw refused;
      }
    }
    const handle = randomBytes(32).toString('base64url');
    const seconds = Math.round(this.#limits.holdMs / 1000);
    this.#waiting
      .wait({
        id: handle,
        holder,
        group: holder,
        timeoutMs: this.#limits.holdMs,
        timedOut: () =>
          new HeldCallError(
            'ERR_HELD_CALL_EXPIRED',
            `the held call expired: no round came back for it within ${seconds} s, so its upstream call was cancelled`,
          ),
        cancelled: () => new HeldCallError('ERR_HELD_CALL_UNKNOWN', 'the held call was dropped'),
        context: call,
      })
      .then(
        () => {},
        (error: Error) => {
          if (error instanceof HeldCallError && error.code === 'ERR_HELD_CALL_EXPIRED')
            this.#remember(handle, holder, 'expired');
          call.cancel(error);
        },
      );
    return handle;
  }

  /**
   * The call `handle` holds for `holder`, to look at before the round takes it (its method, its questions), or the
   * HeldCallError saying why there is none.
   */
  peek(handle: string, holder: string): UpstreamCall {
    const call = this.#waiting.peek(handle, holder);
    if (call) return call;
    const ended = this.#ended.get(handle);
    if (ended?.holder === holder && ended.why === 'expired')
      throw new HeldCallError(
        'ERR_HELD_CALL_EXPIRED',
        `requestState names a held call that expired: no round came back for it within ${Math.round(this.#limits.holdMs / 1000)} s, so its upstream call was cancelled`,
      );
    if (ended?.holder === holder)
      throw new HeldCallError(
        'ERR_HELD_CALL_USED',
        'requestState was already used: a held call’s requestState is good for one round; send the one its latest input_required gave',
      );
    throw new HeldCallError(
      'ERR_HELD_CALL_UNKNOWN',
      'requestState names no call held here for this holder (a held call answers only to the holder that started it)',
    );
  }

  /** Take the call out of holding for the round that presented `handle`: from now on the handle is spent. */
  take(handle: string, holder: string): UpstreamCall {
    const call = this.peek(handle, holder);
    this.#waiting.settle(handle, holder, true);
    this.#remember(handle, holder, 'used');
    return call;
  }

  /** Drop every held call (the client is closing): each upstream call is cancelled. */
  dropAll(): void {
    this.#waiting.failAll(() => new HeldCallError('ERR_HELD_CALL_UNKNOWN', 'the client closed'));
  }

  #remember(handle: string, holder: string, why: Ended): void {
    this.#ended.set(handle, { holder, why });
    if (this.#ended.size > this.#limits.maxTotal) {
      const oldest = this.#ended.keys().next().value;
      if (oldest !== undefined) this.#ended.delete(oldest);
    }
  }
}
