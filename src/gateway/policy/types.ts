// The policy's vocabulary: who calls (PolicyCaller), what (ToolRef), the rules as a config states them (PolicyRule),
// and what the policy answers (Decision).

/** The controls a rule can require before a call goes upstream. */
export type Control = 'consent' | 'step_up' | 'approval';
export const CONTROLS: readonly Control[] = Object.freeze(['consent', 'step_up', 'approval']);

export interface PolicyCaller {
  readonly subject: string;
  readonly issuer?: string | undefined;
  readonly roles: readonly string[];
  readonly scopes: readonly string[];
}

export interface ToolRef {
  /** The upstream's name in the config. */
  readonly upstream: string;
  /** The tool's name as the upstream lists it. */
  readonly tool: string;
}

/** A prompt or a resource of an upstream, as a rule's `prompts` or `resources` names it. */
export interface SurfaceRef {
  readonly kind: SurfaceKind;
  readonly upstream: string;
  /** The prompt's name, or the resource's URI (a template's URI template), as the upstream lists it. */
  readonly name: string;
}
export type SurfaceKind = 'prompt' | 'resource';

/** What the policy answers for a prompt or resource: it is listed and usable, or it does not exist for the caller. */
export type SurfaceDecision =
  | { readonly allow: true; readonly rules: string[] }
  | { readonly allow: false; readonly rule?: string; readonly reason: 'no_rule' | 'denied' };

export interface ApprovalRequirement {
  /** Who may approve: callers with this role (never the caller who asks). */
  readonly role: string;
  /** How many distinct approvers. */
  readonly approvals: number;
  /** How long an approval request stays open. */
  readonly expiresInMs: number;
}

export interface RateLimit {
  readonly requests: number;
  readonly perMs: number;
}

/** One rule as a config file (or a program) states it; compilePolicy checks it and makes it runnable. */
export interface PolicyRule {
  /** Shown in decisions and the audit trail; default `rule N (line L)`. Unique. */
  readonly name?: string | undefined;
  /** `<upstream>/<tool glob>`: `*` any run of characters within the part, `?` one character. */
  readonly tools?: readonly string[] | undefined;
  /** `<upstream>/<prompt glob>`: the upstream's prompts this rule is about. */
  readonly prompts?: readonly string[] | undefined;
  /** `<upstream>/<URI glob>`: its resources, and its templates by their URI template (`*` reaches across `/`). */
  readonly resources?: readonly string[] | undefined;
  /**
   * Any of these roles; `*` is anyone authenticated. Every kind of "who" given must hold. An allow rule must give
   * at least one; a deny rule that gives none applies to everyone.
   */
  readonly roles?: readonly string[] | undefined;
  /** Any of these subjects, exactly. */
  readonly subjects?: readonly string[] | undefined;
  /** All of these scopes. */
  readonly scopes?: readonly string[] | undefined;
  /** Shown to a caller this rule refuses. */
  readonly reason?: string | undefined;
  readonly rateLimit?: RateLimit | undefined;
  readonly require?: readonly Control[] | undefined;
  /** Required exactly when `require` holds `approval`; approvals default 1, expiresInMs 24 h. */
  readonly approval?:
    | {
        readonly role: string;
        readonly approvals?: number | undefined;
        readonly expiresInMs?: number | undefined;
      }
    | undefined;
  readonly deny?: boolean | undefined;
  /** A CEL condition over `args`, `caller` and `tool`; the rule applies only when it is true. */
  readonly when?: string | undefined;
  /**
   * Absolute paths: the rule applies to a call whose path arguments are in one of them (the path or below it) — any
   * of them for a deny rule, every one of them (and at least one) for an allow rule.
   */
  readonly paths?: readonly string[] | undefined;
  /**
   * Deny rules with `paths`: `<upstream>/<tool glob>` of tools that descend into a directory (search_files,
   * directory_tree, listings). For them the rule also applies to a path argument above a listed path.
   */
  readonly descendingTools?: readonly string[] | undefined;
}

/** What the policy knows of an upstream's paths: which arguments hold them, their base, their case. */
export interface PolicyUpstream {
  readonly name: string;
  readonly pathArguments?: readonly string[] | undefined;
  readonly cwd?: string | undefined;
  readonly caseInsensitive?: boolean | undefined;
}

export type Decision =
  | {
      readonly allow: true;
      /** The allow rules that matched. */
      readonly rules: string[];
      /** Every control any of them requires, in the order consent, step_up, approval. */
      readonly require: Control[];
      readonly approval?: ApprovalRequirement;
      /** Every rate limit of every matching rule. */
      /** `bucket` names the rule by its meaning (a digest), so the buckets outlive a reload that moves lines. */
      readonly rateLimits: { rule: string; bucket: string; requests: number; perMs: number }[];
    }
  | {
      readonly allow: false;
      /** The rule that refused (a deny rule, or an allow rule whose condition could not be evaluated). */
      readonly rule?: string;
      readonly reason: 'no_rule' | 'denied' | 'condition_error';
      /** For the audit trail, never for the caller: which condition failed and why. */
      readonly detail?: string;
      /** Safe to show the caller: says no more than the rule's own `reason` text. */
      readonly message: string;
    };

/** What the policy says of one caller and one tool before the arguments are known; pass it on to decide(). */
export interface Screening {
  /** Whether the tool is listed to the caller (Policy.visible). */
  readonly visible: boolean;
}

export interface Policy {
  /** The policy's version: SHA-256 (base64url) of its rules in canonical form. Comments and layout do not change it. */
  readonly digest: string;
  readonly ruleCount: number;
  /** Whether the caller may see the tool listed: an allow rule could let them call it (conditions aside). */
  visible(caller: PolicyCaller, ref: ToolRef): boolean;
  /** Whether the caller may call the tool with these (path-normalized, see paths.ts) arguments, and under which controls. */
  decide(
    caller: PolicyCaller,
    ref: ToolRef,
    args: Readonly<Record<string, unknown>>,
    /** What screen(caller, ref) said as the call found its tool: its matching rules are not looked for again. */
    screened?: Screening,
  ): Decision;
  /**
   * The one pass over every rule for a caller and a tool: whether it is listed, and which rules a call's decision
   * reads. A gateway call finds its tool with it and is decided on it, so no rule is matched twice.
   */
  screen(caller: PolicyCaller, ref: ToolRef): Screening;
  /** The controls some rule requires, in the order consent, step_up, approval. */
  controlsUsed(): Control[];
  /**
   * Whether the caller may see and use a prompt or resource: deny by default, any matching deny wins. No condition,
   * path or control applies to them (a rule naming them has none), so what is listed is what may be used.
   */
  allows(caller: PolicyCaller, ref: SurfaceRef): SurfaceDecision;
  /** Whether some allow rule names prompts, or resources, at all: the gateway offers that kind only then. */
  covers(kind: SurfaceKind): boolean;
}
