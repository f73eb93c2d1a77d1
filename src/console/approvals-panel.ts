// The approvals panel: the queue of requests waiting for this person's decision (with a count), each shown as the
// review page shows it — who asks, the tool and upstream, why, the exact effect with human labels, risk, age,
// expiry and votes — a decision with a reason, the history of decisions, and a deep link to each request.

import type { PageSession } from '../auth/index.js';
import { type Html, html, readForm } from '../auth/internal.js';
import { type ApprovalRecord, ApprovalRefused, type HumanControls, type Person } from '../controls/index.js';
import {
  countOf,
  decisionCard,
  pageDigest,
  previewTable,
  STATUS_TEXT,
  samePerson,
  stateAt,
  statusLine,
  votesList,
  withdrawnNote,
} from '../controls/internal.js';
import type { PageRequest, PageResponse } from '../protocol/index.js';
import type { ConsolePanel, PanelContext } from './panel.js';

const RISK_ORDER: Readonly<Record<string, number>> = { high: 0, medium: 1, low: 2 };
const MAX_REASON = 2000;

const personOf = (s: PageSession): Person => ({
  subject: s.subject,
  issuer: s.issuer,
  ...(s.name === undefined ? {} : { name: s.name }),
});

/** "5 minutes", "3 hours", "2 days": how long ago, or how long until. */
export function span(ms: number): string {
  const minutes = Math.max(0, Math.round(ms / 60_000));
  if (minutes < 1) return 'less than a minute';
  if (minutes < 120) return `${minutes} minute${minutes === 1 ? '' : 's'}`;
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `${hours} hours` : `${Math.round(hours / 24)} days`;
}

/** The tool and, behind a gateway, the upstream a request's effect names (`tool`, `upstream`, or `up__tool`). */
function toolOf(r: ApprovalRecord): { tool: string | undefined; upstream: string | undefined } {
  const tool = typeof r.effect.tool === 'string' ? r.effect.tool : undefined;
  const upstream = typeof r.effect.upstream === 'string' ? r.effect.upstream : undefined;
  if (upstream === undefined && tool?.includes('__')) {
    const [up, name] = tool.split('__', 2);
    return { tool: name, upstream: up };
  }
  return { tool, upstream };
}

export class ApprovalsPanel implements ConsolePanel {
  readonly id = 'approvals';
  readonly title = 'Approvals';
  readonly roles = ['approver', 'admin'] as const;

  constructor(
    private readonly controls: HumanControls,
    private readonly now: () => number = Date.now,
  ) {}

  /** The requests this person may decide: not their own, and for a role they hold. */
  private async queue(session: PageSession): Promise<ApprovalRecord[]> {
    const me = personOf(session);
    const pending = await this.controls.approvals.pending();
    return pending
      .filter((r) => !samePerson(r.requester, me) && session.roles.includes(r.role))
      .sort(
        (a, b) =>
          (RISK_ORDER[a.risk ?? 'medium'] ?? 1) - (RISK_ORDER[b.risk ?? 'medium'] ?? 1) ||
          a.createdAt - b.createdAt,
      );
  }

  async summary(ctx: PanelContext): Promise<Html> {
    const n = (await this.queue(ctx.session)).length;
    return html`<span class="badge" id="approvals-count">${n}</span> ${n === 1 ? 'request waits' : 'requests wait'} for your decision.`;
  }

  async handle(req: PageRequest, _res: PageResponse, ctx: PanelContext, rest: string): Promise<void> {
    if (rest === '' || rest === '/') {
      if (req.method !== 'GET') return ctx.notAllowed('GET');
      return this.list(ctx);
    }
    const id = /^\/([A-Za-z0-9_-]{16})$/.exec(rest)?.[1];
    if (!id)
      return ctx.page(404, 'No such request', html`<p>There is no approval request at this address.</p>`);
    if (req.method === 'POST') return this.decide(req, ctx, id);
    if (req.method !== 'GET') return ctx.notAllowed('GET, POST');
    return this.one(ctx, id);
  }

  private card(r: ApprovalRecord, now: number): Html {
    const { tool, upstream } = toolOf(r);
    // The same rows as every surface (controls' preview rule); the request's own page shows each one whole.
    const facts = previewTable(
      r.effect,
      html`<a href="/mrtr/console/approvals/${r.id}">the request's page shows every one</a>`,
    );
    return html`<li class="card" id="approval-${r.id}"><h3><a href="/mrtr/console/approvals/${r.id}">${r.requester.name ?? r.requester.subject}: ${r.reason}</a></h3>
<p>${tool ? html`Tool <strong>${tool}</strong>` : ''}${upstream ? html` on <strong>${upstream}</strong>` : ''}${
      r.risk ? html` · risk <strong class="risk-${r.risk}">${r.risk}</strong>` : ''
    } · asked ${span(now - r.createdAt)} ago · expires in ${span(r.expiresAt - now)} · approved by ${countOf(r, 'approve')} of ${r.approve}</p>
${facts}</li>`;
  }

