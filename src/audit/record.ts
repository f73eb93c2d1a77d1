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
  readonly outcome: 'input_required' | 'complete' | 'tool_error' | 'refused' | 'error';
  readonly reason: string | undefined;
  readonly decidedBy: string | undefined;
  readonly steps?: readonly string[];
  readonly notes?: Readonly<Record<string, unknown>> | undefined;
  readonly sensitive?: readonly string[] | undefined;
  readonly startedAt: number;
  readonly durationMs: number;
  /** The 2025 revision a bridged client speaks (its flow ran through the legacy bridge). */
  readonly bridged?: string;
}

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
  requestId: string | number;
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
  outcome: ObservedRound['outcome'];
  /** The codec's, a guard's or the transport's precise reason for a refusal or failure. */
  reason: string | null;
  decidedBy: string | null;
  durationMs: number;
  /** The handler's own facts (`ctx.audit.note`). */
  notes: Record<string, unknown> | null;
  /** Present only for a 2025 client's rounds through the legacy bridge: the revision that client speaks. */
  bridged?: string;
}

/** An event before the writer gives it its place in the chain. */
export type UnchainedRecord = Omit<AuditRecord, 'seq' | 'prev'>;

export function toAuditRecord(event: ObservedRound, instance: string, redactor: Redactor): UnchainedRecord {
  const sensitive = event.sensitive;
  const redact = (value: unknown) =>
    sensitive && sensitive.length > 0 ? redactFields(value, sensitive, redactor) : { value, redacted: false };
  const args = redact(event.arguments);
  const given = event.inputResponses;
  const answers = given && Object.keys(given).length > 0 ? redact(given).value : undefined;
  const notes = event.notes ? redact(event.notes).value : undefined;
  const p = event.principal;
  return {
    v: 1,
    instance,
    time: new Date(event.startedAt).toISOString(),
    requestId: event.requestId,
    flowId: event.flowId ?? null,
    round: event.round,
    principal: p
      ? {
          sub: p.subject,
          ...(p.issuer !== undefined ? { iss: p.issuer } : {}),
          ...(p.clientId !== undefined ? { clientId: p.clientId } : {}),
        }
      : null,
    method: event.method,
    target: event.target ?? null,
    arguments: args.value === undefined ? null : args.value,
    argumentsDigest: args.redacted ? redactor.keyed(event.arguments) : redactor.plain(event.arguments),
    asked: event.inputRequests
      ? Object.entries(event.inputRequests).map(([key, request]) => ({
          key,
          kind: kindOfInputRequest(request) ?? 'unknown',
        }))
      : null,
    answers: (answers as Record<string, unknown> | undefined) ?? null,
    steps: [...(event.steps ?? [])],
    outcome: event.outcome,
    reason: event.reason ?? null,
    decidedBy: event.decidedBy ?? null,
    durationMs: Math.round(event.durationMs * 1000) / 1000,
    notes: (notes as Record<string, unknown> | undefined) ?? null,
    ...(event.bridged === undefined ? {} : { bridged: event.bridged }),
  };
}
