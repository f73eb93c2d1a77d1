// The two ends of a round's requestState: open it (and keep only answers to keys the previous round asked) before
// the handler runs, and seal the next one when the handler asks for more input.

import { type FlowJournal, isFlowJournal } from '../../flow/internal.js';
import {
  type ClientCapabilities,
  capabilitiesFor,
  clientSupports,
  describeSchemaErrors,
  ErrorCode,
  emptyRecord,
  type InputKind,
  type InputRequest,
  type InputRequests,
  type InputResponse,
  invalidParams,
  invalidRequestState,
  isJsonObject,
  type JsonObject,
  kindOfInputRequest,
  McpError,
  schemaValidator,
} from '../../protocol/index.js';
import { NotJsonError, newFlowId, StateTooLargeError } from '../../state/index.js';
import type { InputRequired } from '../context.js';
import { handlerContractError } from '../errors.js';
import type { RequestStateCodec, StateBinding, StateEnvelope } from '../request-state.js';

export interface RoundInput {
  round: number;
  /** Made on first use (a handler reading ctx.flowId, or sealing): most first rounds never need one early. */
  flowId: string | undefined;
  state: unknown;
  journal: FlowJournal | undefined;
  inputResponses: Record<string, InputResponse>;
  /** When the presented state expires (ms since the epoch); undefined on a first call. */
  expiresAt: number | undefined;
  /** The flow's trace context (a traceparent) the state carried; undefined on a first call or an untraced flow. */
  trace: string | undefined;
}

const RESPONSE_DEFINITION: Record<InputKind, string> = {
  'elicitation.form': 'ElicitResult',
  'elicitation.url': 'ElicitResult',
  sampling: 'CreateMessageResult',
  roots: 'ListRootsResult',
};
const KIND_CODE: Record<InputKind, string> = {
  'elicitation.form': 'f',
  'elicitation.url': 'u',
  sampling: 's',
  roots: 'r',
};
const CODE_KIND: Record<string, InputKind> = {
  f: 'elicitation.form',
  u: 'elicitation.url',
  s: 'sampling',
  r: 'roots',
};

/**
 * Validate the shape of `inputResponses` and open `requestState`. How deep an answer may nest was checked at the
 * front door (input-bounds.ts), before any method read the request. Answers to keys the previous round did not ask
 * are dropped; answers without any state are dropped too, since nothing proves the server asked for them.
 */
export function openRound(
  params: JsonObject,
  codec: RequestStateCodec,
  binding: StateBinding,
  unsealedAnswers: boolean,
): RoundInput {
  const rawResponses = params.inputResponses;
  if (rawResponses !== undefined && !isJsonObject(rawResponses)) {
    throw invalidParams('Invalid params: inputResponses must be an object mapping input keys to responses');
  }
  const token = params.requestState;
  if (token === undefined) {
    const inputResponses = emptyRecord<InputResponse>();
    if (unsealedAnswers && rawResponses) {
      for (const [key, value] of Object.entries(rawResponses)) {
        if (!isJsonObject(value))
          throw invalidParams(`Invalid params: inputResponses["${key}"] must be an object`);
        inputResponses[key] = value as unknown as InputResponse;
      }
    }
    return {
      round: 0,
      flowId: undefined,
      state: undefined,
      journal: undefined,
      inputResponses,
      expiresAt: undefined,
      trace: undefined,
    };
  }
  if (typeof token !== 'string') throw invalidParams('Invalid params: requestState must be a string');

  const opened = codec.open(token, binding);
  if (!opened.ok) throw invalidRequestState(opened.reason);
  const envelope = opened.envelope;
  if (envelope.asked.length !== envelope.kinds.length) throw invalidRequestState('malformed');
  const inputResponses = emptyRecord<InputResponse>();
  if (rawResponses) {
    envelope.asked.forEach((key, i) => {
      if (!Object.hasOwn(rawResponses, key)) return;
      const value = rawResponses[key];
      if (!isJsonObject(value))
        throw invalidParams(`Invalid params: inputResponses["${key}"] must be an object`);
      const kind = CODE_KIND[envelope.kinds[i] ?? ''];
      if (kind) {
        const validate = schemaValidator(RESPONSE_DEFINITION[kind]);
        if (!validate(value)) {
          throw invalidParams(
            `Invalid params: inputResponses["${key}"] is not a valid ${RESPONSE_DEFINITION[kind]}: ${describeSchemaErrors(validate)}`,
          );
        }
      }
      inputResponses[key] = value as unknown as InputResponse;
    });
  }
  return {
    round: opened.round,
    flowId: opened.flowId,
    state: envelope.data,
    journal: isFlowJournal(envelope.journal) ? envelope.journal : undefined,
    inputResponses,
    expiresAt: opened.expiresAt,
    trace: typeof envelope.trace === 'string' ? envelope.trace : undefined,
  };
}

