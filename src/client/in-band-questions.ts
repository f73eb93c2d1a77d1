// The round loop's 2025 path: a 2025 server asks inside one request (server-to-client requests on its stream)
// instead of answering input_required. The loop's resolvers answer them in-band, under the loop's own bounds
// (questions per round, rounds per call: legacy-questions.ts counts them), one at a time; a question nobody here may
// answer is remembered so the call ends with needs_person, as it would under MRTR.

import type { InputKind, JsonRpcRequest, JsonRpcResponse } from '../protocol/index.js';
import { followAbort } from '../protocol/internal.js';
import type { PendingQuestion } from './answer-questions.js';
import type { MrtrEvent } from './driver.js';
import { answerServerRequest } from './legacy.js';
import { type LegacyBounds, LegacyQuestions } from './legacy-questions.js';
import type { InputResolver, ResolveContext } from './resolvers.js';

/** Sends one round with `signal`; `onServerRequest` answers the 2025 server's requests on its stream. */
export type InBandSend = (
  signal: AbortSignal,
  onServerRequest: (request: JsonRpcRequest) => Promise<JsonRpcResponse>,
) => Promise<JsonRpcResponse>;

export interface InBandCall {
  bounds: LegacyBounds;
  resolvers: readonly InputResolver[];
  declared: ReadonlySet<InputKind>;
  about: Omit<ResolveContext, 'round' | 'signal'>;
  emit(event: MrtrEvent): void;
  onDeclined(round: number, key: string, action: 'decline' | 'cancel'): void;
}

export class InBandQuestions {
  /** Questions nobody here could answer, over the whole call. */
  readonly unanswered: PendingQuestion[] = [];

  constructor(private readonly call: InBandCall) {}

  /** Send one round; whatever the server asks meanwhile is answered here, and a broken bound ends the round. */
  async send(signal: AbortSignal, send: InBandSend): Promise<JsonRpcResponse> {
    const { call } = this;
    const questions = new LegacyQuestions(call.bounds, (request, key, round, stop) =>
      answerServerRequest(request, key, {
        resolvers: call.resolvers,
        declared: call.declared,
        ctx: { ...call.about, signal: AbortSignal.any([signal, stop]), round },
        unanswered: this.unanswered,
        onAsked: (q) =>
          call.emit({
            type: 'input_needed',
            round,
            key: q.key,
            kind: q.kind,
            message: q.message,
            why: q.personRequired,
          }),
        onAnswered: (q, by, action) => {
          if (action === 'decline' || action === 'cancel') call.onDeclined(round, q.key, action);
          call.emit({ type: 'answered', round, key: q.key, by, action });
        },
      }),
    );
    // The round's signal ends with the call or with the questions: two listeners, not an AbortSignal.any per round.
    const round = new AbortController();
    const unfollowCall = followAbort(signal, round);
    const unfollowQuestions = followAbort(questions.signal, round);
    try {
      return await send(round.signal, (request) => questions.handle(request));
    } catch (error) {
      // Stopped from the questions' side (a bound broken, the person gone): that is how the call ends.
      throw questions.failure ?? error;
    } finally {
      unfollowCall();
      unfollowQuestions();
      // Nothing is reported while a question is still on screen.
      await questions.close();
    }
  }
}
