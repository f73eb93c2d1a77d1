// The replay guard: every round's requestState is single-use, an identical retry gets the identical answer, and
// anything else — other answers to a used state, an older round, a finished flow — is refused. What it knows lives
// in a shared store, so any instance can take any round and a replay is caught on every instance.
import { ErrorCode, type McpError, type Result, RoundRefused } from '../protocol/index.js';
import { type SharedStore, StoreUnavailableError } from '../stores/index.js';
import { decodeFlowRecord, encodeFlowRecord, type FlowRecord, flowKey } from './flow-record.js';
import type { OpenedRound, ScreenedRound } from './guarded.js';
import { RefusalLimit, type RefusalLimitOptions } from './refusal-limit.js';
import { StoreStepLedger } from './step-ledger.js';

export interface ReplayGuardOptions {
  /** Largest answer kept for identical retries, in bytes of JSON (default 64 KiB); a larger one is not replayed. */
  maxCachedAnswerBytes?: number;
  /**
   * How long a claim holds when the process running it dies mid-round (default 130 s: the server's default handler
   * time limit plus a margin). After it, an identical retry runs the round again.
   */
  leaseMs?: number;
  /** How long an identical presentation waits for the one running the handler (default 10 s). */
  waitMs?: number;
  /** Extra life for records beyond their state's expiry, for clocks that differ between instances (default 60 s). */
  clockSkewMs?: number;
  /**
   * Refused presentations counted per principal in the same store; past the limit, rounds get 429 (default on:
   * 30 per 60 s). `false` turns the limit off.
   */
  refusals?: Omit<RefusalLimitOptions, 'now'> | false;
  /** The clock and the pause between polls; tests pass fake ones. */
  now?: () => number;
  pause?: (ms: number) => Promise<void>;
}

export const REPLAY_GUARD_DEFAULTS = Object.freeze({
  /** An MRTR answer is a few KiB; 64 KiB keeps every normal one and bounds what a flood of flows can store. */
  maxCachedAnswerBytes: 64 * 1024,
  leaseMs: 130_000,
  waitMs: 10_000,
  clockSkewMs: 60_000,
});

/** What admit claimed, kept until commit or release settles the round. */
interface Claim {
  key: string;
  version: number;
  record: FlowRecord;
}

const defaultPause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The refusal every replay gets on the wire: the same fixed -32602 as any bad state; the reason is for the log. */
const refuse = (reason: 'replayed' | 'stale_round' | 'flow_completed'): RoundRefused =>
  new RoundRefused(reason);

export class ReplayGuard {
  readonly name = 'replay';
  readonly #store: SharedStore;
  readonly #options: Required<Omit<ReplayGuardOptions, 'now' | 'pause' | 'refusals'>>;
  readonly #limit: RefusalLimit | undefined;
  readonly #now: () => number;
  readonly #pause: (ms: number) => Promise<void>;
  // Keyed by the round object the pipeline hands to admit, commit and release alike.
  readonly #claims = new WeakMap<object, Claim>();

