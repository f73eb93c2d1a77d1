// The audit integrity panel: each writer's chain (events, head, how far signed checkpoints seal it, rounds with an
// intent and no outcome), the last signed checkpoint, a verification run from the page, and a bundle (events,
// checkpoints, verifier keys) that `mrtr audit verify --bundle FILE` checks offline on another machine.

import {
  type AuditReader,
  AuditVerifier,
  type StoredCheckpoint,
  type VerifyReport,
  verifyReader,
} from '../audit/index.js';
import { type Html, html } from '../auth/internal.js';
import type { PageRequest, PageResponse } from '../protocol/index.js';
import type { ConsolePanel, PanelContext } from './panel.js';

export interface AuditPanelOptions {
  reader: AuditReader;
  /**
   * Verifier keys (`name+id+base64`) whose signatures count: the server's own, and any the operator gives. Keys the
   * sink publishes are not trusted here — whoever can write the sink could replace them.
   */
  verifierKeys: readonly string[];
  /** Writes a verifiable bundle of the trail (the audit room's exporter). */
  bundle?: (reader: AuditReader) => Promise<unknown>;
  now?: () => number;
}

interface LastRun {
  at: number;
  by: string;
  /** What the verifier found; or why the trail could not be read as one (an edited table, a sink down). */
  outcome: { report: VerifyReport } | { failure: string };
}

/** Between two pages of events the serving thread answers whatever requests have come in. */
const letRequestsIn = () => new Promise<void>((resolve) => setImmediate(resolve));

export class AuditPanel implements ConsolePanel {
  readonly id = 'audit';
  readonly title = 'Audit integrity';
  readonly roles = ['auditor', 'admin'] as const;
  private readonly verifiers: AuditVerifier[];
  private last: LastRun | undefined;
  /** The verification under way, if any: one at a time, whoever asks. */
  private running: { by: string; at: number; done: Promise<void> } | undefined;
  private readonly now: () => number;

  constructor(private readonly options: AuditPanelOptions) {
    this.verifiers = options.verifierKeys.map((k) => AuditVerifier.parse(k));
    this.now = options.now ?? Date.now;
  }

  async summary(): Promise<Html | string> {
    if (!this.last) return 'Not verified from the console yet.';
    const ok = 'report' in this.last.outcome && this.last.outcome.report.ok;
    return html`Last verified ${new Date(this.last.at).toISOString()}: <strong>${ok ? 'intact' : 'NOT intact'}</strong>.`;
  }

  async handle(req: PageRequest, _res: PageResponse, ctx: PanelContext, rest: string): Promise<void> {
    if (rest === '' || rest === '/') {
      if (req.method !== 'GET') return ctx.notAllowed('GET');
      return this.show(ctx);
    }
    if (rest === '/verify') {
      const form = await ctx.postedForm('Use the button on the audit page.', 'Nothing was run.');
      if (!form) return;
      // A press while a run is under way waits for that run: the trail is read once, however many press.
      if (!this.running) {
        const by = ctx.session.subject;
        const done = this.verify(by).finally(() => {
          this.running = undefined;
        });
        this.running = { by, at: this.now(), done };
      }
      await this.running.done;
      return ctx.seeOther('/mrtr/console/audit');
    }
    if (rest === '/bundle') {
      if (req.method !== 'GET') return ctx.notAllowed('GET');
      if (!this.options.bundle)
        return ctx.page(404, 'No bundle', html`<p>This server cannot export bundles.</p>`);
      const bundle = await this.options.bundle(this.options.reader);
      const stamp = new Date(this.now()).toISOString().replace(/[:.]/g, '-');
      ctx.json(200, bundle, { 'content-disposition': `attachment; filename="mrtr-audit-${stamp}.json"` });
      return;
    }
    return ctx.page(404, 'Not found', html`<p>The audit panel has no page at this address.</p>`);
  }

