// Round observers: whoever needs to see every MRTR round's outcome (the audit trail, metrics) joins the pipeline by
// composition. An observer that returns a promise holds the round's answer until it settles, so a durable audit
// sink can promise "recorded before answered".
import type { InputRequests, InputResponse } from '../../protocol/index.js';
import type { Principal } from '../context.js';

/**
 * How a round ended. `denied` (a policy said no, naming its rule), `declined` (a person said no) and `cancelled` (the
 * caller cancelled, or ended a task) answer with a tool error too, but name the decision instead.
 */
export type RoundOutcome =
  | 'input_required'
  | 'complete'
  | 'tool_error'
  | 'refused'
  | 'error'
  | 'denied'
  | 'declined'
  | 'cancelled';

/** One MRTR request (tools/call, prompts/get, resources/read), as it ended. Never holds requestState or tokens. */
export interface RoundEvent {
  readonly requestId: string | number;
  readonly method: string;
  /** Tool name, prompt name or resource URI; undefined when the request was refused before naming one. */
  readonly target: string | undefined;
  /** The arguments as the client sent them. */
  readonly arguments: unknown;
  readonly principal: Principal | undefined;
  /** input_required rounds before this one (0 on a first call or when the state never opened). */
  readonly round: number;
  readonly flowId: string | undefined;
  /** Answers that reached the handler (only keys the previous round asked). */
  readonly inputResponses: Readonly<Record<string, InputResponse>> | undefined;
  /** What the round asked, when it answered input_required. */
  readonly inputRequests: InputRequests | undefined;
  readonly outcome: RoundOutcome;
  /** Why it was refused or failed: a guard's or the codec's reason, or the JSON-RPC error code as text. */
  readonly reason: string | undefined;
  /** The guard that refused or answered the round, if one did. */
  readonly decidedBy: string | undefined;
  /** Names of the `ask.step`s whose effect ran in this round (not those answered from the journal). */
  readonly steps: readonly string[];
  /** Facts the handler added with `ctx.audit.note({...})`, merged in order; undefined when it added none. */
  readonly notes: Readonly<Record<string, unknown>> | undefined;
  /** Answer and argument fields the handler marked sensitive (`sensitive` option): an audit trail redacts them. */
  readonly sensitive: readonly string[] | undefined;
  /** ms since the epoch when the round started, and how long it took. */
  readonly startedAt: number;
  readonly durationMs: number;
  /**
   * Set when a 2025 client drove the flow through the legacy bridge: the revision it speaks. Its rounds are the
   * same rounds (same flow id, same round numbers); only the wire they travelled differs.
   */
  readonly bridged?: string;
  /** The intent this round recorded before its handler ran (`RoundObserver.intend`); absent when none was asked. */
  readonly intent?: RoundIntent;
  /** The HTTP status a refusal asked for when not the one its JSON-RPC code implies (429 with Retry-After, 503). */
  readonly httpStatus?: number;
}

/**
 * What a round is about to do, told before its handler runs: who asks, what, with which arguments (as the client
 * sent them) and answers. The state has opened and every guard has let the round through; nothing with an effect
 * has run yet.
 */
export interface RoundIntent {
  readonly requestId: string | number;
  readonly method: string;
  readonly target: string;
  readonly arguments: unknown;
  readonly principal: Principal | undefined;
  readonly round: number;
  /** Undefined on a first call (the flow id is made when the round seals its state). */
  readonly flowId: string | undefined;
  readonly inputResponses: Readonly<Record<string, InputResponse>> | undefined;
  readonly sensitive: readonly string[] | undefined;
  readonly startedAt: number;
  readonly bridged?: string;
}

/**
 * Told of every round: room before it starts (`admit`), its intent as a link of the round's chain (`intend`), and
 * its event once answered (`observe`). Kept for one release as an adapter: a `RoundLink` that wraps next() sees the
 * same moments in one function.
 */
export interface RoundObserver {
  observe(event: RoundEvent): void | Promise<void>;
  /**
   * Asked before a round runs: a promise holds the round — its handler, its effects — until it settles. An audit
   * trail whose queue of events waiting for the disk is full answers one, so a slow disk slows new rounds down
   * instead of letting them act while their records pile up in memory.
   */
  admit?(): void | Promise<void>;
  /**
   * Told a round's intent before its handler runs. A promise holds the handler until it settles; a throw or a
   * rejection means the intent was not recorded, and the handler does not run (the client gets -32603). An audit
   * trail makes the intent durable here, so no effect can happen that its trail does not already hold.
   */
  intend?(intent: RoundIntent): void | Promise<void>;
}
