// The audit event: what one round (or one refusal) is recorded as. A plain JSON object, so that every sink stores
// the same text and a verifier in any language can recompute its hash from those bytes.
import { kindOfInputRequest } from '../protocol/index.js';
import { type Redactor, redactFields } from './redact.js';

/** The round as an observer sees it: structurally the server's RoundEvent, so this room needs no server import. */
export interface ObservedRound {
  readonly requestId: string | number;
  readonly method: string;
  readonly target: string | undefined;
  readonly arguments: unknown;
  readonly principal: { subject: string; issuer?: string; clientId?: string } | undefined;
  readonly round: number;
  readonly flowId: string | undefined;
  readonly inputResponses: Readonly<Record<string, unknown>> | undefined;
  readonly inputRequests: Readonly<Record<string, unknown>> | undefined;
  readonly outcome:
    | 'input_required'
    | 'complete'
    | 'tool_error'
    | 'refused'
    | 'error'
    | 'denied'
    | 'declined'
    | 'cancelled';
  readonly reason: string | undefined;
  readonly decidedBy: string | undefined;
  readonly steps?: readonly string[];
  readonly notes?: Readonly<Record<string, unknown>> | undefined;
  readonly sensitive?: readonly string[] | undefined;
  readonly startedAt: number;
  readonly durationMs: number;
  /** The 2025 revision a bridged client speaks (its flow ran through the legacy bridge). */
  readonly bridged?: string;
  /** The intent the round recorded before its handler ran (`AuditTrail.intend`), if it did. */
  readonly intent?: object;
}

/**
 * A round's intent, told before its handler runs: structurally the server's RoundIntent. Recorded as an event whose
 * outcome is `proposed`, durable before anything with an effect happens.
 */
export interface ObservedIntent {
  readonly requestId: string | number;
  readonly method: string;
  readonly target: string;
  readonly arguments: unknown;
  readonly principal: ObservedRound['principal'];
  readonly round: number;
  readonly flowId: string | undefined;
  readonly inputResponses: Readonly<Record<string, unknown>> | undefined;
  readonly sensitive: readonly string[] | undefined;
  readonly startedAt: number;
  readonly bridged?: string;
}

/**
 * What an event says happened: `proposed` is a round's intent, written before its handler ran; `withheld` is a tool
 * definition change (a gateway withholds the tool); the others are a round's outcome (docs/audit.md).
 */
export type AuditOutcome = ObservedRound['outcome'] | 'proposed' | 'withheld';

/** A pinned tool an upstream now lists with another definition (the gateway's DefinitionChange, structurally). */
export interface ObservedDefinitionChange {
  readonly upstream: string;
  readonly tool: string;
  readonly name: string;
  readonly pinned: string;
  readonly seen: string;
  readonly changes: readonly string[];
  readonly at: number;
}

/** The `event` of a record that is no round: a tool definition that changed since it was pinned. */
export const TOOL_DEFINITION_CHANGED = 'tool_definition_changed';

/**
 * A person's connected account was made, used, refreshed, revoked or disconnected (the connections room's
 * ConnectionEvent, structurally): who, which connection, what happened. It never holds a token, a code or a state.
 */
export interface ObservedConnectionEvent {
  readonly connection: string;
  readonly action: string;
  /** The connect record's id, when a question or a page is concerned. */
  readonly id?: string;
  /** The subject of the person concerned. */
  readonly by?: string;
  /** The issuer that vouches for `by`: recorded as the principal's `iss`. */
  readonly byIssuer?: string;
  /** ISO 8601. */
  readonly at: string;
  readonly detail?: Readonly<Record<string, unknown>>;
}

/** The `event` of a record that is no round: a person's connection (its `method` is `connection/<action>`). */
export const CONNECTION_EVENT = 'connection';

