// The `rules:` list of a gateway config, read off the YAML into PolicyRules: every key known, every value of its
// type, durations and control names understood — each mistake at its own line. What the rules mean together (who
// they are for, approval iff required, conditions) is checked by compilePolicy, which is given each rule's lines.
import { type ConfigSite, choose, configError } from '../config-errors.js';
import { DURATION_HINT, parseDuration } from '../durations.js';
import { hasWildcard, splitToolPattern } from './glob.js';
import { CONTROLS, type Control, type PolicyRule } from './types.js';

const RULE_KEYS = [
  'name',
  'tools',
  'prompts',
  'resources',
  'roles',
  'subjects',
  'scopes',
  'reason',
  'rateLimit',
  'require',
  'approval',
  'deny',
  'when',
  'paths',
  'descendingTools',
] as const satisfies readonly (keyof PolicyRule)[];

/** Control names as they may be written; `step-up` reads as step_up. */
const CONTROL_SPELLINGS: Readonly<Record<string, Control>> = {
  consent: 'consent',
  step_up: 'step_up',
  'step-up': 'step_up',
  approval: 'approval',
};

/** Most approvers a rule may ask for, and most requests a rate limit may allow: past these it is a typo. */
const MAX_APPROVALS = 100;
const MAX_REQUESTS = 1_000_000;

export interface ReadRules {
  readonly rules: PolicyRule[];
  /** The line of rule `index`, or of its `key`. */
  readonly lineOf: (index: number, key?: keyof PolicyRule) => number | undefined;
}

export function readRules(site: ConfigSite, upstreams: readonly string[]): ReadRules {
  const lines: Map<string, number>[] = [];
  const rules = site.list().map((item, i) => {
    const fields = item.map(RULE_KEYS);
    lines[i] = new Map([...fields].map(([key, value]) => [key, value.line]));
    lines[i]?.set('', item.line);
    return readRule(item, fields, upstreams);
  });
  return {
    rules,
    lineOf: (index, key) => lines[index]?.get(key ?? '') ?? lines[index]?.get(''),
  };
}

function readRule(
  item: ConfigSite,
  fields: Map<string, ConfigSite>,
  upstreams: readonly string[],
): PolicyRule {
  const get = (key: (typeof RULE_KEYS)[number]) => {
    const value = fields.get(key);
    return value && !value.missing ? value : undefined;
  };
  const tools = get('tools');
  const prompts = get('prompts');
  const resources = get('resources');
  if (!tools && !prompts && !resources)
    return item.fail(
      'missing tools: the <upstream>/<tool glob> patterns this rule is about (or prompts, resources)',
    );
  const approval = get('approval');
  const rateLimit = get('rateLimit');
  return {
    name: get('name')?.text(),
    tools: tools?.list().map((entry) => toolPattern(entry, tools.key, upstreams)),
    prompts: prompts?.list().map((entry) => toolPattern(entry, prompts.key, upstreams, 'prompt')),
    resources: resources?.list().map((entry) => toolPattern(entry, resources.key, upstreams, 'URI')),
    roles: get('roles')?.texts(),
    subjects: get('subjects')?.texts(),
    scopes: get('scopes')?.texts(),
    reason: get('reason')?.text(),
    rateLimit: rateLimit && readRateLimit(rateLimit),
    require: get('require')
      ?.list()
      .map((entry) => control(entry, `${item.key}.require`)),
    approval: approval && readApproval(approval),
    deny: get('deny')?.boolean(),
    when: get('when')?.text(),
    paths: get('paths')?.texts(),
    descendingTools: get('descendingTools')
      ?.list()
      .map((entry) => toolPattern(entry, `${item.key}.descendingTools`, upstreams)),
  };
}

function toolPattern(
  entry: ConfigSite,
  key: string,
  upstreams: readonly string[],
  what: 'tool' | 'prompt' | 'URI' = 'tool',
): string {
  const pattern = entry.text();
  const parts = splitToolPattern(pattern);
  const fail = (problem: string) => {
    throw configError(entry.source.file, entry.line, key, problem);
  };
  const example = {
    tool: 'files/read_* or tickets/*',
    prompt: 'docs/review_*',
    URI: 'docs/file:///handbook/*',
  };
  if (!parts) fail(`"${pattern}" must be <upstream>/<${what} glob>, as ${example[what]}`);
  else if (!hasWildcard(parts.upstream) && !upstreams.includes(parts.upstream))
    fail(`"${pattern}" names no upstream "${parts.upstream}" (${choose(upstreams)})`);
  return pattern;
}

function control(entry: ConfigSite, key: string): Control {
  const name = entry.text();
  const found = CONTROL_SPELLINGS[name];
  if (!found)
    throw configError(entry.source.file, entry.line, key, `unknown control "${name}" (${choose(CONTROLS)})`);
  return found;
}

function duration(site: ConfigSite): number {
  const text = site.text();
  const ms = parseDuration(text);
  if (ms === undefined) site.fail(`"${text}" is not a duration (${DURATION_HINT})`);
  return ms;
}

function readRateLimit(site: ConfigSite): { requests: number; perMs: number } {
  const fields = site.map(['requests', 'per']);
  const requests = fields.get('requests');
  const per = fields.get('per');
  if (!requests || requests.missing)
    site.fail('missing requests: how many calls, as { requests: 10, per: 1m }');
  if (!per || per.missing) site.fail('missing per: in how long, as { requests: 10, per: 1m }');
  return { requests: requests.count(MAX_REQUESTS), perMs: duration(per) };
}

function readApproval(site: ConfigSite): { role: string; approvals?: number; expiresInMs?: number } {
  const fields = site.map(['role', 'approvals', 'expiresIn']);
  const role = fields.get('role');
  if (!role || role.missing) site.fail('missing role: who approves, as { role: approver }');
  const approvals = fields.get('approvals');
  const expiresIn = fields.get('expiresIn');
  return {
    role: role.text(),
    ...(approvals && !approvals.missing ? { approvals: approvals.count(MAX_APPROVALS) } : {}),
    ...(expiresIn && !expiresIn.missing ? { expiresInMs: duration(expiresIn) } : {}),
  };
}
