// The policy's version: a SHA-256 over the rules in canonical form — what they mean, not how the file lays them out.
// Comments, blank lines, key order, quoting, the spelling `step-up`, the order of a rule's roles or tools, and the
// layout of a `when` (CEL prints it back in one form) do not change it; any change to what a rule does does. Rule
// order is kept: it names the rule a decision reports. Consents and approvals are bound to this digest, so a
// changed policy re-asks rather than carrying an old yes.
import { createHash } from 'node:crypto';
import { type ApprovalRequirement, CONTROLS, type Control, type RateLimit } from './types.js';

/** What a rule means, as the digest sees it. */
export interface CanonicalRule {
  /** Only a name the config gives: default names carry a line number, which layout changes. */
  readonly name: string | null;
  readonly tools: readonly string[];
  readonly roles: readonly string[] | null;
  readonly subjects: readonly string[] | null;
  readonly scopes: readonly string[] | null;
  readonly reason: string | null;
  readonly rateLimit: RateLimit | null;
  readonly require: readonly Control[];
  readonly approval: ApprovalRequirement | null;
  readonly deny: boolean;
  /** The condition as CEL prints it back. */
  readonly when: string | null;
  /** In their normal form; left out of the digest when the rule has none, so older policies keep their version. */
  readonly paths?: readonly string[] | null;
  readonly descendingTools?: readonly string[] | null;
  /** Left out when the rule names none, as paths are: a tools-only policy keeps its version. */
  readonly prompts?: readonly string[] | null;
  readonly resources?: readonly string[] | null;
}

const FORMAT = 'mrtr-gateway-policy/1';

export const sortedSet = (items: readonly string[] | undefined): string[] | null =>
  items === undefined ? null : [...new Set(items)].sort();

export const orderedControls = (controls: Iterable<Control>): Control[] => {
  const set = new Set(controls);
  return CONTROLS.filter((c) => set.has(c));
};

export function policyDigest(rules: readonly CanonicalRule[]): string {
  // Every object below is built with its keys in one fixed order, so JSON.stringify is canonical here.
  const canonical = rules.map((r) => ({
    name: r.name,
    tools: r.tools,
    roles: r.roles,
    subjects: r.subjects,
    scopes: r.scopes,
    reason: r.reason,
    rateLimit: r.rateLimit && { requests: r.rateLimit.requests, perMs: r.rateLimit.perMs },
    require: r.require,
    approval: r.approval && {
      role: r.approval.role,
      approvals: r.approval.approvals,
      expiresInMs: r.approval.expiresInMs,
    },
    deny: r.deny,
    when: r.when,
    ...(r.paths ? { paths: r.paths } : {}),
    ...(r.descendingTools ? { descendingTools: r.descendingTools } : {}),
    ...(r.prompts ? { prompts: r.prompts } : {}),
    ...(r.resources ? { resources: r.resources } : {}),
  }));
  return createHash('sha256')
    .update(JSON.stringify({ format: FORMAT, rules: canonical }))
    .digest('base64url');
}
