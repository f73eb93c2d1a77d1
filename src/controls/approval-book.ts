// Approval records in the shared store, so every instance serves the same inbox and the same votes. Every change is
// a compare-and-set on the record's version: two reviewers voting at once both count, never one over the other.
// The store has no listing, so an index record names the pending ids (also compare-and-set, pruned on each write).
import { randomBytes } from 'node:crypto';
import { MrtrError, StoreContendedError } from '../protocol/index.js';
import type { SharedStore } from '../stores/index.js';
import type { ControlPrincipal } from './context.js';
import { CONTROLS_DEFAULTS } from './defaults.js';
import type { Effect } from './effect.js';

export interface Person {
  readonly subject: string;
  readonly issuer: string;
  readonly name?: string;
}

export interface Vote {
  readonly by: Person;
  readonly decision: 'approve' | 'deny';
  readonly comment: string;
  readonly at: number;
  /** Digest of what the reviewer was shown (the page, or the API's summary) when they decided. */
  readonly seen: string;
}

export type ApprovalRisk = 'low' | 'medium' | 'high';

export type ApprovalState =
  | 'pending'
  | 'approved'
  | 'denied'
  | 'expired'
  | 'redeemed'
  | 'cancelled'
  | 'withdrawn';

export interface ApprovalRecord {
  readonly id: string;
  readonly requester: Person;
  /** The flow that asked: only it may redeem the grant. */
  readonly flowId: string;
  readonly effect: Effect;
  readonly effectDigest: string;
  readonly reason: string;
  /** How much is at stake, as the tool's author rates it: the console sorts and marks by it. */
  readonly risk?: ApprovalRisk;
  readonly role: string;
  readonly approve: number;
  readonly deny: number;
  readonly createdAt: number;
  /** Until when the request may be decided. */
  readonly expiresAt: number;
  /** How long a grant stays valid once approved. */
  readonly grantTtlMs: number;
  readonly votes: readonly Vote[];
  readonly state: 'pending' | 'approved' | 'denied' | 'redeemed' | 'cancelled' | 'withdrawn';
  readonly decidedAt?: number;
  /** Why the server withdrew the request while it was pending (its task cancelled, the policy replaced). */
  readonly withdrawnBecause?: string;
  readonly redeemedAt?: number;
}

/** The state as of `now`: a pending request past its expiry is expired, an unredeemed grant past its lifetime too. */
export function stateAt(record: ApprovalRecord, now: number): ApprovalState {
  if (record.state === 'pending' && now >= record.expiresAt) return 'expired';
  if (record.state === 'approved' && now >= (record.decidedAt ?? 0) + record.grantTtlMs) return 'expired';
  return record.state;
}

export const countOf = (record: ApprovalRecord, decision: Vote['decision']): number =>
  record.votes.filter((v) => v.decision === decision).length;

export const personOf = (p: ControlPrincipal): Person => ({
  subject: p.subject,
  issuer: p.issuer ?? '',
  ...(p.name === undefined ? {} : { name: p.name }),
});

export const samePerson = (a: Person, b: Person): boolean =>
  a.issuer !== '' && a.subject === b.subject && a.issuer === b.issuer;

/** Why a vote or a redemption was refused: `forbidden` is the caller's standing (403), `conflict` the record's (409). */
export class ApprovalRefused extends MrtrError {
  override readonly name = 'ApprovalRefused';
  declare readonly code: 'ERR_APPROVAL_REFUSED';
  constructor(
    readonly kind: 'forbidden' | 'conflict' | 'not_found',
    readonly reason: string,
    message: string,
  ) {
    super('ERR_APPROVAL_REFUSED', message);
  }
}

export interface NewApproval {
  requester: Person;
  flowId: string;
  effect: Effect;
  effectDigest: string;
  reason: string;
  risk?: ApprovalRisk | undefined;
  role: string;
  approve: number;
  deny: number;
  pendingTtlMs: number;
  grantTtlMs: number;
}

const KEY = (id: string) => `mrtr/approval/${id}`;
const INDEX = 'mrtr/approvals/index';
/** Requests decided lately (approved, denied, withdrawn, carried out): the console's history. */
const DECIDED = 'mrtr/approvals/decided';
const MAX_CAS_TRIES = 20;

export class ApprovalBook {
  constructor(
    private readonly store: SharedStore,
    readonly now: () => number = Date.now,
  ) {}

  private ttlOf(r: ApprovalRecord): number {
    // The record outlives its expiry by a grant's lifetime and a day, so a late retry reads "expired", not "unknown".
    return Math.max(1, r.expiresAt + r.grantTtlMs + 24 * 60 * 60 * 1000 - this.now());
  }

