// How `mrtr audit` prints for a person: a table that fits the terminal's width, a timeline per flow, colour only on
// a TTY (and never with NO_COLOR). `--json` bypasses all of it.
import type { AuditRecord, VerifyReport } from '../audit/index.js';
import type { FlowSummary } from '../audit/internal.js';

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
  proposed: 90,
  complete: 32,
  input_required: 36,
  tool_error: 33,
  denied: 31,
  declined: 33,
  cancelled: 90,
  refused: 31,
  error: 31,
};

// Controls (C0, DEL, C1: ESC starts an escape sequence, U+009B is one on its own, CR rewrites a line), format
// characters (bidirectional overrides and isolates, zero-width ones, tags), line and paragraph separators and lone
// surrogates: what could erase, repaint, reorder or hide what the operator reads (src/client/safe-text.ts removes
// the same from a server's text; here they are evidence, so they are shown, escaped).
const CONTROL = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;

/**
 * A value from the trail as it may be printed: a tool name, a subject, a note or an instance name comes from a
 * client, an author or whoever edited the file, so its control characters are shown escaped (\u001b), never sent.
 */
export function shown(text: string): string {
  return text.replace(CONTROL, (c) => {
    const code = c.codePointAt(0)!;
    return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** Outcomes that name a decision: the flows table shows their reason. */
const DECIDED = new Set(['denied', 'declined', 'cancelled']);
const decided = (f: FlowSummary) => DECIDED.has(f.outcome) && f.reason !== null;

function paint(style: Style, text: string, code: number | undefined): string {
  return style.color && code !== undefined ? `\x1b[${code}m${text}\x1b[0m` : text;
}

function cell(value: string, width: number): string {
  const text = shown(value);
  if (text.length <= width) return text.padEnd(width);
  return `${text.slice(0, Math.max(0, width - 1))}…`;
}

/** A compact rendering of a JSON value for one line. */
function brief(value: unknown, width: number): string {
  // JSON escapes C0 controls but neither C1 nor the bidirectional ones.
  const text = shown(JSON.stringify(value) ?? 'undefined');
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
    flows.some(decided) ? 'WHY' : '',
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
      // The decision's reason, last and whole: the rule that denied is never cut.
      decided(f) ? shown(f.reason!) : '',
    ]);
  }
  return out;
}

export function flowTimeline(records: readonly AuditRecord[], style: Style): string {
  const first = records[0]!;
  const inner = style.width - 14;
  const p = first.principal;
  const s = (value: unknown) => shown(String(value));
  let out = `flow ${s(first.flowId ?? '-')}  ${s(first.method)} ${s(first.target ?? '')}\n`;
  out += `  principal  ${p ? `${s(p.sub)}${p.iss ? ` (${s(p.iss)})` : ''}${p.clientId ? ` client ${s(p.clientId)}` : ''}` : 'anonymous'}\n`;
  out += `  intent     ${brief(first.arguments, inner)}\n`;
  out += `  digest     ${s(first.argumentsDigest)}\n`;
  for (const r of records) {
    if (r.outcome === 'proposed') {
      // The intent, written before the round's handler ran: its details are the outcome's, which follows.
      out += `\n${paint(style, `round ${s(r.round)}`, 1)}  ${s(r.time)}  ${s(r.instance)} #${s(r.seq)}  `;
      out += `${paint(style, 'proposed', OUTCOME_COLOUR.proposed)} (intent recorded before it ran)\n`;
      continue;
    }
    const head = `round ${s(r.round)}`;
    out += `\n${paint(style, head, 1)}  ${s(r.time)}  ${s(r.instance)} #${s(r.seq)}  ${r.durationMs.toFixed(1)} ms  `;
    out += `${paint(style, s(r.outcome), OUTCOME_COLOUR[r.outcome])}\n`;
    for (const [key, answer] of Object.entries(r.answers ?? {}))
      out += `  answered   ${s(key)}: ${brief(answer, inner - key.length - 2)}\n`;
    for (const q of r.asked ?? []) out += `  asked      ${s(q.key)} (${s(q.kind)})\n`;
    if (r.steps.length > 0) out += `  steps      ${s(r.steps.join(', '))}\n`;
    if (r.outcome === 'refused' || r.outcome === 'error' || r.reason !== null)
      out += `  ${r.outcome === 'refused' ? 'refused ' : 'reason  '}   ${s(r.reason ?? '-')}${r.decidedBy ? ` (by ${s(r.decidedBy)})` : ''}\n`;
    if (r.notes) out += `  notes      ${brief(r.notes, inner)}\n`;
    if (r.intentSeq !== undefined) out += `  after      intent #${s(r.intentSeq)}\n`;
  }
  return out;
}

export function verifyText(report: VerifyReport, style: Style): string {
  let out = '';
  for (const c of report.chains)
    out += `  ${shown(c.instance)}: ${c.events} events, head #${c.headSeq}, sealed up to #${c.sealedSeq}${c.headSeq > c.sealedSeq ? `, ${c.headSeq - c.sealedSeq} not sealed by a given key` : ''}${c.unfinished > 0 ? `, ${c.unfinished} round(s) with an intent and no outcome (still running, killed, or their outcome was refused)` : ''}\n`;
  if (report.ok)
    return `${paint(style, 'intact', 32)}: ${report.events} events in ${report.chains.length} chain(s), ${report.checkpoints} checkpoint(s) verified\n${out}`;
  const bad = report.firstBad!;
  // The instance and the problem quote the trail (a row's instance, the key name on a forged checkpoint).
  const where = `first bad event ${shown(bad.instance)} #${bad.seq}: ${shown(bad.problem)}`;
  if (bad.unknownKey)
    return (
      `${paint(style, 'UNVERIFIED', 31)}: ${where}\n` +
      '  if that key is one of yours (an earlier or per-process key), give its verifier key with another --vkey; if not, the checkpoint was forged\n' +
      out
    );
  return `${paint(style, 'TAMPERED', 31)}: ${where}\n${out}`;
}
