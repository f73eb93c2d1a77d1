// Round guards: checks that join the round pipeline by composition instead of edits to it. A guard sees a round
// after its requestState opened and before the handler runs (admit), and again once the round's answer is ready but
// not yet sent (commit) — the two moments a replay guard, an approval check or a step-up check need.

import type { StepLedger } from '../../flow/index.js';
import { type InputResponse, type Result, RoundRefused, type ToolDefinition } from '../../protocol/index.js';
import type { Principal, RequestContext } from '../context.js';
import { isThenable } from '../maybe-async.js';
import { atMost, HookTimeoutError, withinTime } from '../time-bound.js';

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

/** A guard's pending answer, given up on past `limitMs` (its store hangs): the round then fails closed. */
function bounded<T>(work: PromiseLike<T>, guard: RoundGuard, limitMs: number): Promise<T> {
  return withinTime(
    work,
    limitMs,
    () => new HookTimeoutError('guard_timeout', `round guard "${guard.name}"`, limitMs),
  );
}

/** The guards that let a round through, and the answer one of them gave instead of the handler, if any. */
export interface Admission {
  admitted: RoundGuard[];
  answer: Result | undefined;
}

/**
 * Run each guard's `admit` in order, stopping at the first that answers or refuses. Synchronous while the guards
 * are. On a refusal the guards that had admitted the round are released before the refusal is passed on.
 */
export function admitThroughGuards(
  guards: readonly RoundGuard[],
  round: GuardedRound,
  limitMs: number,
): Admission | Promise<Admission> {
  const admitted: RoundGuard[] = [];
  try {
    for (let i = 0; i < guards.length; i++) {
      const verdict = guards[i]!.admit?.(round);
      if (isThenable(verdict))
        return admitFrom(guards, i, bounded(verdict, guards[i]!, limitMs), admitted, round, limitMs);
      if (verdict) return { admitted, answer: verdict };
      admitted.push(guards[i]!);
    }
    return { admitted, answer: undefined };
  } catch (error) {
    blame(error, guards[admitted.length]);
    return releaseThenThrow(admitted, round, error, limitMs);
  }
}

/** Name the guard on its refusal, for the observers (the client never sees it). */
function blame(error: unknown, guard: RoundGuard | undefined): void {
  if (error instanceof RoundRefused && guard) error.refusedBy ??= guard.name;
}

async function admitFrom(
  guards: readonly RoundGuard[],
  index: number,
  // biome-ignore lint/suspicious/noConfusingVoidType: what admit returns, as declared above.
  pending: Promise<void | Result>,
  admitted: RoundGuard[],
  round: GuardedRound,
  limitMs: number,
): Promise<Admission> {
  try {
    let verdict = await pending;
    for (let i = index; ; ) {
      if (verdict) return { admitted, answer: verdict };
      admitted.push(guards[i]!);
      if (++i >= guards.length) return { admitted, answer: undefined };
      const next = guards[i]!.admit?.(round);
      verdict = isThenable(next) ? await bounded(next, guards[i]!, limitMs) : next;
    }
  } catch (error) {
    blame(error, guards[admitted.length]);
    await releaseRound(admitted, round, error, limitMs);
    throw error;
  }
}

/**
 * Commit in reverse order of admission (the outermost guard records last, as in an onion of middleware). A commit
 * that throws fails the round: the guards that have not committed yet are released.
 */
export function commitRound(
  admitted: readonly RoundGuard[],
  round: GuardedRound,
  result: Result,
  limitMs: number,
): void | Promise<void> {
  for (let i = admitted.length - 1; i >= 0; i--) {
    let done: void | Promise<void>;
    try {
      done = admitted[i]!.commit?.(round, result);
    } catch (error) {
      return releaseThenThrow(admitted.slice(0, i + 1), round, error, limitMs);
    }
    if (isThenable(done)) {
      const rest = admitted.slice(0, i);
      return bounded(done, admitted[i]!, limitMs).then(
        () => commitRound(rest, round, result, limitMs),
        (error: unknown) => releaseThenThrow(admitted.slice(0, i + 1), round, error, limitMs),
      );
    }
  }
}

/**
 * Release every given guard in reverse order; a guard failing to let go is not the round's error, and one that hangs
 * is waited for no longer than `limitMs` (what it reserved expires with its lease).
 */
export function releaseRound(
  admitted: readonly RoundGuard[],
  round: GuardedRound,
  error: unknown,
  limitMs: number,
): void | Promise<void> {
  const pending: Promise<unknown>[] = [];
  for (let i = admitted.length - 1; i >= 0; i--) {
    try {
      const done = admitted[i]!.release?.(round, error);
      if (isThenable(done)) pending.push(atMost(done, limitMs));
    } catch {
      // release must not throw; if one does anyway, the other guards still get to let go.
    }
  }
  if (pending.length > 0) return Promise.all(pending).then(() => undefined);
}

function releaseThenThrow(
  admitted: readonly RoundGuard[],
  round: GuardedRound,
  error: unknown,
  limitMs: number,
): never | Promise<never> {
  const released = releaseRound(admitted, round, error, limitMs);
  if (released instanceof Promise)
    return released.then(() => {
      throw error;
    });
  throw error;
}

/** Run each guard's `screen` in order, before the state opens. Synchronous while the guards are. */
export function screenRound(
  guards: readonly RoundGuard[],
  round: ScreenedRound,
  limitMs: number,
  from = 0,
): void | Promise<void> {
  for (let i = from; i < guards.length; i++) {
    const guard = guards[i]!;
    if (!guard.screen) continue;
    let done: void | Promise<void>;
    try {
      done = guard.screen(round);
    } catch (error) {
      blame(error, guard);
      throw error;
    }
    if (isThenable(done))
      return bounded(done, guard, limitMs).then(
        () => screenRound(guards, round, limitMs, i + 1),
        (error: unknown) => {
          blame(error, guard);
          throw error;
        },
      );
  }
}

/** Tell every guard that the round was refused and why. A guard failing to listen is not the round's error. */
export function reportRefusal(
  guards: readonly RoundGuard[],
  round: ScreenedRound,
  reason: string,
  limitMs: number,
): void | Promise<void> {
  const pending: Promise<unknown>[] = [];
  for (const guard of guards) {
    try {
      const done = guard.refused?.(round, reason);
      if (isThenable(done)) pending.push(atMost(done, limitMs));
    } catch {
      // refused must not throw; the other guards are still told.
    }
  }
  if (pending.length > 0) return Promise.all(pending).then(() => undefined);
}

/**
 * Run each admitted guard's `ask` in order, inside the round's flow (so their questions are journaled and sealed);
 * undefined once all have returned nothing, else the first result a guard answered with, and that guard. A refusal
 * names its guard.
 */
export async function askThroughGuards(
  asking: readonly RoundGuard[],
  round: GuardedRound,
  ctx: RequestContext,
): Promise<{ result: GuardResult; guard: RoundGuard } | undefined> {
  for (const guard of asking) {
    try {
      const result = await guard.ask?.(round, ctx);
      if (result) return { result, guard };
    } catch (error) {
      blame(error, guard);
      throw error;
    }
  }
  return undefined;
}
