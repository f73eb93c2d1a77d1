// ctx-side of step-up: a record per flow in the shared store (its id derived from the flow id, so every instance
// and every round finds the same one), and a URL-mode question to the server's own step-up page until the page
// has marked it done. The code itself never passes through the client.
import { createHash } from 'node:crypto';
import { FlowEnded } from '../flow/index.js';
import type { SharedStore } from '../stores/index.js';
import { type Person, personOf } from './approval-book.js';
import type { ControlContext } from './context.js';
import { ControlsUsageError } from './errors.js';
import { cameBack, gaveUp, heldForPerson } from './wakeups.js';

export interface StepUpOptions {
  /** Why the second factor is needed now, shown in the question and on the page. */
  reason: string;
  /** The inputRequests key (default `step_up`). */
  key?: string;
}

export interface StepUpRecord {
  readonly id: string;
  readonly person: Person;
  readonly flowId: string;
  readonly reason: string;
  readonly createdAt: number;
  readonly state: 'pending' | 'done';
  readonly doneAt?: number;
}

export const stepUpKey = (id: string) => `mrtr/step-up/${id}`;

export const stepUpIdOf = (flowId: string): string =>
  createHash('sha256').update(`mrtr/step-up\n${flowId}`).digest('base64url').slice(0, 22);

export async function readStepUp(store: SharedStore, id: string): Promise<StepUpRecord | undefined> {
  if (!/^[A-Za-z0-9_-]{22}$/.test(id)) return undefined;
  const entry = await store.get(stepUpKey(id));
  return entry ? (JSON.parse(entry.value) as StepUpRecord) : undefined;
}

export async function requireStepUp(
  ctx: ControlContext,
  store: SharedStore,
  pageUrl: (id: string) => string,
  o: StepUpOptions,
  ttlMs: number,
  /** Waits (a while) for the page to mark step-up `id` done: a client that came back to check is held, not spun. */
  hold: (
    id: string,
    signal: AbortSignal | undefined,
    stillPending?: () => Promise<boolean>,
  ) => Promise<void> = async () => {},
): Promise<void> {
  const principal = ctx.principal;
  if (!principal?.issuer)
    throw new ControlsUsageError('step-up needs an authenticated caller (a principal with an issuer)');
  const id = stepUpIdOf(ctx.flowId);
  const key = o.key ?? 'step_up';
  // The question's text changes every round (its check number), so the flow engine never matches the previous
  // round's answer to it: a decline or cancel is read here, or the person could never say no.
  const no = gaveUp(ctx.inputResponses, key);
  if (no) {
    const word = no === 'decline' ? 'declined' : 'cancelled';
    ctx.audit.note({ stepUp: { id, refused: word } });
    throw new FlowEnded(
      `${word} by the user: the step-up (second factor) for "${o.reason}" was ${word}, so nothing was done`,
      no === 'decline' ? 'declined' : 'cancelled',
    );
  }
  let record = await readStepUp(store, id);
  if (!record) {
    const fresh: StepUpRecord = {
      id,
      person: personOf(principal),
      flowId: ctx.flowId,
      reason: o.reason,
      createdAt: Date.now(),
      state: 'pending',
    };
    await store.create(stepUpKey(id), JSON.stringify(fresh), ttlMs);
    record = (await readStepUp(store, id)) ?? fresh;
  }
  if (record.state === 'pending' && cameBack(ctx.inputResponses, key)) {
    const stillPending = async () => (await readStepUp(store, id))?.state === 'pending';
    await heldForPerson(ctx, hold(id, ctx.signal, stillPending));
    record = (await readStepUp(store, id)) ?? record;
  }
  if (record.state === 'done') {
    ctx.audit.note({ stepUp: { id, doneAt: new Date(record.doneAt ?? 0).toISOString() } });
    return;
  }
  await ctx.ask.url(
    `Confirm it is you: ${o.reason}. Open the link, sign in and enter the code from your authenticator app, then ` +
      `continue here (request ${ctx.round + 1} of this call).`,
    pageUrl(id),
    { key, humanRequired: 'second_factor', progress: `waiting for the second factor: ${o.reason}` },
  );
}
