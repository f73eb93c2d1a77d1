// The policy on every round of a gateway call, before the upstream hears of it: who may call this tool with these
// arguments, within which rate, and which controls must pass first — consent to the exact effect, a second factor on
// the gateway's own page, a second person's approval. The controls are asked as the guard's own questions (sealed,
// journaled, observed); the forwarding handler runs only once every one of them has passed. Each control is bound to
// the effect: the upstream, the tool, the digest of its pinned definition, the digest of the arguments, and the
// policy's version — so a change to any of them between rounds re-asks or refuses, never carries an old yes.
import type { HumanControls } from '../controls/index.js';
import type { JsonObject, Result } from '../protocol/index.js';
import type {
  CatalogCaller,
  GuardedRound,
  GuardResult,
  RequestContext,
  Round,
  RoundLink,
} from '../server/index.js';
import { argumentsDigest } from '../state/index.js';
import { callerOf } from './caller.js';
import type { GatewayCatalog, GatewayTool } from './catalog.js';
import type { Decision, Policy } from './policy/index.js';
import { deniedBy } from './policy-outcome.js';
import { type RateLimiter, rateKey, rateLimited } from './rate-limit.js';

export interface PolicyLinkOptions {
  /** Names the gateway tool behind the round's resolved entry. */
  readonly catalog: GatewayCatalog;
  readonly policy: () => Policy;
  /** The controls (they attach to the server this guard guards, so they are made after it). */
  readonly controls: () => HumanControls;
  readonly rates: RateLimiter;
}

const refusal = (message: string): GuardResult => ({
  content: [{ type: 'text', text: message }],
  isError: true,
});

/**
 * `args` with the tool's declared arguments first, in its schema's order: a surface with room for 30 rows then shows
 * `source` and `destination`, whatever padding a caller put before them in arguments the schema lets through.
 */
function declaredFirst(args: JsonObject, definition: GatewayTool['definition']): JsonObject {
  const properties = (definition.inputSchema as { properties?: unknown } | undefined)?.properties;
  if (typeof properties !== 'object' || properties === null) return args;
  const declared = Object.keys(properties).filter((name) => Object.hasOwn(args, name));
  const rest = Object.keys(args).filter((name) => !Object.hasOwn(properties, name));
  // fromEntries defines own properties: an argument named "__proto__" stays an argument.
  return Object.fromEntries([...declared, ...rest].map((name) => [name, args[name]]));
}

/** What a consent or an approval is for: everything that decides what the upstream will do. */
export function effectOf(tool: Omit<GatewayTool, 'entry'>, args: JsonObject, policy: Policy) {
  return {
    upstream: tool.upstream.name,
    tool: tool.tool,
    // Whole: every surface shows it through the controls' preview rule (each argument by name, each value bounded).
    arguments: JSON.stringify(declaredFirst(args, tool.definition)),
    argumentsDigest: argumentsDigest(args),
    definition: tool.digest,
    policy: policy.digest,
  };
}

/**
 * The gateway's link in every round's chain, in the flow before the forwarding handler: it answers in the handler's
 * place (a deny, an unknown tool), asks the policy's controls with the round's ctx, or passes the round on.
 */
export class PolicyLink implements RoundLink {
  readonly name = 'gateway_policy';

  constructor(private readonly options: PolicyLinkOptions) {}

  async handle(round: Round, next: () => Result | Promise<Result>): Promise<Result> {
    if (round.method !== 'tools/call') return next();
    // biome-ignore lint/style/noNonNullAssertion: a link in the flow always has the flow's ctx.
    const answer = await this.#judge(round.guarded, round.env, round.ctx!);
    return answer ? { ...answer, resultType: 'complete' } : next();
  }

