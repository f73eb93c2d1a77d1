// What one question is, apart from how it is asked: its kind, the request the client sees, the options a handler
// gives, and how its answer is checked. `ask` builds questions and forward.ts builds a forwarded one; the flow engine
// resolves them.
import type { HumanRequiredReason, InputKind, InputRequest } from '../protocol/index.js';

/** The protocol's input kinds, under the name the flow API has always exported. */
export type FlowInputKind = InputKind;

export interface QuestionOptions {
  /** The inputRequests key to use (default `q<position>`). Must be unique within one round. */
  key?: string;
  /** Mark the question as one only a person may answer (consent, second factor, approval). */
  humanRequired?: HumanRequiredReason;
  /** Invalid answers tolerated before the call ends (default 3). */
  maxInvalidAnswers?: number;
  /**
   * For a question that waits for a person elsewhere: one short line on what it waits for ("waiting for approval,
   * 0 of 1"), which a task shows as its status while it waits (`dev.mrtr/progress`).
   */
  progress?: string;
}

/** How a question is asked and how its answer is checked; built by the Ask methods, resolved by the flow engine. */
export interface Question {
  kind: FlowInputKind;
  request: InputRequest;
  options: QuestionOptions;
  /** Turns a raw, kind-valid response into the value the handler sees; a string means "invalid, re-ask with this". */
  accept(response: unknown): { value: unknown } | { invalid: string };
  /** The part of an accepted response worth journaling: what `accept` reads, nothing a client added. */
  journaled(response: unknown): unknown;
}