/** Version 1 of the event schema (docs/audit.md). Never holds requestState, a token or a sensitive value. */
export interface AuditRecord {
  v: 1;
  /** The writer (server instance) whose chain holds the event, and its place in that chain (1, 2, …). */
  instance: string;
  seq: number;
  /** Hash of the writer's previous event (hex SHA-256), or 64 zeros for its first. */
  prev: string;
  /** When the round started (ISO 8601, UTC). */
  time: string;
  /** The JSON-RPC id; null on an event no request made (a tool definition change). */
  requestId: string | number | null;
  flowId: string | null;
  round: number;
  principal: { sub: string; iss?: string; clientId?: string } | null;
  method: string;
  target: string | null;
  /** The arguments as the client gave them: in every round of a flow the same as in round 1 (the state binds them). */
  arguments: unknown;
  /** `sha256:` of their canonical JSON, or `hmac-sha256:` (keyed) when a sensitive field was redacted from them. */
  argumentsDigest: string;
  /** What the round asked: each key and its kind (`elicitation.form`, `sampling`, …). */
  asked: Array<{ key: string; kind: string }> | null;
  /** The answers that reached the handler, sensitive fields redacted. */
  answers: Record<string, unknown> | null;
  /** Steps whose effect ran in this round. */
  steps: string[];
  outcome: AuditOutcome;
  /** The codec's, a guard's or the transport's precise reason for a refusal or failure. */
  reason: string | null;
  decidedBy: string | null;
  durationMs: number;
  /** The handler's own facts (`ctx.audit.note`). */
  notes: Record<string, unknown> | null;
  /** Present only for a 2025 client's rounds through the legacy bridge: the revision that client speaks. */
  bridged?: string;
  /**
   * On a round's outcome: the seq of its `proposed` event in the same writer's chain (the intent recorded before the
   * handler ran). Absent on rounds that ran no handler (refused, or answered by a guard) and on `proposed` events.
   */
  intentSeq?: number;
  /** Present only on events that are not rounds: `tool_definition_changed`, `connection`. */
  event?: typeof TOOL_DEFINITION_CHANGED | typeof CONNECTION_EVENT;
}

/** An event before the writer gives it its place in the chain. */
export type UnchainedRecord = Omit<AuditRecord, 'seq' | 'prev'>;

/** The `proposed` event of a round about to run: its intent, with the same redaction as its outcome will have. */
export function toIntentRecord(
  intent: ObservedIntent,
  instance: string,
  redactor: Redactor,
): UnchainedRecord {
  const record = toAuditRecord(
    {
      requestId: intent.requestId,
      method: intent.method,
      target: intent.target,
      arguments: intent.arguments,
      principal: intent.principal,
      round: intent.round,
      flowId: intent.flowId,
      inputResponses: intent.inputResponses,
      inputRequests: undefined,
      outcome: 'complete',
      reason: undefined,
      decidedBy: undefined,
      sensitive: intent.sensitive,
      startedAt: intent.startedAt,
      durationMs: 0,
      ...(intent.bridged === undefined ? {} : { bridged: intent.bridged }),
    },
    instance,
    redactor,
  );
  record.outcome = 'proposed';
  return record;
}

/**
 * A tool definition change as an event: `tools/list` (the listing that saw it) of the tool callers see, outcome
 * `withheld`, reason `definition_changed`, the digests and the changed lines in `notes.definition`.
 */
export function toDefinitionChangeRecord(
  change: ObservedDefinitionChange,
  instance: string,
  redactor: Redactor,
): UnchainedRecord {
  const record = toAuditRecord(
    {
      requestId: 0,
      method: 'tools/list',
      target: change.name,
      arguments: undefined,
      principal: undefined,
      round: 0,
      flowId: undefined,
      inputResponses: undefined,
      inputRequests: undefined,
      outcome: 'complete',
      reason: 'definition_changed',
      decidedBy: 'pin',
      notes: {
        definition: {
          upstream: change.upstream,
          tool: change.tool,
          pinned: change.pinned,
          seen: change.seen,
          changes: [...change.changes],
        },
      },
      startedAt: change.at,
      durationMs: 0,
    },
    instance,
    redactor,
  );
  record.requestId = null;
  record.outcome = 'withheld';
  record.event = TOOL_DEFINITION_CHANGED;
  return record;
}

