// The policy engine: deny by default, every matching rule considered, any matching deny wins. A condition that
// cannot be evaluated (a missing field, a type mismatch, a value that is not a bool) fails closed for what it
// guards: a deny rule's denies, an allow rule's does not allow. Several allow rules that match add up: every control
// any of them requires, every rate limit; of their approvals the one asking the most approvers (the first such rule
// in the file on a tie, its role), with the shortest expiry of them all.
import { configError } from '../config-errors.js';
import { type CompiledRule, compileRule, literalFolds, type RulePlace } from './compile-rule.js';
import { type ConditionBindings, conditionBindings, listingBindings } from './condition.js';
import { orderedControls, policyDigest } from './digest.js';
import type {
  ApprovalRequirement,
  Control,
  Decision,
  Policy,
  PolicyCaller,
  PolicyRule,
  Screening,
  SurfaceDecision,
  SurfaceKind,
  SurfaceRef,
  ToolRef,
} from './types.js';

export type CompilePolicyOptions = RulePlace;

/** Safe to show any caller: they say no more than a rule's own `reason`. */
const MESSAGES = {
  no_rule: "The gateway's policy does not allow you to call this tool.",
  denied: "The gateway's policy refuses this call.",
  condition_error: "The gateway's policy could not decide on this call, so it refuses it.",
} as const;

export function compilePolicy(rules: readonly PolicyRule[], options: CompilePolicyOptions): Policy {
  const folds = literalFolds(options.upstreams);
  const compiled = rules.map((rule, i) => compileRule(rule, i, options, folds));
  const seen = new Map<string, number>();
  compiled.forEach((rule, i) => {
    const first = seen.get(rule.name);
    if (first !== undefined)
      throw configError(
        options.file,
        options.lineOf?.(i, 'name') ?? options.lineOf?.(i),
        `rules[${i}].name`,
        `"${rule.name}" is already the name of rules[${first}]; rule names must be unique`,
      );
    seen.set(rule.name, i);
  });
  return new CompiledPolicy(compiled, policyDigest(compiled.map((r) => r.canonical)));
}

class CompiledPolicy implements Policy {
  readonly #rules: readonly CompiledRule[];

  constructor(
    rules: readonly CompiledRule[],
    readonly digest: string,
  ) {
    this.#rules = rules;
  }

  get ruleCount(): number {
    return this.#rules.length;
  }

  controlsUsed(): Control[] {
    return orderedControls(this.#rules.flatMap((r) => r.require));
  }

  visible(caller: PolicyCaller, ref: ToolRef): boolean {
    return this.screen(caller, ref).visible;
  }

  decide(
    caller: PolicyCaller,
    ref: ToolRef,
    args: Readonly<Record<string, unknown>>,
    screened?: Screening,
  ): Decision {
    // A screening of this policy, for this caller and tool, already holds the rules that match: not walked again.
    const reused =
      screened instanceof RuleScreening && screened.policy === this && screened.isOf(caller, ref);
    return (reused ? screened : this.screen(caller, ref)).decide(args);
  }

  allows(caller: PolicyCaller, ref: SurfaceRef): SurfaceDecision {
    const rules: string[] = [];
    for (const rule of this.#rules) {
      if (!rule.matchesSurface(ref) || !rule.matchesCaller(caller)) continue;
      if (rule.deny) return { allow: false, rule: rule.name, reason: 'denied' };
      rules.push(rule.name);
    }
    return rules.length > 0 ? { allow: true, rules } : { allow: false, reason: 'no_rule' };
  }

  covers(kind: SurfaceKind): boolean {
    return this.#rules.some((r) => !r.deny && (kind === 'prompt' ? r.names.prompts : r.names.resources));
  }

  screen(caller: PolicyCaller, ref: ToolRef): RuleScreening {
    const matching: CompiledRule[] = [];
    let allowed = false;
    let denied = false;
    let bindings: ConditionBindings | undefined;
    for (const rule of this.#rules) {
      if (!rule.matchesTool(ref) || !rule.matchesCaller(caller)) continue;
      matching.push(rule);
      if (denied) continue;
      // A condition decided by the caller and the tool alone (`caller.subject == "bob"`) decides every call: applied
      // here, so a tool this caller can never call is not listed to them. One that reads `args` (an error here) may
      // or may not apply to a given call: the tool stays listed and decide() judges each call.
      if (rule.when) {
        bindings ??= listingBindings(caller, ref);
        const result = rule.when.evaluate(bindings, ref.upstream);
        if (result.ok && !result.value) continue;
        if (rule.deny && !result.ok) continue;
      }
      // Paths are a call's: a deny on some paths hides no tool, an allow on some paths lists it.
      if (rule.paths && rule.deny) continue;
      if (rule.deny) denied = true;
      else allowed = true;
    }
    return new RuleScreening(this, caller, ref, matching, allowed && !denied);
  }
}

/** The rules that match one caller and one tool, in file order: each call of theirs to it is judged on them. */
class RuleScreening implements Screening {
  constructor(
    readonly policy: Policy,
    private readonly caller: PolicyCaller,
    private readonly ref: ToolRef,
    private readonly rules: readonly CompiledRule[],
    readonly visible: boolean,
  ) {}

