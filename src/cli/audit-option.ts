// `--audit` on `mrtr serve`: open the audit trail the URL names (same syntax as the `mrtr audit` commands), and say at
// start-up where rounds are recorded and how durably, so nobody runs on a best-effort sink by accident.
import { AUDIT_SYNTAX, type AuditSink, AuditTrail, openAuditSink } from '../audit/index.js';

export const AUDIT_HELP = `--audit ${AUDIT_SYNTAX}`;

export async function auditFromFlag(
  spec: string | undefined,
  options: { instance?: string | undefined; stdio: boolean },
  say: (line: string) => void,
): Promise<{ trail: AuditTrail | undefined } | { error: string }> {
  if (spec === undefined) return { trail: undefined };
  if (spec === 'jsonl:-' && options.stdio)
    return { error: 'invalid --audit: jsonl:- writes to stdout, which --stdio uses for MCP messages' };
  let sink: AuditSink;
  try {
    sink = await openAuditSink(spec);
  } catch (error) {
    return { error: `invalid --audit: ${(error as Error).message}` };
  }
  let trail: AuditTrail;
  try {
    trail = await AuditTrail.open(sink, {
      ...(options.instance !== undefined ? { instance: options.instance } : {}),
      warn: (line) => say(`mrtr serve: ${line}`),
    });
  } catch (error) {
    await sink.close().catch(() => undefined);
    return { error: `invalid --audit: ${(error as Error).message}` };
  }
  say(
    trail.sink.durable
      ? `mrtr serve: audit trail on ${trail.sink.description} (instance ${trail.instance}): every round is recorded before it is answered`
      : `mrtr serve: audit trail on ${trail.sink.description} (instance ${trail.instance}), best effort: events may be lost in a crash`,
  );
  return { trail };
}
