// What `mrtr audit flows`, `mrtr audit show` and the console's flows panel make of the events: flows (a flow's rounds share a flow id; a
// request refused before its state opened is a flow of its own) and their filters.
import type { AuditRecord } from './record.js';
import type { StoredEvent } from './sink.js';

export interface FlowSummary {
  flowId: string | null;
  started: string;
  principal: string | null;
  method: string;
  target: string | null;
  /** Rounds with an outcome (a round's intent and outcome are one round). */
  rounds: number;
  /**
   * The outcome of the flow's last round (`cancelled` if the flow was cancelled at all); `proposed` when its last
   * round recorded its intent and no outcome.
   */
  outcome: AuditRecord['outcome'];
  reason: string | null;
  instances: string[];
  durationMs: number;
}

export interface FlowFilter {
  principal?: string | undefined;
  target?: string | undefined;
  outcome?: string | undefined;
}

export function recordsOf(events: readonly StoredEvent[]): AuditRecord[] {
  return events
    .map((e) => JSON.parse(e.text) as AuditRecord)
    .sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
}

export function flowsOf(records: readonly AuditRecord[], filter: FlowFilter = {}): FlowSummary[] {
  const flows = new Map<string, AuditRecord[]>();
  for (const r of records) {
    const id = r.flowId ?? `${r.instance}#${r.seq}`;
    const list = flows.get(id);
    if (list) list.push(r);
    else flows.set(id, [r]);
  }
  const out: FlowSummary[] = [];
  for (const list of flows.values()) {
    const first = list[0]!;
    const ended = list.filter((r) => r.outcome !== 'proposed');
    // A cancel ends the flow whatever a round still running recorded after it; otherwise a last intent with no
    // outcome after it says the round ran (or was about to) and nothing recorded how it ended.
    const cancel = [...ended].reverse().find((r) => r.outcome === 'cancelled');
    const last =
      cancel ?? (list.at(-1)!.outcome === 'proposed' ? list.at(-1)! : (ended.at(-1) ?? list.at(-1)!));
    const summary: FlowSummary = {
      flowId: first.flowId,
      started: first.time,
      principal: first.principal?.sub ?? null,
      method: first.method,
      target: first.target,
      rounds: ended.length + (list.at(-1)!.outcome === 'proposed' && !cancel ? 1 : 0),
      outcome: last.outcome,
      reason: last.reason,
      instances: [...new Set(list.map((r) => r.instance))],
      durationMs: Math.round(list.reduce((n, r) => n + r.durationMs, 0) * 1000) / 1000,
    };
    if (filter.principal !== undefined && summary.principal !== filter.principal) continue;
    if (filter.target !== undefined && summary.target !== filter.target) continue;
    if (filter.outcome !== undefined && summary.outcome !== filter.outcome) continue;
    out.push(summary);
  }
  return out;
}

/** `--since`: `90s`, `30m`, `1h`, `7d`, or an ISO date; the ISO time it stands for, or undefined if malformed. */
export function sinceTime(value: string, now: number = Date.now()): string | undefined {
  const m = /^(\d+)(s|m|h|d)$/.exec(value);
  if (m) {
    const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 's' | 'm' | 'h' | 'd'];
    return new Date(now - Number(m[1]) * unit).toISOString();
  }
  const t = Date.parse(value);
  return /^\d{4}-\d{2}-\d{2}/.test(value) && Number.isFinite(t) ? new Date(t).toISOString() : undefined;
}
