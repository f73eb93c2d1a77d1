// What the pipeline learns about one MRTR request while it runs, kept for the observers. Made only when a server
// has observers; the dispatcher turns it into a RoundEvent once the answer is known.
import type { InputRequests, JsonObject, JsonRpcRequest, JsonRpcResponse } from '../../protocol/index.js';
import { ErrorCode, McpError, RoundRefused } from '../../protocol/index.js';
import { newFlowId } from '../../state/index.js';
import type { Principal } from '../context.js';
import type { RequestEnvironment } from '../environment.js';
import type { MaybePromise } from '../maybe-async.js';
import { Failed } from './failed.js';
import { askObserversForRoom } from './notify.js';
import type { RoundEvent, RoundIntent, RoundObserver, RoundOutcome } from './observer.js';
import type { RoundInput } from './state.js';

export class RoundTrace {
  readonly startedAt = Date.now();
  private readonly started = performance.now();
  private round: RoundInput | undefined;
  private decidedBy: string | undefined;
  private reason: string | undefined;
  private sensitive: readonly string[] | undefined;
  /** What decided a round that answers with a tool error: a guard's deny, a person's decline, a cancel. */
  private decision: { outcome: 'denied' | 'declined' | 'cancelled'; reason: string } | undefined;
  private readonly stepsRun: string[] = [];
  private notes: Record<string, unknown> | undefined;
  private intent: RoundIntent | undefined;
  /** Set when the arguments were refused for nesting too deep: the event then holds a note, not the arguments. */
  private argumentsRefused: string | undefined;
  /** The HTTP status a refusal asked for (429, 503): metrics count rounds slowed down. */
  private httpStatus: number | undefined;

  constructor(
    private readonly requestId: string | number,
    private readonly method: string,
    private readonly params: JsonObject | undefined,
    private readonly principal: Principal | undefined,
    /** Records a round's intent with every observer (dispatch.ts); undefined when it has nothing to wait for. */
    private readonly recordIntent: (intent: RoundIntent) => undefined | Promise<void>,
    private readonly bridged?: string,
  ) {}

  /**
   * The round is about to run its handler: tell the observers what it will do, with the arguments as the client sent
   * them. Undefined when no observer made it wait; throws or rejects when the intent was not recorded.
   */
  intend(target: string): undefined | Promise<void> {
    // The intent and the outcome of a first round carry the flow id the round will seal, so a trail can show a
    // flow from its first intent on; made here only when an observer records intents.
    if (this.round) this.round.flowId ??= newFlowId();
    const intent: { -readonly [K in keyof RoundIntent]: RoundIntent[K] } = {
      requestId: this.requestId,
      method: this.method,
      target,
      arguments: this.params?.arguments,
      principal: this.principal,
      round: this.round?.round ?? 0,
      flowId: this.round?.flowId,
      inputResponses: this.round?.inputResponses,
      sensitive: this.sensitive,
      startedAt: this.startedAt,
    };
    if (this.bridged !== undefined) intent.bridged = this.bridged;
    this.intent = intent;
    return this.recordIntent(intent);
  }

  /** The fields the round's handler marked sensitive: the event names them for the trail to redact. */
  describe(sensitive: readonly string[] | undefined): void {
    this.sensitive = sensitive;
  }

  /** The round's state opened: its round number, flow id and answers. */
  opened(round: RoundInput): void {
    this.round = round;
  }

  /** The flow this round belongs to; undefined before its state opened or on a first call that made none. */
  get flowId(): string | undefined {
    return this.round?.flowId;
  }

  /** A link answered in the handler's place (a guard's recorded answer, a policy's). */
  answeredBy(name: string | undefined): void {
    this.decidedBy = name;
  }

  /** The flow ended the call (a decline, a cancel, answers invalid too often): a person's decision is named. */
  ended(reason: string, message: string): void {
    this.reason = reason;
    if (reason === 'declined' || reason === 'cancelled')
      this.decision ??= { outcome: reason, reason: message };
  }