  /**
   * Read and check the trail a page of events at a time, letting requests in between pages: the listener keeps
   * serving rounds however long the trail, and memory stays flat.
   */
  private async verify(by: string): Promise<void> {
    let outcome: LastRun['outcome'];
    try {
      outcome = {
        report: await verifyReader(this.options.reader, {
          verifiers: this.verifiers,
          betweenPages: letRequestsIn,
        }),
      };
    } catch (error) {
      outcome = { failure: (error as Error).message };
    }
    this.last = { at: this.now(), by, outcome };
  }

  private async show(ctx: PanelContext): Promise<void> {
    const checkpoints = await this.options.reader.checkpoints();
    const latest = new Map<string, StoredCheckpoint>();
    for (const c of checkpoints) if ((latest.get(c.instance)?.seq ?? -1) < c.seq) latest.set(c.instance, c);
    const run = this.last;
    const report = run && 'report' in run.outcome ? run.outcome.report : undefined;
    const failure = run && 'failure' in run.outcome ? run.outcome.failure : undefined;
    const verdict = failure
      ? html`<p class="card error" role="alert"><strong>NOT VERIFIED</strong>: the trail could not be read as one: ${failure} (run by ${run?.by} at ${new Date(run?.at ?? 0).toISOString()}).</p>`
      : report
        ? report.ok
          ? html`<p class="card" role="status"><strong>Intact</strong>: ${report.events} events in ${report.chains.length} chain(s), ${report.checkpoints} checkpoint(s) verified (run by ${run?.by} at ${new Date(run?.at ?? 0).toISOString()}).</p>`
          : html`<p class="card error" role="alert"><strong>${report.firstBad?.unknownKey ? 'UNVERIFIED' : 'TAMPERED'}</strong>: first bad event ${report.firstBad?.instance} #${report.firstBad?.seq}: ${report.firstBad?.problem} (run by ${run?.by} at ${new Date(run?.at ?? 0).toISOString()}).</p>`
        : html`<p>Not verified from the console yet.</p>`;
    const under = this.running
      ? html`<p class="card" role="status">Verification under way, started by ${this.running.by} at ${new Date(this.running.at).toISOString()}.</p>`
      : '';
    const chains = report
      ? html`<div class="scroll"><table><thead><tr><th scope="col">Writer</th><th scope="col">Events</th><th scope="col">Head</th><th scope="col">Sealed up to</th><th scope="col">Intent without outcome</th></tr></thead><tbody>${report.chains.map(
          (c) =>
            html`<tr><td>${c.instance}</td><td>${c.events}</td><td>#${c.headSeq}</td><td>#${c.sealedSeq}</td><td>${c.unfinished}</td></tr>`,
        )}</tbody></table></div>`
      : '';
    const notes = [...latest.values()].map(
      (c) =>
        html`<details class="card"><summary>${c.instance}: checkpoint at #${c.seq}</summary><pre>${c.note}</pre></details>`,
    );
    ctx.page(
      200,
      'Audit integrity',
      html`<section aria-labelledby="verify-h"><h2 id="verify-h">Verification</h2>${under}${verdict}${chains}
<form method="post" action="/mrtr/console/audit/verify"><input type="hidden" name="csrf" value="${ctx.csrf}"><button type="submit">Verify the whole trail now</button></form></section>
<section aria-labelledby="cp-h"><h2 id="cp-h">Last signed checkpoint per writer</h2>${notes.length ? notes : html`<p>No checkpoint yet.</p>`}</section>
<section aria-labelledby="keys-h"><h2 id="keys-h">Keys checkpoints are checked against</h2>${
        this.options.verifierKeys.length
          ? html`<ul>${this.options.verifierKeys.map((k) => html`<li><code>${k}</code></li>`)}</ul>`
          : html`<p>None given: every checkpoint reads as unverified.</p>`
      }</section>
${this.options.bundle ? html`<section aria-labelledby="bundle-h"><h2 id="bundle-h">Take it elsewhere</h2><p><a href="/mrtr/console/audit/bundle" download>Download a verifiable bundle</a> (events, checkpoints, verifier keys). Check it offline: <code>mrtr audit verify --bundle FILE --vkey KEY</code>.</p></section>` : ''}`,
    );
  }
}
