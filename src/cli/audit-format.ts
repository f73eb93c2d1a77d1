// How `mrtr audit` prints for a person: a table that fits the terminal's width, a timeline per flow, colour only on
// a TTY (and never with NO_COLOR). `--json` bypasses all of it.
import type { AuditRecord, VerifyReport } from '../audit/index.js';
import type { FlowSummary } from './audit-flows.js';

export interface Style {
  width: number;
  color: boolean;
}

export function styleFor(out: NodeJS.WriteStream): Style {
  return {
    width: out.isTTY ? Math.max(80, out.columns ?? 100) : 120,
    color: out.isTTY === true && process.env.NO_COLOR === undefined,
  };
}

const OUTCOME_COLOUR: Record<string, number> = {
  complete: 32,
  input_required: 36,
  tool_error: 33,
  refused: 31,
  error: 31,
};

function paint(style: Style, text: string, code: number | undefined): string {
  return style.color && code !== undefined ? `\x1b[${code}m${text}\x1b[0m` : text;
}

function cell(text: string, width: number): string {
  if (text.length <= width) return text.padEnd(width);
  return `${text.slice(0, Math.max(0, width - 1))}…`;
}

/** A compact rendering of a JSON value for one line. */
function brief(value: unknown, width: number): string {
  const text = JSON.stringify(value) ?? 'undefined';
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}

export function flowsTable(flows: readonly FlowSummary[], style: Style): string {
  if (flows.length === 0) return 'no flows\n';
  const fixed = { started: 19, rounds: 6, outcome: 14, ms: 8 };
  const rest = Math.max(20, style.width - (fixed.started + fixed.rounds + fixed.outcome + fixed.ms + 6 * 2));
  // A flow id is 22 characters: whole when there is room, since it is what `show` takes.
  const flowW = Math.min(22, Math.max(8, rest - 12));
  const whoW = Math.min(20, Math.max(6, Math.floor((rest - flowW) * 0.45)));
  const targetW = Math.max(6, rest - flowW - whoW);
  const row = (cells: string[]) => `${cells.join('  ').trimEnd()}\n`;
  let out = row([
    cell('STARTED', fixed.started),
    cell('FLOW', flowW),
    cell('PRINCIPAL', whoW),
    cell('TARGET', targetW),
    cell('ROUNDS', fixed.rounds),
    cell('OUTCOME', fixed.outcome),
    'MS'.padStart(fixed.ms),
  ]);
  for (const f of flows) {
    out += row([
      // UTC to the second: the timeline (show) has the milliseconds.
      cell(f.started.slice(0, 19).replace('T', ' '), fixed.started),
      cell(f.flowId ?? '-', flowW),
      cell(f.principal ?? 'anonymous', whoW),
      // A request refused before its body was read has no target, and its method says so already: `(unread)`.
      cell(f.target ?? (f.method.startsWith('(') ? f.method : `(${f.method})`), targetW),
      cell(String(f.rounds), fixed.rounds),
      paint(style, cell(f.outcome, fixed.outcome), OUTCOME_COLOUR[f.outcome]),
      f.durationMs.toFixed(1).padStart(fixed.ms),
    ]);
  }
  return out;
}

export function flowTimeline(records: readonly AuditRecord[], style: Style): string {
  const first = records[0]!;
  const inner = style.width - 14;
  const p = first.principal;
  let out = `flow ${first.flowId ?? '-'}  ${first.method} ${first.target ?? ''}\n`;
  out += `  principal  ${p ? `${p.sub}${p.iss ? ` (${p.iss})` : ''}${p.clientId ? ` client ${p.clientId}` : ''}` : 'anonymous'}\n`;
  out += `  intent     ${brief(first.arguments, inner)}\n`;
  out += `  digest     ${first.argumentsDigest}\n`;
  for (const r of records) {
    const head = `round ${r.round}`;
    out += `\n${paint(style, head, 1)}  ${r.time}  ${r.instance} #${r.seq}  ${r.durationMs.toFixed(1)} ms  `;
    out += `${paint(style, r.outcome, OUTCOME_COLOUR[r.outcome])}\n`;
    for (const [key, answer] of Object.entries(r.answers ?? {}))
      out += `  answered   ${key}: ${brief(answer, inner - key.length - 2)}\n`;
    for (const q of r.asked ?? []) out += `  asked      ${q.key} (${q.kind})\n`;
    if (r.steps.length > 0) out += `  steps      ${r.steps.join(', ')}\n`;
    if (r.outcome === 'refused' || r.outcome === 'error' || r.reason !== null)
      out += `  ${r.outcome === 'refused' ? 'refused ' : 'reason  '}   ${r.reason ?? '-'}${r.decidedBy ? ` (by ${r.decidedBy})` : ''}\n`;
    if (r.notes) out += `  notes      ${brief(r.notes, inner)}\n`;
  }
  return out;
}

export function verifyText(report: VerifyReport, style: Style): string {
  let out = '';
  for (const c of report.chains)
    out += `  ${c.instance}: ${c.events} events, head #${c.headSeq}, sealed up to #${c.sealedSeq}\n`;
  if (report.ok)
    return `${paint(style, 'intact', 32)}: ${report.events} events in ${report.chains.length} chain(s), ${report.checkpoints} checkpoint(s) verified\n${out}`;
  const bad = report.firstBad!;
  if (bad.unknownKey)
    return (
      `${paint(style, 'UNVERIFIED', 31)}: first bad event ${bad.instance} #${bad.seq}: ${bad.problem}\n` +
      '  if that key is one of yours (an earlier or per-process key), give its verifier key with another --vkey; if not, the checkpoint was forged\n' +
      out
    );
  return `${paint(style, 'TAMPERED', 31)}: first bad event ${bad.instance} #${bad.seq}: ${bad.problem}\n${out}`;
}
