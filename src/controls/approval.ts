// ctx-side of four-eyes approval: create the record once per flow (a step), then on every round read it afresh —
// pending asks the requester again (URL mode, to the request's status page), approved is redeemed once, denied
// and expired end the call with the reason.
import { FlowEnded } from '../flow/index.js';
import { canonicalJson } from '../state/index.js';
import {
  type ApprovalBook,
  type ApprovalRecord,
  ApprovalRefused,
  type ApprovalRisk,
  countOf,
  personOf,
  stateAt,
} from './approval-book.js';
import type { ControlContext } from './context.js';
import { CONTROLS_DEFAULTS } from './defaults.js';
import { checkEffect, type Effect, effectDigest } from './effect.js';
import { ControlsUsageError } from './errors.js';
import { cameBack, heldForPerson } from './wakeups.js';

export interface ApprovalOptions {
  /** Who may review: principals with this role (never the requester). */
  role: string;
  /** Why the requester needs it, shown to reviewers. */
  reason: string;
  /** Exactly what will happen once approved; votes are for this effect and its digest. */
  effect: Effect;
  /** How much is at stake (shown to reviewers; the console puts high risk first). */
  risk?: ApprovalRisk;
  /** Approvals that grant (default 1). */
  approve?: number;
  /** Denials that end the call (default 1). */
  deny?: number;
  /** How long the request waits for a decision (default 24 h). */
  expiresInMs?: number;
  /** How long a grant stays valid for the requester's retry (default 1 h). */
  grantTtlMs?: number;
  /** The inputRequests key (default `approval`). */
  key?: string;
}

/** What HumanControls adds around an approval: the hold on a pending check, and news of a new request. */
export interface ApprovalHooks {
  /**
   * Waits (a while) for a decision on request `id`: a client that came back to check is held, not spun.
   * `stillPending` reads the request again once the hold listens, for a decision that came just before it.
   */
  hold?: (
    id: string,
    signal: AbortSignal | undefined,
    stillPending?: () => Promise<boolean>,
  ) => Promise<void>;
  /** A request was created (once per flow): reviewers are told of it (the console, webhooks). */
  created?: (record: ApprovalRecord) => void;
}

/** A redeemed grant: who approved, for the handler's result or its own records. */
export interface ApprovalGrant {
  readonly id: string;
  readonly approvedBy: readonly string[];
}

