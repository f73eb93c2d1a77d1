// One rule, checked for meaning and made runnable: its tool globs compiled, its condition parsed and type-checked,
// its defaults filled in. What a rule says that cannot work is a GatewayConfigError at the rule's line.
import { posix } from 'node:path';
import { configError, type GatewayConfigError } from '../config-errors.js';
import { foldPath, isPathName, normalizePath } from '../paths.js';
import { type Condition, ConditionCompileError, compileCondition } from './condition.js';
import { type CanonicalRule, orderedControls, policyDigest, sortedSet } from './digest.js';
import { compileGlob, type Glob, splitToolPattern } from './glob.js';
import type { LiteralFold } from './literals.js';
import { compilePathScope, type PathScope } from './path-scope.js';
import {
  type ApprovalRequirement,
  CONTROLS,
  type Control,
  type PolicyCaller,
  type PolicyRule,
  type PolicyUpstream,
  type RateLimit,
  type SurfaceRef,
  type ToolRef,
} from './types.js';

export const DEFAULT_APPROVAL_EXPIRY_MS = 24 * 3_600_000;

export interface CompiledRule {
  readonly name: string;
  readonly deny: boolean;
  readonly reason: string | undefined;
  readonly when: Condition | undefined;
  /** The rule's `paths` against a call's path arguments; undefined when it names none. */
  readonly paths: PathScope | undefined;
  readonly require: readonly Control[];
  readonly approval: ApprovalRequirement | undefined;
  readonly rateLimit: RateLimit | undefined;
  readonly canonical: CanonicalRule;
  /**
   * Names the rule's rate-limit bucket by what the rule means, not by its default name (which carries a line
   * number): a reload that only moves lines keeps every bucket, a changed rule starts a new one.
   */
  readonly bucket: string;
  /** Whether the rule names any prompt, or any resource. */
  readonly names: { readonly prompts: boolean; readonly resources: boolean };
  matchesTool(ref: ToolRef): boolean;
  /** Whether the rule's `prompts` or `resources` (by the ref's kind) name this one. */
  matchesSurface(ref: SurfaceRef): boolean;
  matchesCaller(caller: PolicyCaller): boolean;
}

export interface RulePlace {
  readonly file: string;
  readonly lineOf?: ((index: number, key?: keyof PolicyRule) => number | undefined) | undefined;
  /** The upstreams' path settings (config.ts); without them every upstream takes the default path arguments. */
  readonly upstreams?: readonly PolicyUpstream[] | undefined;
}

/** For each case-insensitive upstream, how a condition's path literals are folded (literals.ts). */
export function literalFolds(upstreams: readonly PolicyUpstream[] = []): Map<string, LiteralFold> {
  return new Map(
    upstreams
      .filter((u) => u.caseInsensitive)
      .map((u) => [
        u.name,
        {
          isPath: (name: string) => isPathName(name, u.pathArguments),
          fold: (s: string) => foldPath(s, u.cwd),
        },
      ]),
  );
}