/**
 * A connection event: method `connection/<action>` (connected, used, refreshed, revoked, disconnected…), the
 * connection as its target, the person as principal, what the connections said in `notes.connection`.
 */
export function toConnectionRecord(
  e: ObservedConnectionEvent,
  instance: string,
  redactor: Redactor,
): UnchainedRecord {
  const at = Date.parse(e.at);
  const record = toAuditRecord(
    {
      requestId: 0,
      method: `connection/${e.action}`,
      target: e.connection,
      arguments: undefined,
      principal:
        e.by === undefined
          ? undefined
          : { subject: e.by, ...(e.byIssuer === undefined ? {} : { issuer: e.byIssuer }) },
      round: 0,
      flowId: undefined,
      inputResponses: undefined,
      inputRequests: undefined,
      outcome: 'complete',
      reason: undefined,
      decidedBy: undefined,
      notes: {
        connection: {
          ...e.detail,
          name: e.connection,
          action: e.action,
          ...(e.id === undefined ? {} : { id: e.id }),
        },
      },
      startedAt: Number.isNaN(at) ? Date.now() : at,
      durationMs: 0,
    },
    instance,
    redactor,
  );
  record.requestId = null;
  record.event = CONNECTION_EVENT;
  return record;
}

export function toAuditRecord(
  event: ObservedRound,
  instance: string,
  redactor: Redactor,
  intentSeq?: number,
): UnchainedRecord {
  const sensitive = event.sensitive;
  const redacting = sensitive !== undefined && sensitive.length > 0;
  const args = redacting ? redactFields(event.arguments, sensitive, redactor) : undefined;
  const given = event.inputResponses;
  let answers: unknown = null;
  if (given && Object.keys(given).length > 0)
    answers = redacting ? redactFields(given, sensitive, redactor).value : given;
  let notes: unknown = null;
  if (event.notes) notes = redacting ? redactFields(event.notes, sensitive, redactor).value : event.notes;
  const argumentsValue = args ? args.value : event.arguments;
  // One object literal, every member always present and in one order, the optional ones added after: V8 keeps such
  // records in one hidden class, and JSON.stringify takes its fast path over them (spreads here cost more than the
  // rest of the record put together).
  const record: UnchainedRecord = {
    v: 1,
    instance,
    time: new Date(event.startedAt).toISOString(),
    requestId: event.requestId,
    flowId: event.flowId ?? null,
    round: event.round,
    principal: event.principal ? principalOf(event.principal) : null,
    method: event.method,
    target: event.target ?? null,
    arguments: argumentsValue === undefined ? null : argumentsValue,
    argumentsDigest: args?.redacted ? redactor.keyed(event.arguments) : redactor.plain(event.arguments),
    asked: event.inputRequests ? askedOf(event.inputRequests) : null,
    answers: answers as Record<string, unknown> | null,
    steps: event.steps ? event.steps.slice() : [],
    outcome: event.outcome,
    reason: event.reason ?? null,
    decidedBy: event.decidedBy ?? null,
    durationMs: Math.round(event.durationMs * 1000) / 1000,
    notes: notes as Record<string, unknown> | null,
  };
  if (event.bridged !== undefined) record.bridged = event.bridged;
  if (intentSeq !== undefined) record.intentSeq = intentSeq;
  return record;
}

function principalOf(p: NonNullable<ObservedRound['principal']>): NonNullable<AuditRecord['principal']> {
  const principal: NonNullable<AuditRecord['principal']> = { sub: p.subject };
  if (p.issuer !== undefined) principal.iss = p.issuer;
  if (p.clientId !== undefined) principal.clientId = p.clientId;
  return principal;
}

function askedOf(requests: Readonly<Record<string, unknown>>): NonNullable<AuditRecord['asked']> {
  const asked: NonNullable<AuditRecord['asked']> = [];
  for (const key of Object.keys(requests))
    asked.push({ key, kind: kindOfInputRequest(requests[key]) ?? 'unknown' });
  return asked;
}