  async create(input: NewApproval): Promise<ApprovalRecord> {
    const now = this.now();
    const record: ApprovalRecord = {
      id: randomBytes(12).toString('base64url'),
      requester: input.requester,
      flowId: input.flowId,
      effect: input.effect,
      effectDigest: input.effectDigest,
      reason: input.reason,
      ...(input.risk ? { risk: input.risk } : {}),
      role: input.role,
      approve: input.approve,
      deny: input.deny,
      createdAt: now,
      expiresAt: now + input.pendingTtlMs,
      grantTtlMs: input.grantTtlMs,
      votes: [],
      state: 'pending',
    };
    if (!(await this.store.create(KEY(record.id), JSON.stringify(record), this.ttlOf(record))))
      // Internal assertion: ids are 96 random bits, so two approvals never share one.
      throw new Error('approval id collision');
    await this.updateIndex((ids) => [...ids, { id: record.id, exp: record.expiresAt }]);
    return record;
  }

  async get(id: string): Promise<ApprovalRecord | undefined> {
    if (!/^[A-Za-z0-9_-]{16}$/.test(id)) return undefined;
    const entry = await this.store.get(KEY(id));
    return entry ? (JSON.parse(entry.value) as ApprovalRecord) : undefined;
  }

  /** Pending requests, newest first (expired ones are dropped from the index as it is written). */
  async pending(): Promise<ApprovalRecord[]> {
    const entry = await this.store.get(INDEX);
    const ids = entry ? (JSON.parse(entry.value) as Array<{ id: string; exp: number }>) : [];
    const now = this.now();
    const records = await Promise.all(ids.filter((i) => i.exp > now).map((i) => this.get(i.id)));
    return records
      .filter((r): r is ApprovalRecord => r !== undefined && stateAt(r, now) === 'pending')
      .sort((a, b) => b.createdAt - a.createdAt)
      .slice(0, CONTROLS_DEFAULTS.maxListed);
  }

  /** Requests decided lately, newest decision first (each kept as long as its record is). */
  async decided(): Promise<ApprovalRecord[]> {
    const entry = await this.store.get(DECIDED);
    const ids = entry ? (JSON.parse(entry.value) as Array<{ id: string; exp: number }>) : [];
    const now = this.now();
    const records = await Promise.all(ids.filter((i) => i.exp > now).map((i) => this.get(i.id)));
    return records
      .filter((r): r is ApprovalRecord => r !== undefined && r.state !== 'pending')
      .sort((a, b) => (b.redeemedAt ?? b.decidedAt ?? 0) - (a.redeemedAt ?? a.decidedAt ?? 0))
      .slice(0, CONTROLS_DEFAULTS.maxListed);
  }

  /** Whether `who` (with `roles`) may vote on `record` now; the refusal names why not. */
  checkReviewer(record: ApprovalRecord, who: Person, roles: readonly string[]): ApprovalRefused | undefined {
    if (samePerson(record.requester, who))
      return new ApprovalRefused(
        'forbidden',
        'self_approval',
        'you asked for this: someone else must review it',
      );
    if (!roles.includes(record.role))
      return new ApprovalRefused('forbidden', 'missing_role', `reviewing this needs the role ${record.role}`);
    return undefined;
  }

  /** Record a vote; N approvals grant, M denials deny. Throws ApprovalRefused. */
  async vote(
    id: string,
    who: Person,
    roles: readonly string[],
    vote: { decision: Vote['decision']; comment: string; seen: string; effectDigest?: string },
  ): Promise<ApprovalRecord> {
    for (let i = 0; i < MAX_CAS_TRIES; i++) {
      const entry = await this.store.get(KEY(id));
      if (!entry) throw new ApprovalRefused('not_found', 'unknown', 'no such approval request');
      const record = JSON.parse(entry.value) as ApprovalRecord;
      const refused = this.checkReviewer(record, who, roles);
      if (refused) throw refused;
      const now = this.now();
      const state = stateAt(record, now);
      if (state !== 'pending')
        throw new ApprovalRefused('conflict', `already_${state}`, `this request is already ${state}`);
      if (vote.effectDigest !== undefined && vote.effectDigest !== record.effectDigest)
        throw new ApprovalRefused(
          'conflict',
          'other_effect',
          'this vote was for another effect than the one this request is for: nothing was recorded',
        );
      if (record.votes.some((v) => samePerson(v.by, who)))
        throw new ApprovalRefused('conflict', 'already_voted', 'you have already decided on this request');
      const votes = [
        ...record.votes,
        { by: who, decision: vote.decision, comment: vote.comment, at: now, seen: vote.seen },
      ];
      const next: ApprovalRecord = { ...record, votes };
      const approvals = countOf(next, 'approve');
      const denials = countOf(next, 'deny');
      const decided: ApprovalRecord =
        denials >= record.deny
          ? { ...next, state: 'denied', decidedAt: now }
          : approvals >= record.approve
            ? { ...next, state: 'approved', decidedAt: now }
            : next;
      if (await this.store.replace(KEY(id), entry.version, JSON.stringify(decided), this.ttlOf(decided))) {
        if (decided.state !== 'pending') {
          await this.updateIndex((ids) => ids.filter((x) => x.id !== id));
          await this.noteDecided(decided);
        }
        return decided;
      }
    }
    throw new ApprovalRefused('conflict', 'contended', 'too many decisions at once: try again');
  }

