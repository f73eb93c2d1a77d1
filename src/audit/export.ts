// The audit trail in the shapes security teams read: JSON lines (each stored event with its place in its writer's
// chain) and OCSF API Activity (class 6003). Both carry the seq and the chain hash, so a receiver can check that
// nothing is missing and recompute each hash from the embedded record.
import { TOOL_DEFINITION_CHANGED } from './record.js';
import type { StoredEvent } from './sink.js';

/** The OCSF schema version the events follow. */
export const OCSF_VERSION = '1.5.0';

/** Who made the events: `metadata.product` of each OCSF event. */
export interface ExportProduct {
  readonly name: string;
  readonly version: string;
}

/**
 * One JSON line: `{"instance","seq","hash","record"}`, the record exactly as stored, byte for byte: the SHA-256 of
 * its JSON text is `hash`, and its `prev` is the hash of the writer's previous line.
 */
export function toJsonLine(event: StoredEvent): string {
  return `{"instance":${JSON.stringify(event.instance)},"seq":${event.seq},"hash":${JSON.stringify(event.hash)},"record":${event.text}}`;
}

type Loose = Record<string, unknown>;

interface Status {
  status_id: number;
  status: string;
  action_id: number;
  action: string;
  disposition_id: number;
  disposition: string;
}

const status = (
  status_id: number,
  statusName: string,
  action_id: number,
  action: string,
  disposition_id: number,
  disposition: string,
): Status => ({ status_id, status: statusName, action_id, action, disposition_id, disposition });

/**
 * How each outcome reads in OCSF. status_id: 1 Success, 2 Failure, 99 Other (named in `status`); action_id: 1 Allowed,
 * 2 Denied, 99 Other; disposition_id: 1 Allowed, 2 Blocked, 14 Delayed, 25 Rejected, 27 Error, 99 Other.
 */
const OUTCOMES: Readonly<Record<string, Status>> = {
  proposed: status(99, 'proposed', 1, 'Allowed', 1, 'Allowed'),
  complete: status(1, 'Success', 1, 'Allowed', 1, 'Allowed'),
  tool_error: status(2, 'Failure', 1, 'Allowed', 1, 'Allowed'),
  input_required: status(99, 'input_required', 1, 'Allowed', 99, 'input_required'),
  deferred: status(99, 'deferred', 99, 'deferred', 14, 'Delayed'),
  denied: status(2, 'Failure', 2, 'Denied', 2, 'Blocked'),
  declined: status(2, 'Failure', 2, 'Denied', 25, 'Rejected'),
  refused: status(2, 'Failure', 2, 'Denied', 25, 'Rejected'),
  cancelled: status(99, 'cancelled', 99, 'cancelled', 99, 'cancelled'),
  error: status(2, 'Failure', 0, 'Unknown', 27, 'Error'),
  withheld: status(1, 'Success', 2, 'Denied', 2, 'Blocked'),
};

/** A round waiting for an approval is an outcome of its own: its approval note says pending. */
function outcomeOf(record: Loose): string {
  const approval = (record.notes as Loose | null)?.approval as Loose | undefined;
  if (record.outcome === 'input_required' && approval?.state === 'pending') return 'deferred';
  return String(record.outcome);
}

const RESOURCE_TYPES: Readonly<Record<string, string>> = {
  'tools/call': 'mcp.tool',
  'tools/list': 'mcp.tool',
  'prompts/get': 'mcp.prompt',
  'resources/read': 'mcp.resource',
};

/** activity_id: 2 Read for reads, else 99 Other named by the MCP method (or the event: tool_definition_changed). */
function activityOf(record: Loose): { activity_id: number; activity_name: string } {
  if (record.event === TOOL_DEFINITION_CHANGED)
    return { activity_id: 99, activity_name: TOOL_DEFINITION_CHANGED };
  if (record.method === 'resources/read' || record.method === 'prompts/get')
    return { activity_id: 2, activity_name: 'Read' };
  return { activity_id: 99, activity_name: String(record.method) };
}

/**
 * One stored event as an OCSF API Activity event (class_uid 6003): the principal as actor.user, the MCP method as
 * api.operation, the tool (prompt, resource) in resources, the outcome as status, action and disposition, and
 * mrtr's own facts (instance, seq, prev, hash, flow id, round) under unmapped.mrtr.
 */
export function toOcsf(event: StoredEvent, product: ExportProduct): Loose {
  const record = JSON.parse(event.text) as Loose;
  const outcome = outcomeOf(record);
  const mapped = OUTCOMES[outcome] ?? status(0, 'Unknown', 0, 'Unknown', 0, 'Unknown');
  const { activity_id, activity_name } = activityOf(record);
  const principal = record.principal as { sub: string; iss?: string; clientId?: string } | null;
  const changed = record.event === TOOL_DEFINITION_CHANGED;
  const actor: Loose = changed
    ? { app_name: product.name }
    : principal
      ? {
          user: {
            uid: principal.sub,
            name: principal.sub,
            ...(principal.iss ? { domain: principal.iss } : {}),
          },
        }
      : { user: { name: 'anonymous', type_id: 0, type: 'Unknown' } };
  if (!changed && principal?.clientId !== undefined) actor.app_uid = principal.clientId;
  const time = Date.parse(String(record.time));
  const target = record.target as string | null;
  const method = String(record.method);
  const reason = record.reason as string | null;
  const ocsf: Loose = {
    class_uid: 6003,
    class_name: 'API Activity',
    category_uid: 6,
    category_name: 'Application Activity',
    activity_id,
    activity_name,
    type_uid: 600300 + activity_id,
    type_name: `API Activity: ${activity_name}`,
    time,
    severity_id: changed ? 3 : 1,
    severity: changed ? 'Medium' : 'Informational',
    ...mapped,
    message: changed
      ? `tool ${target} changed since it was pinned: withheld until accepted`
      : `${method}${target === null ? '' : ` ${target}`}: ${outcome}`,
    metadata: {
      version: OCSF_VERSION,
      product: { name: product.name, vendor_name: product.name, version: product.version },
      uid: `${event.instance}#${event.seq}`,
      sequence: event.seq,
      log_name: 'audit',
      original_time: String(record.time),
      ...(record.flowId ? { correlation_uid: String(record.flowId) } : {}),
    },
    actor,
    api: {
      operation: method,
      ...(record.requestId === null || record.requestId === undefined
        ? {}
        : { request: { uid: String(record.requestId) } }),
    },
    src_endpoint: { name: changed ? event.instance : (principal?.clientId ?? 'unknown') },
    dst_endpoint: { name: event.instance, svc_name: 'mcp' },
    unmapped: {
      mrtr: {
        instance: event.instance,
        seq: event.seq,
        prev: record.prev,
        hash: event.hash,
        flow_id: record.flowId ?? null,
        round: record.round,
        outcome: record.outcome,
        decided_by: record.decidedBy ?? null,
        ...(record.intentSeq === undefined ? {} : { intent_seq: record.intentSeq }),
        ...(record.event === undefined ? {} : { event: record.event }),
        arguments_digest: record.argumentsDigest,
        ...(changed ? { definition: (record.notes as Loose).definition } : {}),
      },
    },
  };
  if (reason !== null) ocsf.status_detail = reason;
  if (target !== null) ocsf.resources = [{ name: target, type: RESOURCE_TYPES[method] ?? 'mcp.target' }];
  return ocsf;
}
