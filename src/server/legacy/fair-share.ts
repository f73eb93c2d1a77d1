// Each principal's fair share of the 2025 bridge's waiting questions. A question a 2025 client has not answered holds
// memory here until its answer or its timeout (a dropped connection is not a cancellation), and sessions cost nothing
// to open: one principal opening sessions and abandoning questions filled the instance's whole pool, and every other
// principal's 2025 call got "Server busy" until the questions timed out. So each principal may hold a share of the
// pool (questions, and sessions with questions waiting), and one past its share is slowed with the refusal limit's
// 429 and a Retry-After naming when its oldest question frees its place; the pool (all principals) is the backstop.
// Callers without a principal (no authentication) share one share, as they share the refusal limit's bucket.
import { ErrorCode, McpError, RoundRefused } from '../../protocol/index.js';
import type { Principal } from '../context.js';
import { InvalidOptionError } from '../errors.js';

export interface ShareLimits {
  /** Questions waiting on this instance, all principals together. */
  total: number;
  /** Questions one session may have waiting. */
  perSession: number;
  /** Questions one principal may have waiting, all its sessions together. */
  perPrincipal: number;
  /** Sessions with questions waiting one principal may have. */
  sessionsPerPrincipal: number;
}

/** The option that sets each limit, for messages. */
const OPTION_OF: Readonly<Record<keyof ShareLimits, string>> = {
  total: 'maxPendingAnswers',
  perSession: 'maxPendingPerSession',
  perPrincipal: 'maxPendingPerPrincipal',
  sessionsPerPrincipal: 'maxSessionsPerPrincipal',
};

interface Share {
  /** Waiting questions by id → when each times out (insertion order: the first is the oldest). */
  questions: Map<string, number>;
  /** Questions waiting per session. */
  sessions: Map<string, number>;
}

/** One bucket per principal (issuer and subject); anonymous callers share the empty key. */
export const shareKey = (principal: Principal | undefined): string =>
  principal ? `${principal.issuer ?? ''}\0${principal.subject}` : '';

export class QuestionShares {
  readonly #shares = new Map<string, Share>();
  /** Question id → whose share holds it. */
  readonly #holder = new Map<string, { key: string; session: string }>();

  constructor(
    private readonly limits: ShareLimits,
    private readonly now: () => number = Date.now,
  ) {
    for (const [limit, option] of Object.entries(OPTION_OF)) {
      const value = limits[limit as keyof ShareLimits];
      if (!Number.isSafeInteger(value) || value < 1)
        throw new InvalidOptionError(
          `legacyClients.${option} must be a positive integer, got ${String(value)}`,
        );
    }
  }

  /** Questions waiting, all principals together. */
  get size(): number {
    return this.#holder.size;
  }

  /** Why `principal` cannot have one more question waiting in `session` now, or undefined. */
  check(principal: Principal | undefined, session: string): McpError | undefined {
    const share = this.#shares.get(shareKey(principal));
    if (share) {
      if (share.questions.size >= this.limits.perPrincipal)
        return this.#slowed(
          share,
          `${share.questions.size} questions of yours already wait for answers on this server (limit ${this.limits.perPrincipal})`,
        );
      if (!share.sessions.has(session) && share.sessions.size >= this.limits.sessionsPerPrincipal)
        return this.#slowed(
          share,
          `${share.sessions.size} sessions of yours already have questions waiting on this server (limit ${this.limits.sessionsPerPrincipal})`,
        );
      if ((share.sessions.get(session) ?? 0) >= this.limits.perSession)
        return new McpError(
          ErrorCode.InvalidRequest,
          `Invalid request: this session already has ${this.limits.perSession} questions waiting for answers; answer or cancel them first`,
        );
    }
    if (this.#holder.size >= this.limits.total)
      return new McpError(
        ErrorCode.InternalError,
        `Server busy: ${this.limits.total} questions already wait for their clients' answers here; try again later`,
      );
    return undefined;
  }

  /** Hold a place for question `id` until `expiresAt`, or say why not. */
  take(
    id: string,
    principal: Principal | undefined,
    session: string,
    expiresAt: number,
  ): McpError | undefined {
    const refusal = this.check(principal, session);
    if (refusal) return refusal;
    const key = shareKey(principal);
    let share = this.#shares.get(key);
    if (!share) {
      share = { questions: new Map(), sessions: new Map() };
      this.#shares.set(key, share);
    }
    share.questions.set(id, expiresAt);
    share.sessions.set(session, (share.sessions.get(session) ?? 0) + 1);
    this.#holder.set(id, { key, session });
    return undefined;
  }

  /** Question `id` was answered, cancelled or timed out: its place is free. Idempotent. */
  give(id: string): void {
    const held = this.#holder.get(id);
    if (!held) return;
    this.#holder.delete(id);
    const share = this.#shares.get(held.key)!;
    share.questions.delete(id);
    const left = (share.sessions.get(held.session) ?? 1) - 1;
    if (left > 0) share.sessions.set(held.session, left);
    else share.sessions.delete(held.session);
    // Nothing is kept for a principal with nothing waiting: memory follows the questions, not the callers.
    if (share.questions.size === 0) this.#shares.delete(held.key);
  }

  #slowed(share: Share, what: string): RoundRefused {
    const oldest = share.questions.values().next().value ?? this.now();
    const seconds = Math.max(1, Math.ceil((oldest - this.now()) / 1000));
    return new RoundRefused('bridge_share_full', {
      code: ErrorCode.InvalidRequest,
      message: `Too many questions waiting: ${what}; answer or cancel them, or retry after ${seconds} s`,
      data: { retryAfterSeconds: seconds },
      httpStatus: 429,
      httpHeaders: { 'retry-after': String(seconds) },
    });
  }
}
