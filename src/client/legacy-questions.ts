// The server-to-client requests of one legacy (2025) call, held to MRTR's bounds and asked one at a time.
//
// Under MRTR a round's questions arrive together and a call has a round cap; a 2025 server instead sends requests
// whenever it likes, as many as it likes, all at once. Here they are counted as MRTR would count them: a round is
// what the server asks before it gets an answer, and a question that arrives after an answer went out opens the next
// one. A round asking more than `maxQuestionsPerRound`, or a round past `maxRounds`, ends the call: that request and
// every later one get a JSON-RPC error, the call's request is cancelled, and the call ends with the same outcome an
// MRTR call would (protocol_error, round_cap). Questions are asked in turn, in the order they arrived.

import {
  ErrorCode,
  errorResponse,
  type InputKind,
  type JsonRpcRequest,
  type JsonRpcResponse,
  legacyResponse,
} from '../protocol/index.js';
import type { PendingQuestion } from './answer-questions.js';
import { ProtocolViolation, RequestAborted } from './errors.js';
import { parseInputRequired } from './input.js';
import { oneAtATime } from './one-at-a-time.js';

/** A legacy call asked for input past its round cap: the driver ends it as `round_cap` (internal, never thrown at a caller). */
export class LegacyRoundCap extends Error {
  constructor(
    readonly rounds: number,
    readonly pending: PendingQuestion[],
  ) {
    super(`the server still asked for input after ${rounds - 1} rounds of questions`);
  }
}

export interface LegacyBounds {
  maxRounds: number;
  maxQuestionsPerRound: number;
  /** Kinds this call declared, to describe a question refused at the round cap. */
  declared: ReadonlySet<InputKind>;
}

/** Answers one request in its turn; `round` is the round it belongs to, `signal` ends when the call does. */
export type AnswerOne = (
  request: JsonRpcRequest,
  key: string,
  round: number,
  signal: AbortSignal,
) => Promise<JsonRpcResponse>;

const refusal = (id: JsonRpcRequest['id'], message: string): JsonRpcResponse =>
  errorResponse(id, ErrorCode.InternalError, message);

export class LegacyQuestions {
  private readonly stop = new AbortController();
  private readonly turn = oneAtATime();
  private readonly inFlight = new Set<Promise<unknown>>();
  private round = 0;
  private inRound = 0;
  private answeredInRound = false;
  private asked = 0;
  /** Why the call must end, when a bound was broken or the person walked away mid-question. */
  private why: Error | undefined;

  constructor(
    private readonly bounds: LegacyBounds,
    private readonly answerOne: AnswerOne,
  ) {}

  /** Aborted when the call must end (a bound broken, the person gone) or has ended. */
  get signal(): AbortSignal {
    return this.stop.signal;
  }

  /** Why the call was stopped from here, if it was: the error the call ends with. */
  get failure(): Error | undefined {
    return this.why;
  }

  /** One server-to-client request. Never rejects: whatever happens, the server gets an answer. */
  handle(request: JsonRpcRequest): Promise<JsonRpcResponse> {
    // A ping asks nothing of anyone: answered at once, outside the count.
    if (request.method === 'ping') return Promise.resolve(legacyResponse(request.id, {}));
    if (this.stop.signal.aborted)
      return Promise.resolve(refusal(request.id, `the call has ended: ${this.endedBecause()}`));
    if (this.round === 0 || this.answeredInRound) {
      this.round++;
      this.inRound = 0;
      this.answeredInRound = false;
    }
    this.inRound++;
    const key = `q${++this.asked}`;
    if (this.round > this.bounds.maxRounds) {
      const message = `the server still asked for input after ${this.bounds.maxRounds} rounds of questions (the round cap)`;
      this.end(new LegacyRoundCap(this.round, this.pendingOf(request, key)));
      return Promise.resolve(refusal(request.id, message));
    }
    if (this.inRound > this.bounds.maxQuestionsPerRound) {
      const message = `the server asked more than ${this.bounds.maxQuestionsPerRound} questions in one round`;
      this.end(new ProtocolViolation(message));
      return Promise.resolve(refusal(request.id, message));
    }
    const round = this.round;
    const answered = this.turn(this.stop.signal, () => this.answerOne(request, key, round, this.stop.signal))
      .catch((error: unknown) => {
        // The person closed the input or pressed Ctrl-C: the whole call ends, as under MRTR.
        if (error instanceof RequestAborted && !this.stop.signal.aborted) this.end(error);
        return refusal(request.id, `the call has ended: ${this.endedBecause()}`);
      })
      .finally(() => {
        this.answeredInRound = true;
        this.inFlight.delete(answered);
      });
    this.inFlight.add(answered);
    return answered;
  }

  /**
   * The call is over (answered, failed or stopped): questions still waiting are refused, the one being asked is
   * withdrawn, and this resolves once none is left on screen, so nothing is printed over a question.
   */
  async close(): Promise<void> {
    if (!this.stop.signal.aborted)
      this.stop.abort(new RequestAborted(new RequestAborted(undefined, 'the call ended')));
    await Promise.allSettled([...this.inFlight]);
  }

  private end(why: Error): void {
    if (this.stop.signal.aborted) return;
    this.why = why;
    this.stop.abort(why);
  }

  private endedBecause(): string {
    return this.why?.message ?? 'it was answered';
  }

  private pendingOf(request: JsonRpcRequest, key: string): PendingQuestion[] {
    try {
      const q = parseInputRequired(
        {
          resultType: 'input_required',
          inputRequests: { [key]: { method: request.method, params: request.params ?? {} } },
        },
        this.bounds.declared,
      ).questions[0];
      return q ? [{ key, kind: q.kind, message: q.message, why: q.personRequired ?? 'no_resolver' }] : [];
    } catch {
      return [];
    }
  }
}
