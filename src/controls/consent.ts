// Consent bound to the effect: the person is shown exactly what will happen and says yes to that. The effect's
// digest is pinned in the flow's journal (a step) before the question; every later round, and the moment of
// execution, re-compute the effect from fresh facts and refuse if it is no longer the one consented to.
import { FlowEnded, FlowUsageError } from '../flow/index.js';
import type { SharedStore } from '../stores/index.js';
import type { ControlContext } from './context.js';
import { checkEffect, type Effect, effectDigest } from './effect.js';
import { previewLines } from './effect-preview.js';

export interface ConsentOptions {
  /** Exactly what will happen: the tool, the arguments that matter, the facts you add (owner, size, state). */
  effect: Effect;
  /** The question's first line (default "Do you consent to this?"). */
  message?: string;
  /** The inputRequests key (default `consent`). */
  key?: string;
}

/** A yes to one effect, valid for one execution. */
export interface Consent {
  /** The pinned effect's digest. */
  readonly digest: string;
  /**
   * Run the effect once: `fresh` is the effect re-computed from facts read now; if it differs from what the person
   * consented to, the call ends with a refusal and `run` is not called.
   */
  execute<T>(fresh: Effect, run: () => T | Promise<T>): Promise<T>;
}

/** What a consent question says of rows it has no room for: a form cannot show more, so the person is warned. */
const UNSEEN = 'this question cannot show them, so decline unless you know what they are';

const changed = (what: string) =>
  new FlowEnded(
    `refused: ${what} changed after you consented, so the consent does not cover it; call again to see the new effect`,
    'ended',
  );

export async function askConsent(
  ctx: ControlContext,
  store: SharedStore,
  o: ConsentOptions,
  usedTtlMs: number,
): Promise<Consent> {
  checkEffect(o.effect, 'consent');
  const digest = effectDigest(o.effect);
  // Pinned before the question is asked: the journal holds what the person was shown.
  const pinned = await ctx.ask.step('mrtr/consent-pin', () => digest);
  if (pinned !== digest) {
    ctx.audit.note({ consent: { refused: 'effect_changed', pinned, now: digest } });
    throw changed('the effect');
  }
  // Every fact and argument by name, each value bounded on its own (effect-preview.ts): nothing hides behind another.
  const message = `${o.message ?? 'Do you consent to this?'}\n${previewLines(o.effect, UNSEEN)
    .map((l) => `  ${l}`)
    .join('\n')}`;
  const yes = await ctx.ask.confirm(message, { key: o.key ?? 'consent', humanRequired: 'consent' });
  if (!yes) {
    ctx.audit.note({ consent: { digest, answer: 'no' } });
    throw new FlowEnded('declined by the user', 'declined');
  }
  let used = false;
  return {
    digest,
    async execute<T>(fresh: Effect, run: () => T | Promise<T>): Promise<T> {
      if (used) throw new FlowUsageError('a consent is valid for one execution');
      used = true;
      checkEffect(fresh, 'consent.execute');
      const now = effectDigest(fresh);
      if (now !== pinned) {
        ctx.audit.note({ consent: { refused: 'changed_before_execution', pinned, now } });
        throw changed('the effect');
      }
      return ctx.ask.step<T>('mrtr/consent-execute', async () => {
        // Once per flow even when the round is run again without a step ledger: the store remembers the execution.
        if (!(await store.create(`mrtr/consent/${ctx.flowId}/${pinned}`, '1', usedTtlMs))) {
          ctx.audit.note({ consent: { refused: 'already_executed', digest: pinned } });
          throw new FlowEnded('refused: this consent was already used for one execution', 'ended');
        }
        ctx.audit.note({ consent: { digest: pinned, answer: 'yes', executed: true } });
        return run();
      });
    },
  };
}