  /** Remember why the request failed, before the error becomes a JSON-RPC answer. */
  failed(error: unknown): void {
    if (error instanceof RoundRefused) {
      this.reason = error.reason;
      this.decidedBy = error.refusedBy;
      this.httpStatus = error.httpStatus;
    } else if (error instanceof McpError) {
      // A time bound or an intent that was not recorded names its reason for the trail in `data`.
      const data = error.data as { reason?: unknown; limit?: unknown; member?: unknown } | undefined;
      if (typeof data?.reason === 'string') this.reason ??= data.reason;
      // Arguments nested past the front door's limit have no record any trail could hold (canonical JSON stops at
      // 1000 levels): the refusal is recorded with what was wrong with them instead.
      if (data?.limit === 'maxInputDepth' && data.member === 'arguments')
        this.argumentsRefused = error.message;
    }
  }

  /** A step's effect ran this round (flow's onStep). */
  readonly stepRan = (name: string): void => {
    this.stepsRun.push(name);
  };

  /** A guard names its deny (`ctx.audit.decided`): the first one named stands. */
  decided(outcome: 'denied', reason: string): void {
    this.decision ??= { outcome, reason };
  }

  /** The handler's own facts for the round's event (`ctx.audit.note`); later keys win. */
  note(facts: Readonly<Record<string, unknown>>): void {
    this.notes = { ...this.notes, ...facts };
  }

  toEvent(response: JsonRpcResponse): RoundEvent {
    const params = this.params ?? {};
    const rawTarget = this.method === 'resources/read' ? params.uri : params.name;
    let outcome: RoundOutcome;
    let inputRequests: InputRequests | undefined;
    let reason = this.reason;
    if ('error' in response) {
      // Internal errors are the server's; every other error code refuses what the client sent.
      outcome = response.error.code === ErrorCode.InternalError ? 'error' : 'refused';
      reason ??= `code ${response.error.code}`;
    } else {
      const result = response.result;
      if (result.resultType === 'input_required') {
        outcome = 'input_required';
        inputRequests = result.inputRequests as InputRequests | undefined;
      } else if ((result.resultType as string) === 'task') {
        // The call goes on as a task (its notes say which): not complete, its rounds follow under the same flow.
        outcome = 'input_required';
      } else if (result.isError === true && this.decision !== undefined) {
        outcome = this.decision.outcome;
        reason = this.decision.reason;
      } else outcome = result.isError === true ? 'tool_error' : 'complete';
    }
    // No spread: a literal with every member, the optional one set after, keeps one hidden class for every event.
    const event: { -readonly [K in keyof RoundEvent]: RoundEvent[K] } = {
      requestId: this.requestId,
      method: this.method,
      target: typeof rawTarget === 'string' ? rawTarget : undefined,
      arguments: this.argumentsRefused === undefined ? params.arguments : { $refused: this.argumentsRefused },
      principal: this.principal,
      round: this.round?.round ?? 0,
      flowId: this.round?.flowId,
      inputResponses: this.round?.inputResponses,
      inputRequests,
      outcome,
      reason,
      decidedBy: this.decidedBy,
      steps: this.stepsRun,
      notes: this.notes,
      sensitive: this.sensitive,
      startedAt: this.startedAt,
      durationMs: performance.now() - this.started,
    };
    if (this.bridged !== undefined) event.bridged = this.bridged;
    if (this.intent !== undefined) event.intent = this.intent;
    if (this.httpStatus !== undefined) event.httpStatus = this.httpStatus;
    return event;
  }
}

/**
 * Room first (an observer whose sink is full holds the round until it has some), then the round's trace. Never
 * throws: what fails is a Failed the answer reports.
 */
export function traceAfterRoom(
  request: JsonRpcRequest,
  env: RequestEnvironment,
  observers: readonly RoundObserver[],
  hookTimeoutMs: number,
  intend: (intent: RoundIntent) => undefined | Promise<void>,
): MaybePromise<RoundTrace | Failed> {
  let room: Promise<unknown> | undefined;
  try {
    room = askObserversForRoom(observers, hookTimeoutMs);
  } catch (error) {
    return new Failed(error, true);
  }
  if (room === undefined) return newTrace(request, env, intend);
  return room.then(
    () => newTrace(request, env, intend),
    (error: unknown) => new Failed(error, true),
  );
}

function newTrace(
  request: JsonRpcRequest,
  env: RequestEnvironment,
  intend: (intent: RoundIntent) => undefined | Promise<void>,
): RoundTrace | Failed {
  try {
    return new RoundTrace(request.id, request.method, request.params, env.principal, intend, env.bridged);
  } catch (error) {
    return new Failed(error);
  }
}
