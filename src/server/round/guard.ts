// Round guards: checks with seven optional hooks, each run at its place in the round's chain (guard-links.ts). A
// guard sees a round after its requestState opened and before the handler runs (admit), and again once the round's
// answer is ready but not yet sent (commit) — the two moments a replay guard, an approval check or a step-up check need.

import type { StepLedger } from '../../flow/index.js';
import type { InputResponse, Result, ToolDefinition } from '../../protocol/index.js';
import type { Principal, RequestContext } from '../context.js';

/** What a guard knows about the round it judges. Digests, never the token: guards may store what they see. */
export interface GuardedRound {
  readonly requestId: string | number;
  readonly method: 'tools/call' | 'prompts/get' | 'resources/read';
  /** Tool name, prompt name or resource URI. */
  readonly target: string;
  /** The arguments as the target's entry prepared them (a gateway's one spelling of each path): what runs. */
  readonly arguments: unknown;
  /** The tool a tools/call resolved to, found once per request (the catalog's own entry); undefined otherwise. */
  readonly tool?: RoundTool | undefined;
  readonly principal: Principal | undefined;
  /** input_required rounds this flow went through before this request (0 on a first call). */
  readonly round: number;
  /** The flow's id; undefined on a first call until the round needs one. */
  readonly flowId: string | undefined;
  /** SHA-256 (base64url) of the presented requestState; undefined on a first call. */
  readonly stateDigest: string | undefined;
  /** When the presented requestState expires (ms since the epoch); undefined on a first call. */
  readonly stateExpiresAt: number | undefined;
  /** The answers accepted for this round (only keys the previous round asked). */
  readonly inputResponses: Readonly<Record<string, InputResponse>>;
  /** Canonical SHA-256 (base64url) of `inputResponses`: equal answers, equal digest. */
  readonly answersDigest: string;
}

/** A resolved tool as a guard sees it: at least its listed definition (a catalog's guard may know its entry). */
export interface RoundTool {
  readonly definition: ToolDefinition;
}

/** A round before its requestState is opened: who asks for what. */
export interface ScreenedRound {
  readonly requestId: string | number;
  readonly method: 'tools/call' | 'prompts/get' | 'resources/read';
  readonly target: string;
  readonly principal: Principal | undefined;
  /** The scopes the target's handler declared it needs (`requiredScopes`); empty when it declared none. */
  readonly requiredScopes: readonly string[];
}

/** A result a guard answers with in the handler's place; `resultType` may be left out (it is `complete`). */
export type GuardResult = Omit<Result, 'resultType'> & { resultType?: 'complete' };

/**
 * A check with up to seven hooks, each joined to the round's chain at its place (screens before the state opens,
 * admits in order, commits in reverse order, asks in the flow). Kept for one release as an adapter: new code writes
 * a `RoundLink` (`{ name, handle(round, next) }`), which answers, refuses, asks or wraps next() in one function.
 */
export interface RoundGuard {
  /** Shown in logs and refusal records. */
  readonly name: string;
  /**
   * Before the requestState is opened, so that it also sees callers whose state will not open: throw a
   * `RoundRefused` to refuse (e.g. 429 for a principal past its refusal limit).
   */
  screen?(round: ScreenedRound): void | Promise<void>;
  /**
   * Told of every refused round — a state that did not open, a guard's refusal, answers invalid past their limit —
   * after the refusal is decided and before it is sent. Never throws; cannot change the answer.
   */
  refused?(round: ScreenedRound, reason: string): void | Promise<void>;
  /** Where ask.step results of this round's flow are kept outside the journal, if this guard keeps them. */
  stepLedger?(round: GuardedRound): StepLedger | undefined;
  /**
   * Before the handler runs. Throw a `RoundRefused` to refuse the round; return a result to answer it without
   * running the handler (e.g. the recorded answer to an identical retry); return nothing to let it run.
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a guard that lets a round through just returns nothing.
  admit?(round: GuardedRound): void | Result | Promise<void | Result>;
  /**
   * Once every guard admitted the round and its intent is recorded, before the handler runs: ask the caller the
   * guard's own questions with `ctx.ask` — a policy's consent, step-up or approval (`mrtr/controls` take this
   * `ctx`) — without the handler knowing. The questions are sealed into the round's state, journaled ahead of the
   * handler's own, checked by kind and observed like any other round's; the handler runs only once every asking
   * guard has returned. Return a result to answer in the handler's place; throw a `RoundRefused` to refuse, or a
   * `FlowEnded` to end the call (a consent declined). Ask the same questions in the same order on every round of a
   * flow, as a handler does: the journal replays answers by position.
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a guard with nothing to ask just returns nothing.
  ask?(round: GuardedRound, ctx: RequestContext): void | GuardResult | Promise<void | GuardResult>;
  /** The round's answer is ready and not yet sent: record what it consumed. A throw fails the round. */
  commit?(round: GuardedRound, result: Result): void | Promise<void>;
  /** The round failed after `admit` let it through: let go of whatever `admit` reserved. Never throws. */
  release?(round: GuardedRound, error: unknown): void | Promise<void>;
}
