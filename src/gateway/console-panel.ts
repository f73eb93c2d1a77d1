// The gateway's panel of the operator's console, for admins: the upstreams and their health, the policy in force and
// its rules read as "who may call what", a what-if that asks the policy without calling anything, and the pinned tool
// definitions with the drift waiting for a decision (accept pins and serves the new definition; reject keeps it
// withheld, and says who looked).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Html, html } from '../auth/internal.js';
import type { ConsolePanel, PanelContext } from '../console/index.js';
import { isJsonObject, type JsonObject } from '../protocol/index.js';
import type { Gateway } from './gateway.js';
import type { Decision, PolicyRule } from './policy/index.js';

const when = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');

/** Where an upstream is, without anything that may be a secret: no user, password or query; a program's name only. */
function whereOf(spec: Gateway['config']['upstreams'][number]): string {
  if (spec.url !== undefined) {
    const u = new URL(spec.url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  }
  const [program, ...args] = spec.command ?? [];
  return `stdio: ${program?.split('/').pop() ?? '?'}${args.length ? ` (${args.length} argument${args.length === 1 ? '' : 's'})` : ''}`;
}

function whoOf(rule: PolicyRule): string {
  const parts: string[] = [];
  if (rule.roles?.length)
    parts.push(rule.roles.includes('*') ? 'anyone signed in' : `roles ${rule.roles.join(', ')}`);
  if (rule.subjects?.length) parts.push(`people ${rule.subjects.join(', ')}`);
  if (rule.scopes?.length) parts.push(`scopes ${rule.scopes.join(' + ')}`);
  return parts.join('; ') || (rule.deny ? 'everyone' : '—');
}

/** The rule's `when`, its `paths` and the tools it also holds above them for: what narrows it to some calls. */
function conditionOf(rule: PolicyRule) {
  const parts = [
    ...(rule.paths ? [html`paths <code>${rule.paths.join(' ')}</code>`] : []),
    ...(rule.descendingTools
      ? [html`and above them for <code>${rule.descendingTools.join(' ')}</code>`]
      : []),
    ...(rule.when ? [html`<code>${rule.when}</code>`] : []),
  ];
  return parts.length === 0 ? '—' : parts.map((part, i) => (i === 0 ? part : html`; ${part}`));
}

function controlsOf(rule: PolicyRule): string {
  const out = [...(rule.require ?? [])].map((c) =>
    c === 'approval' && rule.approval
      ? `approval by ${rule.approval.approvals ?? 1} × ${rule.approval.role}`
      : c.replace('_', '-'),
  );
  if (rule.rateLimit) out.push(`${rule.rateLimit.requests} per ${Math.round(rule.rateLimit.perMs / 1000)} s`);
  return out.join(', ') || '—';
}

export interface GatewayPanelOptions {
  /** Lines for the log: who accepted or rejected which definition. */
  log?: (line: string) => void;
  now?: () => number;
}

export class GatewayPanel implements ConsolePanel {
  readonly id = 'gateway';
  readonly title = 'Gateway';
  readonly roles = ['admin'] as const;
  /** Drift an admin rejected: still withheld, and who looked, by `<upstream>/<tool>@<seen digest>`. */
  private readonly rejected = new Map<string, { by: string; at: number }>();
  private readonly now: () => number;
  private readonly log: (line: string) => void;

  constructor(
    private readonly gateway: Gateway,
    options: GatewayPanelOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.log = options.log ?? (() => {});
  }

  async summary(): Promise<Html> {
    const drift = this.gateway.pins.drift().length;
    const down = this.gateway.catalog.health().filter((h) => h.failure).length;
    return html`${this.gateway.upstreams.length} upstream(s)${down ? html`, <strong>${down} failing</strong>` : ''}; policy ${this.gateway.policy.digest.slice(0, 12)}; ${
      drift
        ? html`<strong>${drift} changed definition(s)</strong> wait for a decision`
        : 'no changed definition'
    }.`;
  }

  async handle(req: IncomingMessage, _res: ServerResponse, ctx: PanelContext, rest: string): Promise<void> {
    if (rest === '' || rest === '/') {
      if (req.method !== 'GET') return ctx.notAllowed('GET');
      return this.show(ctx);
    }
    const action = /^\/pins\/(accept|reject)$/.exec(rest)?.[1];
    if (!action)
      return ctx.page(404, 'Not found', html`<p>The gateway panel has no page at this address.</p>`);
    const form = await ctx.postedForm('Use the buttons on the gateway page.', 'Nothing was changed.');
    if (!form) return;
    const upstream = form.get('upstream') ?? '';
    const tool = form.get('tool') ?? '';
    const seen = form.get('seen') ?? '';
    const drift = this.gateway.pins.drift().find((d) => d.upstream === upstream && d.tool === tool);
    // A decision is for the definition the admin was shown: one that changed again since must be looked at again.
    if (!drift || drift.seen !== seen)
      return this.show(
        ctx,
        'That definition is no longer the one waiting (it changed again, or was decided): look again.',
        409,
      );
    const who = ctx.session.subject;
    if (action === 'accept') {
      this.gateway.acceptDrift(upstream, tool);
      this.log(
        `console: ${who} accepted the changed definition of ${upstream}/${tool} (${seen.slice(0, 12)})`,
      );
    } else {
      this.rejected.set(`${upstream}/${tool}@${seen}`, { by: who, at: this.now() });
      this.log(
        `console: ${who} rejected the changed definition of ${upstream}/${tool} (${seen.slice(0, 12)}): still withheld`,
      );
    }
    ctx.seeOther('/mrtr/console/gateway');
  }

  private whatIf(ctx: PanelContext): { form: Html; result: Html | string; status: number } {
    const q = ctx.url.searchParams;
    const value = (k: string) => (q.get(k) ?? '').slice(0, 10_000);
    const form = html`<form method="get" action="/mrtr/console/gateway" class="card" aria-labelledby="whatif-h">
<h2 id="whatif-h">What if</h2>
<label for="wi-subject">Principal (subject)</label><input id="wi-subject" name="subject" value="${value('subject')}">
<label for="wi-roles">Roles <span class="muted">(separated by spaces)</span></label><input id="wi-roles" name="roles" value="${value('roles')}">
<label for="wi-scopes">Scopes <span class="muted">(separated by spaces)</span></label><input id="wi-scopes" name="scopes" value="${value('scopes')}">
<label for="wi-tool">Tool <span class="muted">(upstream__tool)</span></label><input id="wi-tool" name="tool" value="${value('tool')}">
<label for="wi-args">Arguments <span class="muted">(a JSON object)</span></label><textarea id="wi-args" name="args" rows="3">${value('args') || '{}'}</textarea>
<p><button type="submit">Ask the policy</button></p></form>`;
    if (!q.has('tool')) return { form, result: '', status: 200 };
    const problem = (text: string) => ({
      form,
      result: html`<p class="card error" role="alert">${text}</p>`,
      status: 400,
    });
    const subject = value('subject').trim();
    if (!subject) return problem('Give the principal’s subject.');
    let args: unknown;
    try {
      args = JSON.parse(value('args') || '{}');
    } catch {
      return problem('The arguments are not JSON.');
    }
    if (!isJsonObject(args)) return problem('The arguments must be a JSON object.');
    const split = (text: string) => text.split(/\s+/).filter((s) => s !== '');
    const decision = this.gateway.whatIf(
      { subject, roles: split(value('roles')), scopes: split(value('scopes')) },
      value('tool').trim(),
      args as JsonObject,
    );
    if (!decision) return problem(`No upstream serves ${value('tool')}: a tool is named upstream__tool.`);
    return { form, result: this.decisionCard(decision), status: 200 };
  }

  private decisionCard(d: Decision): Html {
    if (!d.allow)
      return html`<section class="card" role="status" id="whatif-result"><p><strong>Denied</strong>${d.rule ? html` by ${d.rule}` : ''}: ${d.message}</p>${
        d.detail ? html`<p class="muted">${d.detail}</p>` : ''
      }</section>`;
    const controls = d.require.map((c) =>
      c === 'approval' && d.approval
        ? `approval by ${d.approval.approvals} × ${d.approval.role}`
        : c.replace('_', '-'),
    );
    return html`<section class="card" role="status" id="whatif-result"><p><strong>Allowed</strong> by ${d.rules.join(', ')}.</p>
<p>${controls.length ? html`Before the call goes upstream: ${controls.join(', ')}.` : 'No control runs first.'}${
      d.rateLimits.length
        ? html` Rate limits: ${d.rateLimits.map((r) => `${r.requests} per ${Math.round(r.perMs / 1000)} s (${r.rule})`).join('; ')}.`
        : ''
    }</p><p class="muted">Asked without calling anything: no rate-limit token was used.</p></section>`;
  }

  private show(ctx: PanelContext, problem?: string, status = 200): void {
    const g = this.gateway;
    const health = new Map(g.catalog.health().map((h) => [h.upstream, h]));
    const upstreams = g.config.upstreams.map((spec) => {
      const h = health.get(spec.name);
      const state = h?.failure
        ? html`<strong class="risk-high">failing</strong>: ${h.failure.message.slice(0, 200)} (since ${when(h.failure.at)})`
        : h?.listedAt !== undefined
          ? 'answering'
          : 'not listed yet';
      return html`<tr><td>${spec.name}</td><td><code>${whereOf(spec)}</code></td><td>${state}</td><td>${h?.listedAt !== undefined ? when(h.listedAt) : '—'}</td><td>${h?.tools ?? 0}</td></tr>`;
    });
    const rules = g.config.rules.map(
      (r, i) =>
        html`<tr><td>${r.name ?? `rule ${i + 1}`}</td><td>${r.deny ? html`<strong>deny</strong>` : 'allow'}</td><td>${whoOf(r)}</td><td><code>${[...(r.tools ?? []), ...(r.prompts ?? []).map((p) => `prompt:${p}`), ...(r.resources ?? []).map((p) => `resource:${p}`)].join(' ')}</code></td><td>${conditionOf(r)}</td><td>${controlsOf(r)}</td></tr>`,
    );
    const drift = g.pins.drift().map((d) => {
      const rejected = this.rejected.get(`${d.upstream}/${d.tool}@${d.seen}`);
      const hidden = (name: string, value: string) =>
        html`<input type="hidden" name="${name}" value="${value}">`;
      const fields = html`${hidden('csrf', ctx.csrf)}${hidden('upstream', d.upstream)}${hidden('tool', d.tool)}${hidden('seen', d.seen)}`;
      return html`<li class="card" id="drift-${d.upstream}-${d.tool}"><h3>${d.upstream}/${d.tool}</h3>
<p class="muted">Pinned <code>${d.pinned.slice(0, 16)}</code>, now <code>${d.seen.slice(0, 16)}</code>: withheld from every caller until accepted.</p>
<ul>${d.changes.map((c) => html`<li><code>${c}</code></li>`)}</ul>${
        rejected
          ? html`<p role="note">Rejected by ${rejected.by} at ${when(rejected.at)}: it stays withheld.</p>`
          : ''
      }<div class="actions"><form method="post" action="/mrtr/console/gateway/pins/accept">${fields}<button type="submit">Accept and serve it</button></form>
<form method="post" action="/mrtr/console/gateway/pins/reject">${fields}<button type="submit" class="deny">Reject (keep it withheld)</button></form></div></li>`;
    });
    const pins = g.pins
      .pins()
      .map(
        (p) =>
          html`<tr><td>${p.upstream}/${p.tool}</td><td><code>${p.pin.digest.slice(0, 16)}</code></td><td>${p.pin.pinnedAt.replace('T', ' ').slice(0, 19)}</td></tr>`,
      );
    const whatIf = this.whatIf(ctx);
    ctx.page(
      problem ? status : whatIf.status,
      'Gateway',
      html`${problem ? html`<p class="card error" role="alert">${problem}</p>` : ''}
<section aria-labelledby="up-h"><h2 id="up-h">Upstreams</h2><div class="scroll"><table><thead><tr><th scope="col">Name</th><th scope="col">Where</th><th scope="col">Health</th><th scope="col">Last listed</th><th scope="col">Tools</th></tr></thead><tbody>${upstreams}</tbody></table></div></section>
<section aria-labelledby="policy-h"><h2 id="policy-h">Policy in force</h2><p>Version <code>${g.policy.digest}</code>, ${g.policy.ruleCount} rule(s), from <code>${g.config.file}</code>, loaded ${when(g.loadedAt)}. Deny by default; a deny rule wins.</p>
<h3>Who may call what</h3><div class="scroll"><table><thead><tr><th scope="col">Rule</th><th scope="col">Effect</th><th scope="col">Who</th><th scope="col">Tools</th><th scope="col">When</th><th scope="col">Controls first</th></tr></thead><tbody>${rules}</tbody></table></div></section>
${whatIf.form}${whatIf.result}
<section aria-labelledby="drift-h"><h2 id="drift-h">Changed tool definitions</h2>${drift.length ? html`<ul class="list">${drift}</ul>` : html`<p>No pinned tool has changed.</p>`}</section>
<section aria-labelledby="pins-h"><h2 id="pins-h">Pinned tool definitions</h2>${
        pins.length
          ? html`<div class="scroll"><table><thead><tr><th scope="col">Tool</th><th scope="col">Digest</th><th scope="col">Pinned (UTC)</th></tr></thead><tbody>${pins}</tbody></table></div>`
          : html`<p>Nothing pinned yet: tools are pinned when first listed.</p>`
      }</section>`,
    );
  }
}
