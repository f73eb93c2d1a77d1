// The one record a replay guard keeps per flow, in the shared store: which round the flow is at, which state and
// answers claimed it, and — once the round is answered — that answer, for an identical retry. One record per flow
// (not per state) makes "an older round is stale" a single read, and every change a single compare-and-set.
import { CorruptDataError } from '../protocol/index.js';

export type RoundStatus =
  /** A presentation is running the handler; `leaseUntil` says how long the claim holds if its process dies. */
  | 'running'
  /** The round was answered; `answer` holds it for retries (or `answerBytes` when it was too large to keep). */
  | 'answered'
  /** The round failed after it was claimed: nothing was consumed, the same state may be presented again. */
  | 'open';

export interface FlowRecord {
  /** The round of the state that claimed the flow last (1 for the state a first call sealed). */
  round: number;
  state: string;
  answers: string;
  status: RoundStatus;
  leaseUntil: number;
  /** The answer as sent, JSON, when it fit under the cap. */
  answer?: string;
  /** Size of an answer too large to keep. */
  answerBytes?: number;
  /** The flow ended with this round's answer (anything but input_required). */
  completed?: boolean;
  /** When the presented state expires: the record must outlive it, never the other way round. */
  stateExpiresAt: number;
}

export const flowKey = (flowId: string): string => `mrtr:flow:${flowId}`;

export function encodeFlowRecord(record: FlowRecord): string {
  return JSON.stringify(record);
}

/** A record that does not parse is treated as a store fault (fail closed), never as "no record". */
export function decodeFlowRecord(text: string): FlowRecord {
  const value = JSON.parse(text) as FlowRecord;
  if (
    typeof value !== 'object' ||
    value === null ||
    typeof value.round !== 'number' ||
    typeof value.state !== 'string' ||
    typeof value.answers !== 'string' ||
    typeof value.status !== 'string'
  )
    throw new CorruptDataError('malformed flow record');
  return value;
}