export async function requireApproval(
  ctx: ControlContext,
  book: ApprovalBook,
  statusUrl: (id: string) => string,
  o: ApprovalOptions,
  hooks: ApprovalHooks = {},
): Promise<ApprovalGrant> {
  const hold = hooks.hold ?? (async () => {});
  const principal = ctx.principal;
  if (!principal?.issuer)
    throw new ControlsUsageError('approval needs an authenticated caller (a principal with an issuer)');
  checkEffect(o.effect, 'approval');
  const size = Buffer.byteLength(canonicalJson(o.effect));
  if (size > CONTROLS_DEFAULTS.maxEffectBytes)
    throw new FlowEnded(
      `refused: what this call would do is too large for a reviewer to read (${size} bytes; at most ${CONTROLS_DEFAULTS.maxEffectBytes}): send smaller arguments`,
      'ended',
    );
  const approve = o.approve ?? CONTROLS_DEFAULTS.approvals;
  const deny = o.deny ?? CONTROLS_DEFAULTS.denials;
  if (o.risk !== undefined && !['low', 'medium', 'high'].includes(o.risk))
    throw new ControlsUsageError("approval: risk must be 'low', 'medium' or 'high'");
  if (!(Number.isInteger(approve) && approve >= 1 && Number.isInteger(deny) && deny >= 1))
    throw new ControlsUsageError('approval: approve and deny must be whole numbers of at least 1');
  const digest = effectDigest(o.effect);
  const requester = personOf(principal);
  const key = o.key ?? 'approval';
  const { id } = await ctx.ask.step('mrtr/approval', async () => {
    const record = await book.create({
      requester,
      flowId: ctx.flowId,
      effect: o.effect,
      effectDigest: digest,
      reason: o.reason,
      risk: o.risk,
      role: o.role,
      approve,
      deny,
      pendingTtlMs: o.expiresInMs ?? CONTROLS_DEFAULTS.pendingTtlMs,
      grantTtlMs: o.grantTtlMs ?? CONTROLS_DEFAULTS.grantTtlMs,
    });
    hooks.created?.(record);
    return { id: record.id };
  });
  let record = await book.get(id);
  if (record && stateAt(record, book.now()) === 'pending' && cameBack(ctx.inputResponses, key)) {
    const stillPending = async () => {
      const now = await book.get(id);
      return (
        now !== undefined &&
        stateAt(now, book.now()) === 'pending' &&
        now.votes.length === record?.votes.length
      );
    };
    await heldForPerson(ctx, hold(id, ctx.signal, stillPending));
    record = await book.get(id);
  }
  if (!record)
    throw new FlowEnded('the approval request is gone (expired long ago): call again to ask anew', 'ended');
  if (record.effectDigest !== digest) {
    ctx.audit.note({ approval: { id, refused: 'effect_changed' } });
    throw new FlowEnded(
      'refused: what this call would do changed after approval was requested; call again to ask for the new effect',
      'ended',
    );
  }
  const votes = record.votes.map((v) => ({
    by: v.by.subject,
    decision: v.decision,
    comment: v.comment,
    at: new Date(v.at).toISOString(),
  }));
  const state = stateAt(record, book.now());
  const approvals = countOf(record, 'approve');
  const denials = countOf(record, 'deny');
  switch (state) {
    case 'pending': {
      // The person gave up on the question (declined or cancelled the link): withdraw the request.
      const previous = ctx.inputResponses[key] as { action?: unknown } | undefined;
      if (previous && (previous.action === 'decline' || previous.action === 'cancel')) {
        await book.cancel(id, requester).catch((e: unknown) => {
          if (!(e instanceof ApprovalRefused)) throw e;
        });
        ctx.audit.note({ approval: { id, state: 'cancelled', votes } });
        throw new FlowEnded('approval request withdrawn by the requester', 'declined');
      }
      // The trail names the round as waiting on people: an export reads it as `deferred`.
      ctx.audit.note({ approval: { id, state: 'pending', votes } });
      const denied = denials > 0 ? `, denied by ${denials} of ${deny}` : '';
      // The count makes each round's question new, so an "I opened it" answer is not replayed as a decision; it
      // says what it counts, since a person reads it.
      await ctx.ask.url(
        `Still waiting — approved by ${approvals} of ${approve}${denied}. Needs ${approve === 1 ? 'a reviewer' : `${approve} reviewers`} with the role ${o.role}: ${o.reason}. ` +
          `Open the link to follow the request; continue here to ask again (request ${ctx.round + 1} of this call).`,
        statusUrl(id),
        {
          key,
          humanRequired: 'approval',
          progress: `waiting for approval, ${approvals} of ${approve}${denied} (role ${o.role})`,
        },
      );
      // Internal assertion: the question above is new in every round, so it parks the flow and never returns here.
      throw new Error('unreachable: a pending approval question does not resolve');
    }
    // Redeemed: by this flow in an earlier round (the step's journaled result says so), or refused below.
    case 'approved':
    case 'redeemed': {
      const redeemed = await ctx.ask.step('mrtr/approval-redeem', async () => {
        try {
          const r = await book.redeem(id, requester, ctx.flowId);
          return { ok: true, redeemedAt: r.redeemedAt ?? 0 };
        } catch (error) {
          // Only this flow can redeem its grant: "already redeemed" is this step run again, its instance having died
          // before the step's result was kept. The grant is the same one; the upstream call keeps its own key.
          if (error instanceof ApprovalRefused && error.reason === 'not_redeemable_redeemed')
            return { ok: true, redeemedAt: (await book.get(id))?.redeemedAt ?? 0 };
          if (error instanceof ApprovalRefused) return { ok: false, reason: error.message };
          throw error;
        }
      });
      if (!redeemed.ok) throw new FlowEnded(`refused: ${redeemed.reason}`, 'ended');
      const approvedBy = record.votes.filter((v) => v.decision === 'approve').map((v) => v.by.subject);
      ctx.audit.note({ approval: { id, state: 'redeemed', effectDigest: digest, votes } });
      return { id, approvedBy };
    }
    case 'denied': {
      ctx.audit.note({ approval: { id, state: 'denied', votes } });
      const by = record.votes
        .filter((v) => v.decision === 'deny')
        .map((v) => `${v.by.name ?? v.by.subject}${v.comment ? ` ("${v.comment}")` : ''}`)
        .join(', ');
      // A person said no: the trail names it a decline, with who.
      throw new FlowEnded(`denied by ${by}`, 'declined');
    }
    case 'expired':
      ctx.audit.note({ approval: { id, state: 'expired', votes } });
      throw new FlowEnded(
        record.state === 'approved'
          ? 'the approval was granted but not used in time: call again to ask anew'
          : 'the approval request expired before it was decided',
        'ended',
      );
    case 'withdrawn':
      // The server took it back (the policy it was asked under was replaced): no grant can come of it.
      ctx.audit.note({ approval: { id, state, because: record.withdrawnBecause ?? null, votes } });
      throw new FlowEnded(
        `the approval request was withdrawn: ${record.withdrawnBecause ?? 'by the server'}; call again to ask anew`,
        'ended',
      );
    default:
      ctx.audit.note({ approval: { id, state, votes } });
      throw new FlowEnded(`refused: this approval request is ${state}`, 'ended');
  }
}
