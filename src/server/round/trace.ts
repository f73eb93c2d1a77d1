// What the pipeline learns about one MRTR request while it runs, kept for the observers. Made only when a server
// has observers; the dispatcher turns it into a RoundEvent once the answer is known.
import type { InputRequests, JsonObject, JsonRpcResponse } from '../../protocol/index.js';
import { ErrorCode, RoundRefused } from '../../protocol/index.js';
import type { Principal } from '../context.js';
import type { RoundEvent, RoundOutcome } from './observer.js';
import type { RoundInput } from './state.js';

export class RoundTrace {
  readonly startedAt = Date.now();
  private readonly started = performance.now();
  round: RoundInput | undefined;
  decidedBy: string | undefined;
  reason: string | undefined;
  sensitive: readonly string[] | undefined;
  private readonly stepsRun: string[] = [];
  private notes: Record<string, unknown> | undefined;

  constructor(
    private readonly requestId: string | number,
    private readonly method: string,
    private readonly params: JsonObject | undefined,
    private readonly principal: Principal | undefined,
    private readonly bridged?: string,
  ) {}

  /** Remember why the request failed, before the error becomes a JSON-RPC answer. */
  failed(error: unknown): void {
    if (error instanceof RoundRefused) {
      this.reason = error.reason;
      this.decidedBy = error.refusedBy;
    }
  }

  /** A step's effect ran this round (flow's onStep). */
  readonly stepRan = (name: string): void => {
    this.stepsRun.push(name);
  };

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
      } else outcome = result.isError === true ? 'tool_error' : 'complete';
    }
    // No spread: a literal with every member, the optional one set after, keeps one hidden class for every event.
    const event: { -readonly [K in keyof RoundEvent]: RoundEvent[K] } = {
      requestId: this.requestId,
      method: this.method,
      target: typeof rawTarget === 'string' ? rawTarget : undefined,
      arguments: params.arguments,
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
    return event;
  }
}