/** Check an input_required outcome against the client's capabilities and the schema, then seal the next state. */
export interface SealContext {
  caps: ClientCapabilities;
  codec: RequestStateCodec;
  binding: StateBinding;
  maxRounds: number;
  unsealedAnswers: boolean;
  /** The flow journal to carry into the next round, if the handler uses `ctx.ask`. */
  journal: FlowJournal | undefined;
  ttlMs: number | undefined;
  /** Check each input request against the official schema (development and tests). */
  validateShape: boolean;
  /** The flow's trace context to carry (a traceparent), when the round is traced. */
  trace?: string | undefined;
}

export function sealRound(
  outcome: InputRequired,
  round: RoundInput,
  { caps, codec, binding, maxRounds, unsealedAnswers, journal, ttlMs, validateShape, trace }: SealContext,
): { inputRequests?: InputRequests; requestState?: string } {
  if (round.round >= maxRounds) {
    throw new McpError(
      ErrorCode.InvalidRequest,
      `Too many rounds: this request already took ${round.round} input_required rounds (limit ${maxRounds})`,
    );
  }
  const asked: string[] = [];
  const kinds: string[] = [];
  if (outcome.inputRequests) {
    const missingKinds: InputKind[] = [];
    for (const [key, request] of Object.entries(outcome.inputRequests)) {
      const kind = kindOf(key, request, validateShape);
      if (!clientSupports(caps, kind)) missingKinds.push(kind);
      asked.push(key);
      kinds.push(KIND_CODE[kind]);
    }
    if (missingKinds.length > 0) {
      const missing = capabilitiesFor(missingKinds);
      // A handler asked for a kind the client never declared: never send it (MRTR server requirement 7).
      throw new McpError(
        ErrorCode.MissingRequiredClientCapability,
        `Missing required client capability: the handler needs ${Object.keys(missing).join(', ')}, which the client did not declare`,
        { requiredCapabilities: missing },
      );
    }
  }
  if (unsealedAnswers && !outcome.hasState && !journal && outcome.inputRequests) {
    // The handler opted out of sealed answers and keeps no state: send the plain spec form, no requestState.
    return { inputRequests: outcome.inputRequests };
  }
  if (!outcome.inputRequests && !outcome.hasState && !journal) {
    throw handlerContractError(
      'handler bug: inputRequired() needs inputRequests or state (MRTR server requirement 6)',
    );
  }
  const envelope: StateEnvelope = { asked, kinds };
  if (outcome.hasState) envelope.data = outcome.state;
  if (journal) envelope.journal = journal;
  if (trace !== undefined) envelope.trace = trace;
  round.flowId ??= newFlowId();
  let requestState: string;
  try {
    requestState = codec.seal(envelope, binding, { flowId: round.flowId, round: round.round + 1, ttlMs });
  } catch (error) {
    // Usually caused by what the client sent — answers that grew the journal, arguments nested too deep to bind —
    // so the client gets -32602 naming it; anything else is a server bug (-32603).
    if (error instanceof StateTooLargeError) {
      throw invalidParams(
        `Invalid params: the flow's state no longer fits in requestState (${error.message})`,
      );
    }
    if (error instanceof NotJsonError) {
      throw invalidParams(
        `Invalid params: the arguments cannot be bound to a requestState (${error.message})`,
      );
    }
    throw error;
  }
  return outcome.inputRequests ? { inputRequests: outcome.inputRequests, requestState } : { requestState };
}

function kindOf(key: string, request: InputRequest, validateShape: boolean): InputKind {
  const kind = isJsonObject(request) ? kindOfInputRequest(request) : undefined;
  // The full schema check is for development and tests (validateResults): it is costly on every round.
  const validate = schemaValidator('InputRequest');
  if (!kind || (validateShape && !validate(request))) {
    throw handlerContractError(
      `handler bug: inputRequests["${key}"] is not an elicitation/create, sampling/createMessage or roots/list request${
        kind ? ` (${describeSchemaErrors(validate)})` : ''
      }`,
    );
  }
  return kind;
}
