// Each principal's fair share of the 2025 bridge's waiting questions. A question a 2025 client has not answered holds
// memory here until its answer or its timeout (a dropped connection is not a cancellation), and sessions cost nothing
// to open: one principal opening sessions and abandoning questions filled the instance's whole pool, and every other
// principal's 2025 call got "Server busy" until the questions timed out. The shares themselves are the held room's
// (held/fair-shares.ts, which the client's held calls use too); this file is what they mean here: a holder is a
// principal, a group is a session, and the refusals speak of questions on this server.
// Callers without a principal (no authentication) share one share, as they share the refusal limit's bucket.

import { FairShares, type ShareRefusals, shareLimitProblem, slowedRefusal } from '../../held/index.js';
import { ErrorCode, McpError } from '../../protocol/index.js';
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

/** One bucket per principal (issuer and subject); anonymous callers share the empty key. */
export const shareKey = (principal: Principal | undefined): string =>
  principal ? `${principal.issuer ?? ''}\0${principal.subject}` : '';

const tooMany = (what: string, seconds: number) =>
  slowedRefusal(
    'bridge_share_full',
    `Too many questions waiting: ${what}; answer or cancel them, or retry after ${seconds} s`,
    seconds,
  );

/** What the bridge tells a client past a bound. */
const BRIDGE_REFUSALS: ShareRefusals = {
  perHolder: (count, limit, seconds) =>
    tooMany(`${count} questions of yours already wait for answers on this server (limit ${limit})`, seconds),
  groupsPerHolder: (count, limit, seconds) =>
    tooMany(
      `${count} sessions of yours already have questions waiting on this server (limit ${limit})`,
      seconds,
    ),
  perGroup: (limit) =>
    new McpError(
      ErrorCode.InvalidRequest,
      `Invalid request: this session already has ${limit} questions waiting for answers; answer or cancel them first`,
    ),
  total: (limit) =>
    new McpError(
      ErrorCode.InternalError,
      `Server busy: ${limit} questions already wait for their clients' answers here; try again later`,
    ),
};

export class QuestionShares {
  /** The held room's shares, keyed by shareKey(principal) and grouped by session: what PendingAnswers takes. */
  readonly shares: FairShares;

  constructor(limits: ShareLimits, now: () => number = Date.now) {
    const held = {
      total: limits.total,
      perGroup: limits.perSession,
      perHolder: limits.perPrincipal,
      groupsPerHolder: limits.sessionsPerPrincipal,
    };
    const problem = shareLimitProblem(held, {
      total: 'legacyClients.maxPendingAnswers',
      perHolder: 'legacyClients.maxPendingPerPrincipal',
      perGroup: 'legacyClients.maxPendingPerSession',
      groupsPerHolder: 'legacyClients.maxSessionsPerPrincipal',
    });
    if (problem) throw new InvalidOptionError(problem);
    this.shares = new FairShares(held, BRIDGE_REFUSALS, now);
  }

  /** Questions waiting, all principals together. */
  get size(): number {
    return this.shares.size;
  }

  /** Why `principal` cannot have one more question waiting in `session` now, or undefined. */
  check(principal: Principal | undefined, session: string): McpError | undefined {
    return this.shares.check(shareKey(principal), session) as McpError | undefined;
  }

  /** Hold a place for question `id` until `expiresAt`, or say why not. */
  take(
    id: string,
    principal: Principal | undefined,
    session: string,
    expiresAt: number,
  ): McpError | undefined {
    return this.shares.take(id, shareKey(principal), session, expiresAt) as McpError | undefined;
  }

  /** Question `id` was answered, cancelled or timed out: its place is free. Idempotent. */
  give(id: string): void {
    this.shares.give(id);
  }
}
