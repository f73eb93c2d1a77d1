// What the round loop (round-loop.ts) and its sources (mrtr-rounds.ts, task-follow.ts) say to each other: a source
// gives steps, the loop acts on them and lends the source its signal, its events and its round count.
import type { DetailedTask, InputResponses, JsonRpcError, Result } from '../protocol/index.js';
import type { MrtrEvent } from './driver.js';
import type { InputQuestion } from './input.js';

/** How a call ended by the server's word: its result, its error, or its task cancelled. */
export type StepEnd<R extends Result> =
  | { status: 'complete'; result: R }
  | { status: 'server_error'; error: JsonRpcError }
  | { status: 'cancelled'; taskId: string; message: string };

/** One step of a call, as a source gives it: an end, questions (answered, then `reply`), a wait (then `next`), or a task. */
export type Step<R extends Result> =
  | { kind: 'end'; end: StepEnd<R> }
  /** `questions` empty: a state-only round, sent again with no answers after a pause (`retryAfterMs`, or backoff). */
  | {
      kind: 'ask';
      questions: readonly InputQuestion[];
      retryAfterMs?: number | undefined;
      reply(answers: InputResponses | undefined): Promise<Step<R>>;
    }
  | { kind: 'wait'; delayMs: number; next(): Promise<Step<R>> }
  /** The call became a task (or is one: followTask): followed from `seed`, if known. */
  | { kind: 'task'; taskId: string; seed: DetailedTask | undefined };

/** What a source may use of the loop: the call's signal, its events, and a new round counted and announced. */
export interface LoopContext {
  readonly signal: AbortSignal;
  emit(event: MrtrEvent): void;
  /** Counts one more request as a round (a tasks/get is not one), emits `round`, and returns its number. */
  startRound(method: string): number;
}
