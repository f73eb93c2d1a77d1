// Which control decided what in one round, read from its event: the guard or link that answered or refused, the
// human controls' questions (their hint) and their notes (consent given, step-up done, approval redeemed…).
import { humanControlOf } from './labels.js';
import type { MeasuredRound } from './measured.js';

export type ControlDecision = readonly [control: string, decision: string];

const byOutcome: Readonly<Record<string, string>> = {
  refused: 'refused',
  denied: 'denied',
  input_required: 'asked',
};

type Notes = Readonly<Record<string, Record<string, unknown> | undefined>>;

export function decisionsOf(round: MeasuredRound): ControlDecision[] {
  const out: ControlDecision[] = [];
  if (round.decidedBy !== undefined) out.push([round.decidedBy, byOutcome[round.outcome] ?? 'answered']);
  for (const request of Object.values(round.inputRequests ?? {})) {
    const control = humanControlOf(request);
    if (control !== undefined) out.push([control, 'asked']);
  }
  const notes = (round.notes ?? {}) as Notes;
  const gateway = notes.gateway?.decision as { allow?: unknown } | undefined;
  // A round the policy refused names it twice (decidedBy and its note): one decision, counted once.
  if (gateway && round.decidedBy !== 'gateway_policy')
    out.push(['gateway_policy', gateway.allow === true ? 'allowed' : 'denied']);
  const consent = notes.consent;
  if (consent?.refused !== undefined) out.push(['consent', 'refused']);
  else if (consent?.answer === 'yes') out.push(['consent', 'allowed']);
  else if (consent?.answer === 'no') out.push(['consent', 'declined']);
  const stepUp = notes.stepUp;
  if (stepUp?.refused !== undefined) out.push(['step_up', 'refused']);
  else if (stepUp?.doneAt !== undefined) out.push(['step_up', 'allowed']);
  const approval = notes.approval;
  if (approval?.refused !== undefined) out.push(['approval', 'refused']);
  else if (approval?.state === 'redeemed') out.push(['approval', 'allowed']);
  else if (typeof approval?.state === 'string' && approval.state !== 'pending')
    out.push(['approval', approval.state]);
  return out;
}
