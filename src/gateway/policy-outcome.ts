// What the audit trail says of a policy's refusal: the rule that decided, in words a reader of `mrtr audit` needs
// no notes for (the notes hold the same facts as fields).
import type { Decision } from './policy/index.js';

/** The reason a `denied` event carries: which rule refused, or that none allowed. */
export function deniedBy(decision: Extract<Decision, { allow: false }>): string {
  if (decision.reason === 'denied') return `rule "${decision.rule ?? '?'}" denies this call`;
  if (decision.reason === 'condition_error')
    return `rule "${decision.rule ?? '?'}" could not be evaluated, so the call is refused${decision.detail ? ` (${decision.detail})` : ''}`;
  return decision.detail ?? 'no rule allows this call';
}
