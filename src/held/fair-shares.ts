// Each holder's fair share of a pool of things held open for the other side's answer: the 2025 bridge's questions
// waiting for a client (holder: the principal; group: the session), the client's 2025 upstream calls waiting for their
// next round (holder: the caller key the user of round() names). A held thing costs memory until its answer or its
// time limit, and holding one costs the holder nothing: one holder could fill the pool and lock everyone else out.
// So a holder may hold a share of the pool (and of groups with things held); one past its share is slowed with 429
// and a Retry-After naming when its oldest frees its place; the pool (all holders together) is the backstop.
import { ErrorCode, InvalidOptionError, RoundRefused } from '../protocol/index.js';

export interface ShareLimits {
  /** Things held, all holders together. */
  total: number;
  /** Things one holder may hold, all its groups together. */
  perHolder: number;
  /** Things one group may hold (default: no bound of its own). */
  perGroup?: number;
  /** Groups with things held one holder may have (default: no bound of its own). */
  groupsPerHolder?: number;
}

/** What each refusal says: the room that holds knows what it holds (questions, calls) and where. */
export interface ShareRefusals {
  /** The holder holds `count` of its `limit`; its oldest frees its place in `retryAfterSeconds`. */
  perHolder(count: number, limit: number, retryAfterSeconds: number): Error;
  /** Needed when the limits bound groups per holder. */
  groupsPerHolder?(count: number, limit: number, retryAfterSeconds: number): Error;
  /** Needed when the limits bound each group. */
  perGroup?(limit: number): Error;
  total(limit: number): Error;
}

/** The 429 a holder past its share gets: the JSON-RPC error, its Retry-After, and `reason` for the log only. */
export function slowedRefusal(reason: string, message: string, retryAfterSeconds: number): RoundRefused {
  return new RoundRefused(reason, {
    code: ErrorCode.InvalidRequest,
    message,
    data: { retryAfterSeconds },
    httpStatus: 429,
    httpHeaders: { 'retry-after': String(retryAfterSeconds) },
  });
}

/** Which limit is not a positive integer, as "<option> must be a positive integer, got <value>", or undefined. */
export function shareLimitProblem(
  limits: ShareLimits,
  optionOf: Readonly<Partial<Record<keyof ShareLimits, string>>>,
): string | undefined {
  for (const [limit, value] of Object.entries(limits)) {
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 1)
      return `${optionOf[limit as keyof ShareLimits] ?? limit} must be a positive integer, got ${String(value)}`;
  }
  return undefined;
}

interface Share {
  /** Held things by id → when each times out (insertion order: the first is the oldest). */
  held: Map<string, number>;
  /** Things held per group. */
  groups: Map<string, number>;
}

export class FairShares {
  readonly #shares = new Map<string, Share>();
  /** Thing id → whose share holds it. */
  readonly #holder = new Map<string, { holder: string; group: string }>();

  constructor(
    private readonly limits: ShareLimits,
    private readonly refusals: ShareRefusals,
    private readonly now: () => number = Date.now,
  ) {
    const problem = shareLimitProblem(limits, {
      total: 'total',
      perHolder: 'perHolder',
      perGroup: 'perGroup',
      groupsPerHolder: 'groupsPerHolder',
    });
    if (problem) throw new InvalidOptionError(`FairShares: ${problem}`);
    if (
      (limits.perGroup !== undefined && !refusals.perGroup) ||
      (limits.groupsPerHolder !== undefined && !refusals.groupsPerHolder)
    )
      throw new InvalidOptionError('FairShares: a limit on groups needs the refusal that speaks of it');
  }

  /** Things held, all holders together. */
  get size(): number {
    return this.#holder.size;
  }

  /** Things `holder` holds now. */
  heldBy(holder: string): number {
    return this.#shares.get(holder)?.held.size ?? 0;
  }

  /**
   * Which limit keeps `holder` from holding one more thing in `group` now, or undefined. Cheap: no refusal is built,
   * so a waiter can ask each time a place frees.
   */
  blocked(holder: string, group: string): keyof ShareLimits | undefined {
    const share = this.#shares.get(holder);
    const { perHolder, groupsPerHolder, perGroup, total } = this.limits;
    if (share) {
      if (share.held.size >= perHolder) return 'perHolder';
      if (groupsPerHolder !== undefined && !share.groups.has(group) && share.groups.size >= groupsPerHolder)
        return 'groupsPerHolder';
      if (perGroup !== undefined && (share.groups.get(group) ?? 0) >= perGroup) return 'perGroup';
    }
    if (this.#holder.size >= total) return 'total';
    return undefined;
  }

  /** Why `holder` cannot hold one more thing in `group` now, or undefined. */
  check(holder: string, group: string): Error | undefined {
    const limit = this.blocked(holder, group);
    if (limit === undefined) return undefined;
    const share = this.#shares.get(holder);
    const { perHolder, groupsPerHolder, perGroup, total } = this.limits;
    switch (limit) {
      case 'perHolder':
        return this.refusals.perHolder(share!.held.size, perHolder, this.#retryAfter(share!));
      case 'groupsPerHolder':
        return this.refusals.groupsPerHolder!(share!.groups.size, groupsPerHolder!, this.#retryAfter(share!));
      case 'perGroup':
        return this.refusals.perGroup!(perGroup!);
      default:
        return this.refusals.total(total);
    }
  }

  /** Hold a place for thing `id` until `expiresAt`, or say why not. */
  take(id: string, holder: string, group: string, expiresAt: number): Error | undefined {
    const refusal = this.check(holder, group);
    if (refusal) return refusal;
    let share = this.#shares.get(holder);
    if (!share) {
      share = { held: new Map(), groups: new Map() };
      this.#shares.set(holder, share);
    }
    share.held.set(id, expiresAt);
    share.groups.set(group, (share.groups.get(group) ?? 0) + 1);
    this.#holder.set(id, { holder, group });
    return undefined;
  }

  /** Thing `id` was answered, cancelled or timed out: its place is free. Idempotent. */
  give(id: string): void {
    const held = this.#holder.get(id);
    if (!held) return;
    this.#holder.delete(id);
    const share = this.#shares.get(held.holder)!;
    share.held.delete(id);
    const left = (share.groups.get(held.group) ?? 1) - 1;
    if (left > 0) share.groups.set(held.group, left);
    else share.groups.delete(held.group);
    // Nothing is kept for a holder with nothing held: memory follows the things held, not the holders.
    if (share.held.size === 0) this.#shares.delete(held.holder);
  }

  /** Seconds until the holder's oldest thing frees its place (at least 1). */
  #retryAfter(share: Share): number {
    const oldest = share.held.values().next().value ?? this.now();
    return Math.max(1, Math.ceil((oldest - this.now()) / 1000));
  }
}