  /** Whether it was made for this caller and tool (the same person with the same roles, the same tool). */
  isOf(caller: PolicyCaller, ref: ToolRef): boolean {
    const mine = this.caller;
    return (
      ref.upstream === this.ref.upstream &&
      ref.tool === this.ref.tool &&
      caller.subject === mine.subject &&
      caller.issuer === mine.issuer &&
      sameList(caller.roles, mine.roles) &&
      sameList(caller.scopes, mine.scopes)
    );
  }

  decide(args: Readonly<Record<string, unknown>>): Decision {
    const { caller, ref } = this;
    let bindings: ConditionBindings | undefined; // made once, and only if some matching rule has a condition
    const allowing: CompiledRule[] = [];
    let undecided: { rule: string; detail: string } | undefined;
    for (const rule of this.rules) {
      const scope = rule.paths?.(ref, args);
      if (scope && !scope.ok) {
        const detail = `rule "${rule.name}": paths: ${scope.error}`;
        if (rule.deny) return conditionError(rule.name, detail);
        undecided ??= { rule: rule.name, detail };
        continue;
      }
      if (scope && !scope.value) continue;
      if (rule.when) {
        bindings ??= conditionBindings(caller, ref, args);
        const result = rule.when.evaluate(bindings, ref.upstream);
        if (!result.ok) {
          const detail = `rule "${rule.name}": when: ${result.error}`;
          if (rule.deny) return conditionError(rule.name, detail);
          undecided ??= { rule: rule.name, detail };
          continue;
        }
        if (!result.value) continue;
      }
      if (rule.deny)
        return { allow: false, rule: rule.name, reason: 'denied', message: rule.reason ?? MESSAGES.denied };
      allowing.push(rule);
    }
    if (allowing.length === 0) {
      if (undecided) return conditionError(undecided.rule, undecided.detail);
      return { allow: false, reason: 'no_rule', message: MESSAGES.no_rule };
    }
    const approval = strictestApproval(allowing);
    return {
      allow: true,
      rules: allowing.map((r) => r.name),
      require: orderedControls(allowing.flatMap((r) => r.require)),
      ...(approval ? { approval } : {}),
      rateLimits: allowing.flatMap((r) =>
        r.rateLimit
          ? [{ rule: r.name, bucket: r.bucket, requests: r.rateLimit.requests, perMs: r.rateLimit.perMs }]
          : [],
      ),
    };
  }
}

const sameList = (a: readonly string[], b: readonly string[]) =>
  a === b || (a.length === b.length && a.every((x, i) => x === b[i]));

/** A rule that could not be evaluated refuses the call: a deny at once, an allow when no other rule allows. */
function conditionError(rule: string, detail: string) {
  return {
    allow: false,
    rule,
    reason: 'condition_error',
    detail,
    message: MESSAGES.condition_error,
  } as const;
}

/** Most approvers wins (the first such rule on a tie, with its role); the shortest expiry of all applies. */
function strictestApproval(rules: readonly CompiledRule[]): ApprovalRequirement | undefined {
  let strictest: ApprovalRequirement | undefined;
  let expiresInMs = Number.POSITIVE_INFINITY;
  for (const { approval } of rules) {
    if (!approval) continue;
    if (!strictest || approval.approvals > strictest.approvals) strictest = approval;
    expiresInMs = Math.min(expiresInMs, approval.expiresInMs);
  }
  return strictest && { role: strictest.role, approvals: strictest.approvals, expiresInMs };
}
