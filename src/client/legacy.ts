// The legacy protocol (2025-11-25, 2025-06-18, 2025-03-26): how the client tells a legacy server from a modern one
// (basic/versioning.mdx "Backward Compatibility"), the initialize handshake, and server-to-client requests answered
// through the same resolvers as MRTR's input requests.
import {
  type ClientCapabilities,
  ErrorCode,
  errorResponse,
  type Implementation,
  isJsonObject,
  isLegacyVersion,
  type JsonObject,
  type JsonRpcRequest,
  type JsonRpcResponse,
  knowsElicitationModes,
  LEGACY_PROTOCOL_VERSIONS,
  legacyResponse,
  type ServerCapabilities,
} from '../protocol/index.js';
import type { PendingQuestion } from './driver.js';
import { describeError, ProtocolViolation, RequestAborted } from './errors.js';
import { type InputQuestion, parseInputRequired } from './input.js';
import { type InputResolver, isElicitResult, pickResolver, type ResolveContext } from './resolvers.js';

/** Codes only a 2026-07-28 server sends: a 4xx carrying one of them comes from a modern server. */
const MODERN_ERROR_CODES: ReadonlySet<number> = new Set([
  ErrorCode.HeaderMismatch,
  ErrorCode.MissingRequiredClientCapability,
  ErrorCode.UnsupportedProtocolVersion,
]);

export function isModernError(code: number): boolean {
  return MODERN_ERROR_CODES.has(code);
}

/** HTTP statuses that, without a modern error in the body, mean "not a 2026-07-28 server". */
export const LEGACY_HINT_STATUSES: ReadonlySet<number> = new Set([400, 405, 406, 415, 422]);

export interface LegacyServer {
  protocolVersion: string;
  serverInfo: Implementation | undefined;
  capabilities: ServerCapabilities;
  instructions: string | undefined;
}

/** Capabilities as the legacy revision spells them (form and URL elicitation modes arrived in 2025-11-25). */
export function legacyCapabilities(capabilities: ClientCapabilities, version: string): JsonObject {
  const out: JsonObject = {};
  const c = capabilities as JsonObject;
  if (isJsonObject(c.elicitation)) out.elicitation = knowsElicitationModes(version) ? c.elicitation : {};
  if (isJsonObject(c.sampling)) out.sampling = c.sampling;
  if (isJsonObject(c.roots)) out.roots = c.roots;
  return out;
}

/** Read an initialize result: the version the server chose must be one this client speaks. */
export function readInitializeResult(result: JsonObject): LegacyServer {
  const version = result.protocolVersion;
  if (!isLegacyVersion(version))
    throw new ProtocolViolation(
      `the server chose protocol version ${JSON.stringify(version)}, which this client does not speak (it speaks ${LEGACY_PROTOCOL_VERSIONS.join(', ')} and 2026-07-28)`,
    );
  const info = result.serverInfo;
  return {
    protocolVersion: version,
    serverInfo:
      isJsonObject(info) && typeof info.name === 'string' ? (info as unknown as Implementation) : undefined,
    capabilities: isJsonObject(result.capabilities) ? (result.capabilities as ServerCapabilities) : {},
    instructions: typeof result.instructions === 'string' ? result.instructions : undefined,
  };
}

export interface ServerRequestContext {
  resolvers: readonly InputResolver[];
  declared: ReadonlySet<import('../protocol/index.js').InputKind>;
  ctx: ResolveContext;
  /** Called for each question asked and each answer given (the driver's `input_needed` and `answered` events). */
  onAsked?: (q: InputQuestion) => void;
  onAnswered?: (q: InputQuestion, by: string, action: 'accept' | 'decline' | 'cancel' | undefined) => void;
  /** Questions nobody here may answer: the call then ends with `needs_person`. */
  unanswered: PendingQuestion[];
}

/**
 * Answer one server-to-client request of a legacy session through the resolvers, as MRTR's input requests are: the
 * same kinds, the same person-only rules. Questions are keyed `q1`, `q2`, … in the order the call asks them.
 */
export async function answerServerRequest(
  request: JsonRpcRequest,
  key: string,
  on: ServerRequestContext,
): Promise<JsonRpcResponse> {
  const { id } = request;
  if (request.method === 'ping') return legacyResponse(id, {});
  let q: InputQuestion | undefined;
  try {
    q = parseInputRequired(
      {
        resultType: 'input_required',
        inputRequests: { [key]: { method: request.method, params: request.params ?? {} } },
      },
      on.declared,
    ).questions[0];
  } catch (e) {
    return errorResponse(id, ErrorCode.InvalidParams, describeError(e));
  }
  if (!q)
    return errorResponse(
      id,
      ErrorCode.MethodNotFound,
      `method ${request.method} is not supported by this client`,
    );
  on.onAsked?.(q);
  const resolver = pickResolver(on.resolvers, q, on.ctx);
  if (!resolver) {
    on.unanswered.push({
      key: q.key,
      kind: q.kind,
      message: q.message,
      why: q.personRequired ?? 'no_resolver',
    });
    // The server waits for an answer: a cancel for a question (it can go on), an error for anything else.
    if (q.kind.startsWith('elicitation')) return legacyResponse(id, { action: 'cancel' });
    return errorResponse(id, ErrorCode.InternalError, `nobody here may answer ${request.method}`);
  }
  try {
    const answer = await resolver.resolve(q, on.ctx);
    if (q.kind.startsWith('elicitation') && !isElicitResult(answer))
      return errorResponse(
        id,
        ErrorCode.InternalError,
        `${resolver.name} gave an answer without a valid action`,
      );
    on.onAnswered?.(q, resolver.name, isElicitResult(answer) ? answer.action : undefined);
    return legacyResponse(id, answer as unknown as JsonObject);
  } catch (e) {
    if (e instanceof RequestAborted) throw e;
    return errorResponse(
      id,
      ErrorCode.InternalError,
      `${resolver.name} could not answer: ${describeError(e)}`,
    );
  }
}
