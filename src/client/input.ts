// Input kinds, the capabilities that declare them, and the strict reading of an InputRequiredResult.
import {
  type ClientCapabilities,
  type HumanRequiredReason,
  type InputRequest,
  isJsonObject,
  type JsonObject,
  META_HUMAN_REQUIRED,
  META_RETRY_AFTER_MS,
} from '../protocol/index.js';
import { ProtocolViolation } from './errors.js';

/** Kinds of embedded request (MRTR "InputRequests" values) a client can declare and answer. */
export type InputKind = 'elicitation.form' | 'elicitation.url' | 'sampling' | 'roots';
export const INPUT_KINDS: readonly InputKind[] = ['elicitation.form', 'elicitation.url', 'sampling', 'roots'];

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

/** The kinds a capabilities object declares. A bare `elicitation: {}` declares form mode only (elicitation.mdx). */
export function declaredKinds(caps: ClientCapabilities): Set<InputKind> {
  const kinds = new Set<InputKind>();
  const e = caps.elicitation;
  if (isJsonObject(e)) {
    if (e.form !== undefined || e.url === undefined) kinds.add('elicitation.form');
    if (e.url !== undefined) kinds.add('elicitation.url');
  }
  if (isJsonObject(caps.sampling)) kinds.add('sampling');
  if (isJsonObject(caps.roots)) kinds.add('roots');
  return kinds;
}

/** The capabilities that declare exactly these kinds. */
export function capabilitiesFor(kinds: Iterable<InputKind>): ClientCapabilities {
  const set = new Set(kinds);
  const caps: ClientCapabilities = {};
  if (set.has('elicitation.form') || set.has('elicitation.url')) {
    caps.elicitation = {};
    if (set.has('elicitation.form')) caps.elicitation.form = {};
    if (set.has('elicitation.url')) caps.elicitation.url = {};
  }
  if (set.has('sampling')) caps.sampling = {};
  if (set.has('roots')) caps.roots = {};
  return caps;
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
  switch (value.method) {
    case 'elicitation/create': {
      if (!params || typeof params.message !== 'string')
        throw new ProtocolViolation(`inputRequests["${key}"]: elicitation/create needs a string message`);
      const mode = params.mode ?? 'form';
      if (mode === 'form') {
        const schema = params.requestedSchema;
        if (!isJsonObject(schema) || (schema.properties !== undefined && !isJsonObject(schema.properties)))
          throw new ProtocolViolation(
            `inputRequests["${key}"]: form elicitation needs a requestedSchema object`,
          );
        return { kind: 'elicitation.form', request: value as unknown as InputRequest };
      }
      if (mode === 'url') {
        if (typeof params.url !== 'string' || !URL.canParse(params.url))
          throw new ProtocolViolation(`inputRequests["${key}"]: URL elicitation needs a valid url`);
        return { kind: 'elicitation.url', request: value as unknown as InputRequest };
      }
      throw new ProtocolViolation(
        `inputRequests["${key}"]: unknown elicitation mode ${JSON.stringify(mode)}`,
      );
    }
    case 'sampling/createMessage':
      if (!params || !Array.isArray(params.messages))
        throw new ProtocolViolation(`inputRequests["${key}"]: sampling/createMessage needs messages`);
      return { kind: 'sampling', request: value as unknown as InputRequest };
    case 'roots/list':
      return { kind: 'roots', request: value as unknown as InputRequest };
    default:
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
): ParsedInputRequired {
  const raw = result.inputRequests;
  if (raw !== undefined && !isJsonObject(raw)) throw new ProtocolViolation('inputRequests must be an object');
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