  private async list(ctx: PanelContext): Promise<void> {
    const now = this.now();
    const queue = await this.queue(ctx.session);
    const history = (await this.controls.approvals.decided()).slice(0, 50);
    const row = (r: ApprovalRecord) => {
      const state = stateAt(r, now);
      const last = r.votes.at(-1);
      // The same status words as the inbox's JSON (`status`) and the request's own page.
      return html`<tr><td><a href="/mrtr/console/approvals/${r.id}">${r.reason}</a></td><td>${r.requester.name ?? r.requester.subject}</td><td>${state}<div class="muted">${statusLine(r, now)}</div></td><td>${
        r.votes
          .map((v) => `${v.decision === 'approve' ? 'approved' : 'denied'} by ${v.by.name ?? v.by.subject}`)
          .join('; ') || '—'
      }</td><td>${last ? new Date(last.at).toISOString().replace('T', ' ').slice(0, 16) : ''}</td></tr>`;
    };
    ctx.page(
      200,
      'Approvals',
      html`<section id="approvals-queue" data-live="approvals" aria-labelledby="queue-h">
<h2 id="queue-h">Waiting for you <span class="badge" role="status" aria-label="${queue.length} waiting">${queue.length}</span></h2>${
        queue.length
          ? html`<ul class="list">${queue.map((r) => this.card(r, now))}</ul>`
          : html`<p>Nothing waits for your decision.</p>`
      }</section>
<section id="approvals-history" data-live="approvals" aria-labelledby="history-h"><h2 id="history-h">Decided lately</h2>${
        history.length
          ? html`<div class="scroll"><table><thead><tr><th scope="col">Request</th><th scope="col">Asked by</th><th scope="col">State</th><th scope="col">Decisions</th><th scope="col">Last (UTC)</th></tr></thead><tbody>${history.map(row)}</tbody></table></div>`
          : html`<p>No decisions yet.</p>`
      }</section>
<p class="muted">The same decisions over the JSON API: <code>GET /mrtr/approvals</code> and <code>POST /mrtr/approvals/&lt;id&gt;</code> with a bearer token.</p>`,
    );
  }

  private async one(ctx: PanelContext, id: string, problem?: string, status = 200): Promise<void> {
    const record = await this.controls.approvals.get(id);
    if (!record)
      return ctx.page(404, 'No such request', html`<p>There is no approval request at this address.</p>`);
    const me = personOf(ctx.session);
    const now = this.now();
    const state = stateAt(record, now);
    const refused = this.controls.approvals.checkReviewer(record, me, ctx.session.roles);
    const voted = record.votes.find((v) => samePerson(v.by, me));
    let form: Html | string = '';
    if (state === 'pending' && !voted && !refused)
      form = html`<form method="post" action="/mrtr/console/approvals/${id}" class="card">
<label for="reason">Reason <span class="muted">(kept with your decision; required)</span></label>
<textarea id="reason" name="reason" rows="3" maxlength="${MAX_REASON}" required></textarea>
<input type="hidden" name="csrf" value="${ctx.csrf}"><input type="hidden" name="effect" value="${record.effectDigest}"><input type="hidden" name="seen" value="${pageDigest(record)}">
<p class="actions"><button type="submit" name="decision" value="approve">Approve</button> <button type="submit" name="decision" value="deny" class="deny">Deny</button></p>
</form>`;
    const why = refused
      ? html`<p class="card" role="note">${refused.message}: you can read this request, not decide it.</p>`
      : voted
        ? html`<p class="card" role="note">You ${voted.decision === 'approve' ? 'approved' : 'denied'} this request.</p>`
        : '';
    ctx.page(
      status,
      state === 'pending' ? 'Review a request' : STATUS_TEXT[state]!,
      html`${problem ? html`<p class="card error" role="alert">${problem}</p>` : ''}${withdrawnNote(record, state, now)}${decisionCard(record)}<div id="votes-${id}" data-live="approvals">${votesList(record)}</div>${why}${form}
<p>Deep link: <code>${ctx.origin}/mrtr/console/approvals/${id}</code></p><p><a href="/mrtr/console/approvals">Back to the queue</a></p>`,
    );
  }

  private async decide(req: PageRequest, ctx: PanelContext, id: string): Promise<void> {
    const form = await readForm(req);
    if (!ctx.checkForm(form)) {
      ctx.page(
        403,
        'Decision refused',
        html`<p>This form did not come from your session’s console page. Nothing was recorded.</p><p><a href="/mrtr/console/approvals/${id}">Open the request</a></p>`,
      );
      return;
    }
    const decision = form.get('decision');
    const reason = (form.get('reason') ?? '').trim();
    if (decision !== 'approve' && decision !== 'deny')
      return this.one(ctx, id, 'Choose approve or deny. Nothing was recorded.', 400);
    if (reason === '' || reason.length > MAX_REASON)
      return this.one(
        ctx,
        id,
        `Give a reason (at most ${MAX_REASON} characters). Nothing was recorded.`,
        400,
      );
    const record = await this.controls.approvals.get(id);
    if (!record)
      return ctx.page(404, 'No such request', html`<p>There is no approval request at this address.</p>`);
    const me = personOf(ctx.session);
    const seen = form.get('seen') ?? '';
    const effect = form.get('effect') ?? '';
    try {
      // The card this person saw must be the request as it is now: a vote is for exactly what was shown.
      if (seen !== pageDigest(record) && effect === record.effectDigest)
        throw new ApprovalRefused(
          'conflict',
          'page_changed',
          'the request changed since you opened it: look again',
        );
      await this.controls.decisions.vote(
        id,
        me,
        ctx.session.roles,
        { decision, comment: reason, seen, effectDigest: effect },
        'console',
      );
    } catch (error) {
      if (!(error instanceof ApprovalRefused)) throw error;
      if (error.reason === 'page_changed') this.controls.decisions.refused(id, me, error, 'console');
      const status = error.kind === 'forbidden' ? 403 : error.kind === 'not_found' ? 404 : 409;
      return this.one(ctx, id, `${error.message}. Nothing was recorded.`, status);
    }
    ctx.seeOther(`/mrtr/console/approvals/${id}`);
  }
}