  async #judge(
    round: GuardedRound,
    env: CatalogCaller,
    ctx: RequestContext,
  ): Promise<GuardResult | undefined> {
    // The entry the request resolved, once: this catalog's, or no gateway tool at all (refused, failing closed).
    const tool = this.options.catalog.toolOf(round.tool);
    // Each decision on the round's span when it is traced (rule names and codes, never an argument).
    const decide = (control: string) => ctx.audit.judging?.(control);
    if (!tool) {
      decide('pin')?.('refused', 'not_served');
      return refusal(`Unknown tool: ${round.target}`);
    }
    // Served only as pinned: the definition the call is judged against.
    decide('pin')?.('allowed', `definition ${tool.digest.slice(0, 12)}`);
    const policy = this.options.policy();
    const who = callerOf(round.principal);
    // Prepared once by the entry before the round (paths.ts): exactly what the upstream will be sent.
    const args = (round.arguments ?? {}) as JsonObject;
    // The rules were matched once, as the request found its tool: decided on that pass, not a second one.
    const decision: Decision = who
      ? policy.decide(
          who,
          { upstream: tool.upstream.name, tool: tool.tool },
          args,
          this.options.catalog.screeningOf(env, tool, policy),
        )
      : { allow: false, reason: 'no_rule', message: 'the gateway refuses anonymous calls' };
    ctx.audit.note({
      gateway: {
        upstream: tool.upstream.name,
        tool: tool.tool,
        definition: tool.digest,
        policy: policy.digest,
        decision: decision.allow
          ? { allow: true, rules: decision.rules, require: decision.require }
          : {
              allow: false,
              rule: decision.rule ?? null,
              reason: decision.reason,
              detail: decision.detail ?? null,
            },
      },
    });
    const policyDecided = decide('policy');
    if (!decision.allow) {
      policyDecided?.('refused', decision.rule === undefined ? decision.reason : `rule ${decision.rule}`);
      ctx.audit.decided('denied', deniedBy(decision));
      return refusal(decision.message);
    }
    policyDecided?.('allowed', `rules ${decision.rules.join(', ')}`);
    if (round.round === 0) await this.#takeRates(decision, round, tool, decide);
    // A pass-through call asks nothing: its arguments are not serialised and hashed for a control that never asks.
    if (decision.require.length === 0) return undefined;
    const effect = effectOf(tool, args, policy);
    const controls = this.options.controls();
    const what = `${tool.upstream.name} ${tool.tool}`;
    for (const control of decision.require) {
      if (control === 'consent')
        await controls.consent(ctx, {
          effect,
          message: `Allow ${tool.tool} on ${tool.upstream.name}, exactly as below?`,
        });
      else if (control === 'step_up')
        await controls.stepUp(ctx, {
          reason: `The gateway's policy asks for a second factor before ${what}`,
        });
      else if (control === 'approval' && decision.approval)
        await controls.approval(ctx, {
          role: decision.approval.role,
          reason: `${ctx.principal?.subject ?? 'someone'} asks to call ${what} through the gateway`,
          effect,
          approve: decision.approval.approvals,
          expiresInMs: decision.approval.expiresInMs,
        });
    }
    return undefined;
  }

  /** Each rate limit of the deciding rules takes one token per call (its first round), per caller and tool. */
  async #takeRates(
    decision: Extract<Decision, { allow: true }>,
    round: GuardedRound,
    tool: GatewayTool,
    decide: (control: string) => ((decision: 'allowed' | 'refused', reason?: string) => void) | undefined,
  ) {
    for (const limit of decision.rateLimits) {
      const decided = decide('rate_limit');
      const key = rateKey(
        limit.rule,
        round.principal?.issuer ?? '',
        round.principal?.subject ?? '',
        tool.name,
      );
      const taken = await this.options.rates.take(key, limit);
      decided?.(taken.ok ? 'allowed' : 'refused', `rule ${limit.rule}`);
      if (!taken.ok)
        throw rateLimited(
          taken.retryAfterMs,
          `Rate limit: ${limit.requests} calls of ${tool.name} per ${Math.round(limit.perMs / 1000)} s`,
        );
    }
  }
}