export function compileRule(
  rule: PolicyRule,
  index: number,
  place: RulePlace,
  folds: ReadonlyMap<string, LiteralFold> = literalFolds(place.upstreams),
): CompiledRule {
  const line = (key?: keyof PolicyRule) => place.lineOf?.(index, key) ?? place.lineOf?.(index);
  const fail = (key: keyof PolicyRule | undefined, problem: string): GatewayConfigError =>
    configError(place.file, line(key), key ? `rules[${index}].${key}` : `rules[${index}]`, problem);

  const ruleLine = line();
  const name =
    rule.name ?? (ruleLine === undefined ? `rule ${index + 1}` : `rule ${index + 1} (line ${ruleLine})`);

  if (rule.tools === undefined && rule.prompts === undefined && rule.resources === undefined)
    throw fail(undefined, 'names nothing: give tools, prompts or resources as <upstream>/<glob>');
  if (rule.tools?.length === 0) throw fail('tools', 'must name at least one tool, as files/read_*');
  const tools = (rule.tools ?? []).map((pattern) => {
    const parts = splitToolPattern(pattern);
    if (!parts)
      throw fail('tools', `"${pattern}" must be <upstream>/<tool glob>, as files/read_* or tickets/*`);
    return { upstream: compileGlob(parts.upstream), tool: compileGlob(parts.tool) };
  });
  const surfaceGlobs = (key: 'prompts' | 'resources', example: string) => {
    const patterns = rule[key];
    if (patterns?.length === 0) throw fail(key, `is empty; leave it out or name one, as ${example}`);
    return (patterns ?? []).map((pattern) => {
      const parts = splitToolPattern(pattern);
      if (!parts) throw fail(key, `"${pattern}" must be <upstream>/<glob>, as ${example}`);
      return { upstream: compileGlob(parts.upstream), tool: compileGlob(parts.tool) };
    });
  };
  const prompts = surfaceGlobs('prompts', 'docs/review_*');
  const resources = surfaceGlobs('resources', 'docs/file:///handbook/*');
  // Prompts and resources are listed or not, used or not: nothing a tool call's controls, limits or conditions
  // read exists for them, so a rule naming them cannot say any of it (it would silently not apply).
  if (rule.prompts !== undefined || rule.resources !== undefined) {
    const toolOnly = (['require', 'approval', 'rateLimit', 'when', 'paths', 'descendingTools'] as const).find(
      (key) => rule[key] !== undefined,
    );
    if (toolOnly)
      throw fail(
        toolOnly,
        'is for tool calls; a rule naming prompts or resources cannot have it (put them in a rule of their own)',
      );
  }

  for (const key of ['roles', 'subjects', 'scopes'] as const)
    if (rule[key]?.length === 0)
      throw fail(key, 'is empty, so the rule matches nobody; leave it out or list someone');
  // An allow rule that names nobody would silently grant nothing: refused. A deny rule that names nobody denies
  // everyone — read the other way it would silently deny nothing, the unsafe direction.
  const everyone = rule.deny === true && !rule.roles && !rule.subjects && !rule.scopes;
  if (!everyone && !rule.roles && !rule.subjects && !rule.scopes)
    throw fail(
      undefined,
      'an allow rule must say who it is for (roles, subjects or scopes); with none it matches nobody ("*" in roles is anyone signed in)',
    );

  const require = orderedControls(rule.require ?? []);
  for (const control of rule.require ?? [])
    if (!CONTROLS.includes(control))
      throw fail('require', `unknown control "${control}" (choose ${CONTROLS.join(', ')})`);
  const deny = rule.deny === true;
  if (deny && (require.length > 0 || rule.approval || rule.rateLimit))
    throw fail(
      rule.require ? 'require' : rule.approval ? 'approval' : 'rateLimit',
      'a deny rule refuses the call; it cannot also require controls or set a rate limit',
    );
  if (require.includes('approval') && !rule.approval)
    throw fail(
      'require',
      'approval is required, so the rule needs approval: { role: ... } saying who approves',
    );
  if (rule.approval && !require.includes('approval'))
    throw fail('approval', 'is set but require does not list approval; add it to require or remove this');
  const approval = rule.approval && {
    role: rule.approval.role,
    approvals: rule.approval.approvals ?? 1,
    expiresInMs: rule.approval.expiresInMs ?? DEFAULT_APPROVAL_EXPIRY_MS,
  };
  if (approval && (approval.role.trim() === '' || approval.role === '*'))
    throw fail('approval', 'role must name the role of the approvers (not empty, not "*")');
  if (approval && (!Number.isInteger(approval.approvals) || approval.approvals < 1))
    throw fail('approval', 'approvals must be a whole number of at least 1');
  if (approval && !(approval.expiresInMs > 0)) throw fail('approval', 'expiresIn must be more than zero');
  const rateLimit = rule.rateLimit;
  if (
    rateLimit &&
    (!Number.isInteger(rateLimit.requests) || rateLimit.requests < 1 || !(rateLimit.perMs > 0))
  )
    throw fail('rateLimit', 'needs requests (a whole number, at least 1) per a duration of more than zero');

  let when: Condition | undefined;
  if (rule.when !== undefined) {
    try {
      when = compileCondition(rule.when, folds);
    } catch (error) {
      if (error instanceof ConditionCompileError) throw fail('when', error.message);
      throw error;
    }
  }

  const paths = rule.paths?.map((path) => {
    if (!posix.isAbsolute(path))
      throw fail('paths', `"${path}" must be an absolute path (relative paths would depend on the upstream)`);
    try {
      return normalizePath(path);
    } catch (error) {
      throw fail('paths', (error as Error).message);
    }
  });
  if (rule.paths?.length === 0) throw fail('paths', 'is empty; leave it out or list a path');
  if (rule.descendingTools && !deny)
    throw fail('descendingTools', 'is for deny rules: an allow rule never reaches above its paths');
  if (rule.descendingTools && !paths)
    throw fail('descendingTools', 'needs paths: the paths a call from above must not reach');
  const descending = (rule.descendingTools ?? []).map((pattern) => {
    const parts = splitToolPattern(pattern);
    if (!parts)
      throw fail('descendingTools', `"${pattern}" must be <upstream>/<tool glob>, as files/search_files`);
    return { upstream: compileGlob(parts.upstream), tool: compileGlob(parts.tool) };
  });

  const roles = rule.roles && new Set(rule.roles);
  const anyRole = roles?.has('*') ?? false;
  const subjects = rule.subjects && new Set(rule.subjects);
  const scopes = rule.scopes;
  const matchesGlobs = (globs: { upstream: Glob; tool: Glob }, ref: ToolRef) =>
    globs.upstream(ref.upstream) && globs.tool(ref.tool);

  const canonical: CanonicalRule = {
    name: rule.name ?? null,
    tools: sortedSet(rule.tools) ?? [],
    roles: sortedSet(rule.roles),
    subjects: sortedSet(rule.subjects),
    scopes: sortedSet(rule.scopes),
    reason: rule.reason ?? null,
    rateLimit: rateLimit ?? null,
    require,
    approval: approval ?? null,
    deny,
    when: when?.canonical ?? null,
    ...(paths ? { paths: sortedSet(paths) } : {}),
    ...(rule.descendingTools ? { descendingTools: sortedSet(rule.descendingTools) } : {}),
    ...(rule.prompts ? { prompts: sortedSet(rule.prompts) } : {}),
    ...(rule.resources ? { resources: sortedSet(rule.resources) } : {}),
  };
  return {
    name,
    deny,
    reason: rule.reason,
    when,
    paths:
      paths &&
      compilePathScope(paths, {
        deny,
        descending: (ref) => descending.some((globs) => matchesGlobs(globs, ref)),
        upstreams: new Map((place.upstreams ?? []).map((u) => [u.name, u])),
      }),
    require,
    approval,
    rateLimit,
    canonical,
    bucket: policyDigest([canonical]),
    names: { prompts: prompts.length > 0, resources: resources.length > 0 },
    matchesTool: (ref) => tools.some((globs) => matchesGlobs(globs, ref)),
    matchesSurface: (ref) =>
      (ref.kind === 'prompt' ? prompts : resources).some(
        (globs) => globs.upstream(ref.upstream) && globs.tool(ref.name),
      ),
    // Every kind of "who" the rule states must hold: any listed role, one of the subjects, all the scopes.
    matchesCaller(caller) {
      if (everyone) return true;
      if (roles && !anyRole && !caller.roles.some((r) => roles.has(r))) return false;
      if (subjects && !subjects.has(caller.subject)) return false;
      if (scopes && !scopes.every((s) => caller.scopes.includes(s))) return false;
      return true;
    },
  };
}
