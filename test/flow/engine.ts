// Runs single rounds of the flow engine directly (no server, no sealing): fast enough for mutation testing.
import type { Ask, FlowInputKind } from '../../src/flow/index.js';
import { type FlowJournal, type FlowRoundOutcome, runFlowRound } from '../../src/flow/internal.js';
import type { InputResponse } from '../../src/protocol/index.js';

export type Body<R> = (ask: Ask) => Promise<R> | R;

/** One round: the journal the previous round sealed and the answers the client sent to it. */
export async function round<R>(
  body: Body<R>,
  previous?: { journal?: FlowJournal; inputResponses?: Record<string, unknown> },
  options: { maxInvalidAnswers?: number; supports?: (kind: FlowInputKind) => boolean } = {},
): Promise<FlowRoundOutcome<R>> {
  return runFlowRound(
    {
      journal: previous?.journal,
      inputResponses: (previous?.inputResponses ?? {}) as Record<string, InputResponse>,
      capabilities: { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} },
      supports: options.supports ?? (() => true),
      ...(options.maxInvalidAnswers === undefined ? {} : { maxInvalidAnswers: options.maxInvalidAnswers }),
    },
    (getAsk) => body(getAsk()),
  );
}

/** The outcome must ask for more input; returns its questions and journal. */
export function asking<R>(outcome: FlowRoundOutcome<R>) {
  if (outcome.kind !== 'input_required')
    throw new Error(`expected input_required, got ${JSON.stringify(outcome)}`);
  return outcome;
}

/** The message of the question sent under `key`. */
export function messageOf<R>(outcome: FlowRoundOutcome<R>, key: string): string | undefined {
  const request = asking(outcome).inputRequests[key] as { params?: { message?: string } } | undefined;
  return request?.params?.message;
}

export const accept = (content: Record<string, unknown>) => ({ action: 'accept', content });
