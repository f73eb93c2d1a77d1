// `--audit` on `mrtr serve`: open the audit trail the URL names (same syntax as the `mrtr audit` commands), and say at
// start-up where rounds are recorded and how durably, so nobody runs on a best-effort sink by accident.
import {
  AUDIT_DEFAULTS,
  AUDIT_SYNTAX,
  AuditSigner,
  type AuditSink,
  AuditTrail,
  openAuditSink,
} from '../audit/index.js';
import { secretFromFile } from './secret-file.js';

export const AUDIT_HELP = `--audit ${AUDIT_SYNTAX}`;

export async function auditFromFlag(
  spec: string | undefined,
  options: { instance?: string | undefined; keyFile?: string | undefined; stdio: boolean },
  say: (line: string) => void,
): Promise<{ trail: AuditTrail | undefined } | { error: string }> {
  if (spec === undefined) {
    if (options.keyFile !== undefined) return { error: '--audit-key-file needs --audit URL' };
    return { trail: undefined };
  }
  if (spec === 'jsonl:-' && options.stdio)
    return { error: 'invalid --audit: jsonl:- writes to stdout, which --stdio uses for MCP messages' };
  // The environment first (a fleet's shared key), then the file (one machine), else a per-process key (warned).
  let key: AuditSigner | undefined;
  const fromEnv = process.env.MRTR_AUDIT_KEY;
  if ((fromEnv === undefined || fromEnv.trim() === '') && options.keyFile !== undefined) {
    const read = secretFromFile(
      options.keyFile,
      {
        flag: '--audit-key-file',
        what: 'audit signing key',
        make: () => AuditSigner.generate(AUDIT_DEFAULTS.keyName).text,
        parse: AuditSigner.parse,
      },
      say,
    );
    if ('error' in read) return { error: read.error };
    key = read.value;
    if (read.made)
      say(
        `mrtr serve: its verifier key is ${key.verifier.text} — keep a copy elsewhere for \`mrtr audit verify --vkey\``,
      );
  }
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
      ...(key ? { key } : {}),
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
