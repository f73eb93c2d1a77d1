// The flows panel: recent flows from the audit trail with filters (principal, tool, upstream, outcome, time), and
// a flow's timeline — every round in order: who, what was asked and answered (sensitive answers are redacted in the
// trail itself), which control or guard decided and why, the steps that ran, the outcome — linkable and exportable.

import type { AuditReader, AuditRecord } from '../audit/index.js';
import { type FlowSummary, flowsOf, recordsOf, sinceTime } from '../audit/internal.js';
import { type Html, html } from '../auth/internal.js';
import type { PageRequest, PageResponse } from '../protocol/index.js';
import type { ConsolePanel, PanelContext } from './panel.js';

export const FLOWS_DEFAULTS = Object.freeze({
  /** What the list reads when no time is given: a day of rounds. */
  since: '24h',
  /** Rows the list shows at most (newest first): a page a person can read. */
  maxListed: 200,
});

const OUTCOMES = [
  'complete',
  'input_required',
  'tool_error',
  'denied',
  'declined',
  'cancelled',
  'refused',
  'error',
  'proposed',
] as const;
const FLOW_ID = /^[A-Za-z0-9_-]{8,128}$/;

/** Behind a gateway a tool is `<upstream>__<tool>`: the upstream is what comes before the first `__`. */
export function upstreamOf(target: string | null): string | undefined {
  const at = target?.indexOf('__') ?? -1;
  return at > 0 ? target!.slice(0, at) : undefined;
}

const shortTime = (iso: string) => iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');

