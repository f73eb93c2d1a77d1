// The strict reading of an InputRequiredResult (input kinds and their capabilities live in protocol/input-kinds.ts).
import {
  type HumanRequiredReason,
  type InputKind,
  type InputRequest,
  isJsonObject,
  type JsonObject,
  kindOfInputRequest,
  META_HUMAN_REQUIRED,
  META_RETRY_AFTER_MS,
} from '../protocol/index.js';
import { ProtocolViolation } from './errors.js';

/** Why a question must go to a person: the server's `dev.mrtr/humanRequired` hint, or URL mode. */
export type PersonReason = HumanRequiredReason | 'url' | 'unspecified';

export interface InputQuestion {
  /** The server-assigned key in `inputRequests`. */
  key: string;
  kind: InputKind;
  request: InputRequest;
  /** The request's human-readable message, if it has one. */
  message: string | undefined;
  /** Set when only a person may answer (consent, second factor, approval, or any URL-mode elicitation). */
  personRequired: PersonReason | undefined;
}

const HUMAN_REASONS: ReadonlySet<string> = new Set(['consent', 'second_factor', 'approval']);

function personReason(kind: InputKind, params: JsonObject | undefined): PersonReason | undefined {
  const meta = params?._meta;
  const hint = isJsonObject(meta) ? meta[META_HUMAN_REQUIRED] : undefined;
  // Fail safe: any present, non-false hint counts, even a value this client does not know.
  if (hint !== undefined && hint !== null && hint !== false) {
    return typeof hint === 'string' && HUMAN_REASONS.has(hint)
      ? (hint as HumanRequiredReason)
      : 'unspecified';
  }
  // A URL-mode elicitation asks a person to open a link: an agent accepting it on their behalf loops or worse.
  if (kind === 'elicitation.url') return 'url';
  return undefined;
}

function kindOf(key: string, value: unknown): { kind: InputKind; request: InputRequest } {
  if (!isJsonObject(value) || typeof value.method !== 'string')
    throw new ProtocolViolation(`inputRequests["${key}"] must be an object with a method`);
  const params = value.params;
  if (params !== undefined && !isJsonObject(params))
    throw new ProtocolViolation(`inputRequests["${key}"].params must be an object`);
  const kind = kindOfInputRequest(value);
  const request = value as unknown as InputRequest;
  switch (kind) {
    case 'elicitation.form':
    case 'elicitation.url': {
      if (typeof params?.message !== 'string')
        throw new ProtocolViolation(`inputRequests["${key}"]: elicitation/create needs a string message`);
      if (kind === 'elicitation.url') {
        if (typeof params.url !== 'string' || !URL.canParse(params.url))
          throw new ProtocolViolation(`inputRequests["${key}"]: URL elicitation needs a valid url`);
        return { kind, request };
      }
      const schema = params.requestedSchema;
      if (!isJsonObject(schema) || (schema.properties !== undefined && !isJsonObject(schema.properties)))
        throw new ProtocolViolation(
          `inputRequests["${key}"]: form elicitation needs a requestedSchema object`,
        );
      return { kind, request };
    }
    case 'sampling':
      if (!Array.isArray(params?.messages))
        throw new ProtocolViolation(`inputRequests["${key}"]: sampling/createMessage needs messages`);
      return { kind, request };
    case 'roots':
      return { kind, request };
    case undefined:
      if (value.method === 'elicitation/create')
        throw new ProtocolViolation(
          params === undefined
            ? `inputRequests["${key}"]: elicitation/create needs a string message`
            : `inputRequests["${key}"]: unknown elicitation mode ${JSON.stringify(params.mode)}`,
        );
      throw new ProtocolViolation(
        `inputRequests["${key}"] has method ${JSON.stringify(value.method)}, which is not an input request`,
      );
  }
}

export interface ParsedInputRequired {
  questions: InputQuestion[];
  /** Exactly as received; undefined when the server sent none. */
  requestState: string | undefined;
  /** The server's retry hint in milliseconds, when present and sane. */
  retryAfterMs: number | undefined;
}

/**
 * Read an InputRequiredResult strictly: well-formed input requests of declared kinds only, a string requestState,
 * and at least one of the two (mrtr.mdx "Server Requirements").
 */
export function parseInputRequired(
  result: JsonObject,
  declared: ReadonlySet<InputKind>,
  maxQuestions = Number.POSITIVE_INFINITY,
): ParsedInputRequired {
  const raw = result.inputRequests;
  if (raw !== undefined && !isJsonObject(raw)) throw new ProtocolViolation('inputRequests must be an object');
  // Counted before anything is read: thousands of questions in one round would bury the one that matters.
  let count = 0;
  for (const _ in raw ?? {}) if (++count > maxQuestions) break;
  if (count > maxQuestions)
    throw new ProtocolViolation(`input_required asks more than ${maxQuestions} questions in one round`);
  const state = result.requestState;
  if (state !== undefined && typeof state !== 'string')
    throw new ProtocolViolation(
      `requestState must be a string, got ${state === null ? 'null' : typeof state}`,
    );
  const questions: InputQuestion[] = [];
  for (const [key, value] of Object.entries(raw ?? {})) {
    const { kind, request } = kindOf(key, value);
    if (!declared.has(kind))
      throw new ProtocolViolation(
        `inputRequests["${key}"] asks for ${kind}, which this client did not declare`,
      );
    const params = (value as JsonObject).params as JsonObject | undefined;
    questions.push({
      key,
      kind,
      request,
      message: typeof params?.message === 'string' ? params.message : undefined,
      personRequired: personReason(kind, params),
    });
  }
  if (questions.length === 0 && state === undefined)
    throw new ProtocolViolation('input_required carries neither input requests nor requestState');
  const meta = result._meta;
  const hint = isJsonObject(meta) ? meta[META_RETRY_AFTER_MS] : undefined;
  const retryAfterMs = typeof hint === 'number' && Number.isFinite(hint) && hint >= 0 ? hint : undefined;
  return { questions, requestState: state, retryAfterMs };
}
