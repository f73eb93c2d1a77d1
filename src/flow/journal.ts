// The answer journal a flow carries inside its sealed requestState: what was answered or done at each position.
import { createHash } from 'node:crypto';
import { type InputRequest, isJsonObject } from '../protocol/index.js';
import { canonicalJson } from '../state/index.js';

/** One answered question or one completed step, pinned to a digest of exactly what was asked or run. */
export interface JournalEntry {
  /** Position in the flow: the n-th ask.* call of a run. */
  p: number;
  /** Digest of the question shown (or the step name): an answer only applies to the question it was given for. */
  h: string;
  /** The answer (an InputResponse) or the step's result. */
  a: unknown;
}

/** A question sent in the previous round, waiting for its answer. */
export interface AskedQuestion {
  p: number;
  h: string;
  /** The inputRequests key it was sent under. */
  k: string;
}

export interface FlowJournal {
  e: JournalEntry[];
  q: AskedQuestion[];
  /** Invalid answers so far, by position (bounded re-asks). */
  r?: Record<string, number>;
}

export const emptyJournal = (): FlowJournal => ({ e: [], q: [] });

export function isFlowJournal(value: unknown): value is FlowJournal {
  return isJsonObject(value) && Array.isArray(value.e) && Array.isArray(value.q);
}

/** A short digest of a question: its method and params in canonical JSON. */
export function questionDigest(request: InputRequest | { step: string }): string {
  return createHash('sha256').update(canonicalJson(request)).digest('base64url').slice(0, 16);
}