/** A JSON value as one readable line (the trail's values are data: shown escaped, never markup). */
function brief(value: unknown, max = 300): string {
  const text = JSON.stringify(value) ?? '';
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

export class FlowsPanel implements ConsolePanel {
  readonly id = 'flows';
  readonly title = 'Flows';
  readonly roles = ['auditor', 'admin'] as const;

  constructor(
    private readonly reader: AuditReader,
    private readonly now: () => number = Date.now,
  ) {}

  async summary(): Promise<string> {
    const since = sinceTime('1h', this.now());
    const flows = flowsOf(recordsOf(await this.reader.events({ ...(since ? { since } : {}) })));
    const refused = flows.filter((f) => f.outcome === 'refused' || f.outcome === 'error').length;
    return `${flows.length} flow${flows.length === 1 ? '' : 's'} in the last hour, ${refused} refused or failed.`;
  }

  async handle(req: PageRequest, _res: PageResponse, ctx: PanelContext, rest: string): Promise<void> {
    if (req.method !== 'GET') return ctx.notAllowed('GET');
    if (rest === '' || rest === '/') return this.list(ctx);
    const m = /^\/([^/]+)(\/export)?$/.exec(rest);
    let flowId: string | undefined;
    try {
      flowId = m?.[1] !== undefined ? decodeURIComponent(m[1]) : undefined;
    } catch {
      // A broken %-escape names no flow: the same answer as any other unknown id.
    }
    if (!flowId || !FLOW_ID.test(flowId))
      return ctx.page(404, 'No such flow', html`<p>There is no flow at this address.</p>`);
    const records = recordsOf(await this.reader.events({ flowId }));
    if (records.length === 0)
      return ctx.page(
        404,
        'No such flow',
        html`<p>The trail holds no round of flow <code>${flowId}</code>.</p>`,
      );
    if (m?.[2]) {
      // The records exactly as the trail holds them: with their chain positions, a verifier can check them.
      ctx.json(
        200,
        { flowId, exportedAt: new Date(this.now()).toISOString(), records },
        { 'content-disposition': `attachment; filename="flow-${flowId}.json"` },
      );
      return;
    }
    return this.timeline(ctx, flowId, records);
  }

  private async list(ctx: PanelContext): Promise<void> {
    const q = ctx.url.searchParams;
    const field = (name: string) => {
      const v = q.get(name)?.trim();
      return v ? v.slice(0, 200) : undefined;
    };
    const sinceText = field('since') ?? FLOWS_DEFAULTS.since;
    const since = sinceTime(sinceText, this.now());
    const outcome = field('outcome');
    const problems: string[] = [];
    if (since === undefined)
      problems.push(`"${sinceText}" is not a time: write 30m, 6h, 7d or a date like 2026-12-01`);
    if (outcome !== undefined && !(OUTCOMES as readonly string[]).includes(outcome))
      problems.push(`"${outcome}" is not an outcome`);
    const tool = field('tool');
    const upstream = field('upstream');
    let flows: FlowSummary[] = [];
    if (problems.length === 0) {
      flows = flowsOf(recordsOf(await this.reader.events({ since: since! })), {
        principal: field('principal'),
        outcome,
      })
        .filter((f) => tool === undefined || f.target === tool || f.target?.endsWith(`__${tool}`))
        .filter((f) => upstream === undefined || upstreamOf(f.target) === upstream)
        .reverse();
    }
    const shown = flows.slice(0, FLOWS_DEFAULTS.maxListed);
    const option = (v: string) => html`<option${outcome === v ? html` selected` : ''}>${v}</option>`;
    const row = (f: FlowSummary) => {
      const link = f.flowId && FLOW_ID.test(f.flowId);
      return html`<tr><td>${shortTime(f.started)}</td><td>${link ? html`<a href="/mrtr/console/flows/${encodeURIComponent(f.flowId!)}">${f.target ?? f.method}</a>` : (f.target ?? f.method)}</td><td>${upstreamOf(f.target) ?? ''}</td><td>${f.principal ?? 'anonymous'}</td><td>${f.rounds}</td><td>${f.outcome}</td><td>${f.reason ?? ''}</td></tr>`;
    };
    ctx.page(
      problems.length ? 400 : 200,
      'Flows',
      html`<form method="get" action="/mrtr/console/flows" class="filters card" role="search" aria-label="Filter flows">
<label>Principal <input name="principal" value="${field('principal') ?? ''}"></label>
<label>Tool <input name="tool" value="${tool ?? ''}"></label>
<label>Upstream <input name="upstream" value="${upstream ?? ''}"></label>
<label>Outcome <select name="outcome"><option value="">any</option>${OUTCOMES.map(option)}</select></label>
<label>Since <input name="since" value="${sinceText}" size="10"></label>
<button type="submit">Filter</button></form>
${problems.map((p) => html`<p class="card error" role="alert">${p}</p>`)}
<section id="flows-list" data-live="flows" aria-label="Flows"><p>${flows.length} flow${flows.length === 1 ? '' : 's'}${
        flows.length > shown.length ? html`, the newest ${shown.length} shown` : ''
      }.</p>${
        shown.length
          ? html`<div class="scroll"><table><thead><tr><th scope="col">Started (UTC)</th><th scope="col">Tool</th><th scope="col">Upstream</th><th scope="col">Principal</th><th scope="col">Rounds</th><th scope="col">Outcome</th><th scope="col">Reason</th></tr></thead><tbody>${shown.map(row)}</tbody></table></div>`
          : ''
      }</section>`,
    );
  }

  private timeline(ctx: PanelContext, flowId: string, records: AuditRecord[]): void {
    const first = records[0]!;
    const p = first.principal;
    const rounds = records.map((r) => this.round(r));
    const path = `/mrtr/console/flows/${encodeURIComponent(flowId)}`;
    ctx.page(
      200,
      `Flow ${first.target ?? first.method}`,
      html`<section class="card" aria-label="The request"><table>
<tr><th scope="row">Flow</th><td><code>${flowId}</code></td></tr>
<tr><th scope="row">Who</th><td>${p ? `${p.sub}${p.iss ? ` (${p.iss})` : ''}${p.clientId ? `, client ${p.clientId}` : ''}` : 'anonymous'}</td></tr>
<tr><th scope="row">What</th><td>${first.method} ${first.target ?? ''}${upstreamOf(first.target) ? html` <span class="muted">(upstream ${upstreamOf(first.target)})</span>` : ''}</td></tr>
<tr><th scope="row">Intent</th><td><code>${brief(first.arguments, 2000)}</code></td></tr>
<tr><th scope="row">Digest</th><td><code>${first.argumentsDigest}</code></td></tr>
</table></section>
<ol class="list" id="timeline" data-live="flows" aria-label="Rounds in order">${rounds}</ol>
<p><a href="${path}/export" download>Export this flow (JSON)</a> · <a href="/mrtr/console/flows">All flows</a></p>`,
    );
  }

  private round(r: AuditRecord): Html {
    const head = html`<strong>Round ${r.round}</strong> · ${shortTime(r.time)} · ${r.instance} #${r.seq}`;
    if (r.outcome === 'proposed')
      return html`<li class="card">${head} · <em>proposed</em>: the intent, recorded before the round ran.</li>`;
    const rows: Html[] = [];
    const add = (label: string, value: Html | string) =>
      rows.push(html`<tr><th scope="row">${label}</th><td>${value}</td></tr>`);
    for (const [key, answer] of Object.entries(r.answers ?? {}))
      add(`Answered ${key}`, html`<code>${brief(answer)}</code>`);
    for (const q of r.asked ?? []) add(`Asked ${q.key}`, q.kind);
    if (r.steps.length) add('Steps that ran', r.steps.join(', '));
    if (r.reason !== null) add(r.outcome === 'refused' ? 'Refused' : 'Reason', r.reason);
    if (r.decidedBy !== null) add('Decided by', r.decidedBy);
    for (const [k, v] of Object.entries(r.notes ?? {}))
      add(`Note: ${k}`, html`<code>${brief(v, 1000)}</code>`);
    return html`<li class="card">${head} · ${r.durationMs.toFixed(1)} ms · <strong>${r.outcome}</strong>${
      rows.length ? html`<table>${rows}</table>` : ''
    }</li>`;
  }
}