  constructor(store: SharedStore, options: ReplayGuardOptions = {}) {
    this.#store = store;
    this.#options = {
      maxCachedAnswerBytes: options.maxCachedAnswerBytes ?? REPLAY_GUARD_DEFAULTS.maxCachedAnswerBytes,
      leaseMs: options.leaseMs ?? REPLAY_GUARD_DEFAULTS.leaseMs,
      waitMs: options.waitMs ?? REPLAY_GUARD_DEFAULTS.waitMs,
      clockSkewMs: options.clockSkewMs ?? REPLAY_GUARD_DEFAULTS.clockSkewMs,
    };
    this.#now = options.now ?? Date.now;
    this.#pause = options.pause ?? defaultPause;
    if (options.refusals !== false)
      this.#limit = new RefusalLimit(store, { ...options.refusals, now: this.#now });
  }

  /** Before the state opens: a principal past its refusal limit is slowed (429 + Retry-After). */
  async screen(round: ScreenedRound): Promise<void> {
    await this.#limit?.screen(round);
  }

  /** Every refusal of a round, whoever decided it: counted against the principal when it is the caller's doing. */
  async refused(round: ScreenedRound, reason: string): Promise<void> {
    await this.#limit?.refused(round, reason);
  }

  get store(): SharedStore {
    return this.#store;
  }

  /** Claim the round's state, answer an identical retry from the record, or refuse. First calls pass untouched. */
  async admit(round: OpenedRound): Promise<Result | undefined> {
    // A first call carries no state: nothing to replay, and nothing is written (a flood of them costs no storage).
    if (round.stateDigest === undefined || round.flowId === undefined) return undefined;
    const key = flowKey(round.flowId);
    const waitUntil = this.#now() + this.#options.waitMs;
    // The first state of a flow (round 1) usually has no record yet: try to create it before reading, which saves
    // a store round-trip on the most common presentation of all.
    let tryCreateFirst = round.round === 1;
    for (let attempt = 0; ; attempt++) {
      if (tryCreateFirst) {
        tryCreateFirst = false;
        const record = this.#running(round);
        if (await this.#storeCall(() => this.#store.create(key, encodeFlowRecord(record), this.#ttl(round))))
          return this.#claimed(round, { key, version: 1, record });
      }
      const entry = await this.#storeCall(() => this.#store.get(key));
      if (!entry) {
        tryCreateFirst = true;
        continue; // absent (or expired): create it now
      }
      const record = this.#decode(entry.value);
      if (round.round < record.round) throw refuse(record.completed ? 'flow_completed' : 'stale_round');
      const sameRound = round.round === record.round;
      if (sameRound && record.state !== round.stateDigest) throw refuse('replayed');
      const takeOver =
        !sameRound ||
        record.status === 'open' ||
        (record.status === 'running' &&
          record.answers === round.answersDigest &&
          record.leaseUntil <= this.#now());
      if (takeOver) {
        const next = this.#running(round);
        const replaced = await this.#storeCall(() =>
          this.#store.replace(key, entry.version, encodeFlowRecord(next), this.#ttl(round)),
        );
        if (replaced) return this.#claimed(round, { key, version: entry.version + 1, record: next });
        continue;
      }
      if (record.answers !== round.answersDigest)
        throw refuse(record.completed ? 'flow_completed' : 'replayed');
      if (record.status === 'answered') return this.#recorded(record);
      // The same state with the same answers is running elsewhere: wait for its answer, within a bound.
      if (this.#now() >= waitUntil) {
        throw new RoundRefused('still_running', {
          code: ErrorCode.InternalError,
          message:
            'Internal error: this round is still running for an earlier identical request; retry it shortly',
          httpStatus: 503,
          httpHeaders: { 'retry-after': '1' },
        });
      }
      await this.#pause(Math.min(2 ** attempt, 50));
    }
  }

  /** Record the answer under the claim, before it is sent: from now on the state is consumed. */
  async commit(round: OpenedRound, result: Result): Promise<void> {
    const claim = this.#claims.get(round);
    if (!claim) return;
    this.#claims.delete(round);
    const answer = JSON.stringify(result);
    const bytes = Buffer.byteLength(answer);
    const record: FlowRecord = {
      ...claim.record,
      status: 'answered',
      completed: result.resultType !== 'input_required',
      ...(bytes <= this.#options.maxCachedAnswerBytes ? { answer } : { answerBytes: bytes }),
    };
    const replaced = await this.#storeCall(() =>
      this.#store.replace(claim.key, claim.version, encodeFlowRecord(record), this.#ttl(round)),
    );
    // Only when the claim's lease ran out and an identical retry took the round over: that one answers it.
    if (!replaced)
      throw new RoundRefused('claim_lost', {
        code: ErrorCode.InternalError,
        message: 'Internal error: this round was taken over by a retry',
      });
  }

  /** The round failed after admit: nothing was consumed, so the state may be presented again. */
  async release(round: OpenedRound): Promise<void> {
    const claim = this.#claims.get(round);
    if (!claim) return;
    this.#claims.delete(round);
    const record: FlowRecord = { ...claim.record, status: 'open' };
    try {
      await this.#store.replace(claim.key, claim.version, encodeFlowRecord(record), this.#ttl(round));
    } catch {
      // The claim's lease runs out by itself; an identical retry takes the round over then.
    }
  }

  /** Where ask.step keeps its results for this flow, so a round run again never repeats a step that ran. */
  stepLedger(round: OpenedRound): StoreStepLedger | undefined {
    if (round.flowId === undefined || round.stateDigest === undefined) return undefined;
    return new StoreStepLedger(this.#store, round.flowId, this.#ttl(round), (call) => this.#storeCall(call));
  }

  #claimed(round: OpenedRound, claim: Claim): undefined {
    this.#claims.set(round, claim);
    return undefined;
  }

  #running(round: OpenedRound): FlowRecord {
    return {
      round: round.round,
      state: round.stateDigest!,
      answers: round.answersDigest,
      status: 'running',
      leaseUntil: this.#now() + this.#options.leaseMs,
      stateExpiresAt: round.stateExpiresAt ?? this.#now(),
    };
  }

  /** The answer recorded for this state and these answers: the same bytes, without running the handler again. */
  #recorded(record: FlowRecord): Result {
    if (record.answer === undefined)
      throw new RoundRefused('answer_not_kept', {
        code: ErrorCode.InvalidRequest,
        message: `This round was already answered, but its answer (${record.answerBytes} bytes) is larger than the ${this.#options.maxCachedAnswerBytes} bytes kept for retries, so it cannot be sent again: start the call over`,
      });
    return JSON.parse(record.answer) as Result;
  }

  /** Records live as long as the state they protect (plus clock skew), and at least as long as a claim's lease. */
  #ttl(round: OpenedRound): number {
    const expiresAt = (round.stateExpiresAt ?? this.#now()) + this.#options.clockSkewMs;
    return Math.max(Math.ceil(expiresAt - this.#now()), this.#options.leaseMs, 1);
  }

  #decode(text: string): FlowRecord {
    try {
      return decodeFlowRecord(text);
    } catch (error) {
      throw unavailable(new StoreUnavailableError(this.#store.description, error));
    }
  }

  async #storeCall<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw unavailable(error);
    }
  }
}

/** Fail closed: a guarded round never runs unguarded; the client is told plainly, the log gets the cause. */
function unavailable(error: unknown): McpError {
  if (error instanceof RoundRefused) return error;
  return new RoundRefused(
    'store_unavailable',
    { code: ErrorCode.InternalError, message: 'Internal error: replay store unavailable' },
    { cause: error },
  );
}