  /** Use an approved grant, once, from the flow that asked. Throws ApprovalRefused. */
  async redeem(id: string, requester: Person, flowId: string): Promise<ApprovalRecord> {
    return this.transition(id, (record, state) => {
      if (!samePerson(record.requester, requester) || record.flowId !== flowId)
        throw new ApprovalRefused('forbidden', 'not_requester_flow', 'this grant belongs to another flow');
      if (state !== 'approved')
        throw new ApprovalRefused('conflict', `not_redeemable_${state}`, `this request is ${state}`);
      return { ...record, state: 'redeemed', redeemedAt: this.now() };
    });
  }

  /** The requester gives up (declined the question): the request leaves the inboxes. */
  async cancel(id: string, requester: Person): Promise<ApprovalRecord> {
    return this.transition(id, (record, state) => {
      if (!samePerson(record.requester, requester))
        throw new ApprovalRefused('forbidden', 'not_requester', 'only the requester may withdraw a request');
      if (state !== 'pending')
        throw new ApprovalRefused('conflict', `already_${state}`, `this request is ${state}`);
      return { ...record, state: 'cancelled', decidedAt: this.now() };
    });
  }

  /**
   * The server takes back pending requests nobody should decide any more (their task was cancelled, the policy
   * they were asked under was replaced): each leaves the inboxes, reads `withdrawn` with `why`, and takes no vote.
   * Returns the ones withdrawn now.
   */
  async withdraw(which: (record: ApprovalRecord) => boolean, why: string): Promise<ApprovalRecord[]> {
    const withdrawn: ApprovalRecord[] = [];
    for (const record of await this.pending()) {
      if (!which(record)) continue;
      try {
        withdrawn.push(
          await this.transition(record.id, (current, state) => {
            if (state !== 'pending')
              throw new ApprovalRefused('conflict', `already_${state}`, `this request is ${state}`);
            return { ...current, state: 'withdrawn', decidedAt: this.now(), withdrawnBecause: why };
          }),
        );
      } catch (error) {
        // Decided meanwhile: the decision stands, there is nothing to withdraw.
        if (!(error instanceof ApprovalRefused)) throw error;
      }
    }
    return withdrawn;
  }

  private async transition(
    id: string,
    change: (record: ApprovalRecord, state: ApprovalState) => ApprovalRecord,
  ): Promise<ApprovalRecord> {
    for (let i = 0; i < MAX_CAS_TRIES; i++) {
      const entry = await this.store.get(KEY(id));
      if (!entry) throw new ApprovalRefused('not_found', 'unknown', 'no such approval request');
      const record = JSON.parse(entry.value) as ApprovalRecord;
      const next = change(record, stateAt(record, this.now()));
      if (await this.store.replace(KEY(id), entry.version, JSON.stringify(next), this.ttlOf(next))) {
        await this.updateIndex((ids) => ids.filter((x) => x.id !== id));
        await this.noteDecided(next);
        return next;
      }
    }
    throw new ApprovalRefused('conflict', 'contended', 'too many changes at once: try again');
  }

  private noteDecided(record: ApprovalRecord): Promise<void> {
    const exp = this.now() + this.ttlOf(record);
    return this.updateIndex(
      (ids) => [...ids.filter((x) => x.id !== record.id), { id: record.id, exp }],
      DECIDED,
    );
  }

  private async updateIndex(
    change: (ids: Array<{ id: string; exp: number }>) => Array<{ id: string; exp: number }>,
    key: string = INDEX,
  ): Promise<void> {
    for (let i = 0; i < MAX_CAS_TRIES * 5; i++) {
      const now = this.now();
      const entry = await this.store.get(key);
      const ids = (entry ? (JSON.parse(entry.value) as Array<{ id: string; exp: number }>) : []).filter(
        (x) => x.exp > now,
      );
      const next = change(ids).slice(-CONTROLS_DEFAULTS.maxListed * 5);
      const ttl = Math.max(1, ...next.map((x) => x.exp - now));
      const value = JSON.stringify(next);
      const done = entry
        ? await this.store.replace(key, entry.version, value, ttl)
        : await this.store.create(key, value, ttl);
      if (done) return;
    }
    throw new StoreContendedError('approvals index is contended');
  }
}
