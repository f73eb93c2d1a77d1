// The approvals pages and API on the server's listener:
//   GET  /mrtr/approvals            inbox (HTML for a signed-in browser; JSON with a bearer token)
//   GET  /mrtr/approvals/<id>       review page for a principal with the role (never the requester)
//   POST /mrtr/approvals/<id>       a vote: form from the review page, or JSON {decision, comment} with a bearer token
//   GET  /mrtr/approvals/<id>/status the requester's own status page (the URL-mode link; nobody else's)

import { AuthRefusal, type BearerAuth, type BrowserSignIn, type PageSession } from '../auth/index.js';
import { type Html, html, readForm, sendPage } from '../auth/internal.js';
import type { PageRequest, PageResponse } from '../protocol/index.js';
import {
  type ApprovalBook,
  type ApprovalRecord,
  ApprovalRefused,
  type Person,
  samePerson,
  stateAt,
} from './approval-book.js';
import type { ApprovalDecisions } from './approval-decisions.js';
import {
  ALL_ON_PAGE,
  apiSeenDigest,
  approvalSummary,
  decisionCard,
  pageDigest,
  STATUS_TEXT,
  votesList,
  withdrawnNote,
} from './approval-view.js';
import { type ControlEvent, pageFailed } from './context.js';
import { previewLines } from './effect-preview.js';
import { readJsonBody, seeOther, sendJson } from './http-bits.js';
import { answerPageFailure } from './page-failure.js';

export interface ApprovalPagesDeps {
  book: ApprovalBook;
  decisions: ApprovalDecisions;
  signIn: () => BrowserSignIn;
  bearerAuth: () => BearerAuth | undefined;
  onEvent: (event: ControlEvent) => void;
  now: () => number;
}

const ROUTE = /^\/mrtr\/approvals(?:\/([A-Za-z0-9_-]{1,64})(\/status)?)?$/;

const personOfSession = (s: PageSession): Person => ({
  subject: s.subject,
  issuer: s.issuer,
  ...(s.name === undefined ? {} : { name: s.name }),
});

export class ApprovalPages {
  constructor(private readonly d: ApprovalPagesDeps) {}

  handles(pathname: string): boolean {
    return ROUTE.test(pathname);
  }

  handle(req: PageRequest, res: PageResponse): void {
    this.route(req, res).catch((error: unknown) =>
      answerPageFailure(res, error, () => {
        const [, id] = ROUTE.exec(new URL(req.url ?? '/', 'http://x').pathname) ?? [];
        this.d.onEvent(pageFailed('approval', id, req, error, this.d.now()));
      }),
    );
  }

  private async route(req: PageRequest, res: PageResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const [, id, status] = ROUTE.exec(url.pathname) ?? [];
    const method = req.method ?? 'GET';
    const api = req.headers.authorization !== undefined;
    if (id === undefined) {
      if (method !== 'GET') return this.notAllowed(res, 'GET');
      return api ? this.apiList(req, res) : this.inbox(req, res);
    }
    if (status) {
      if (method !== 'GET') return this.notAllowed(res, 'GET');
      return this.statusPage(req, res, id);
    }
    if (method === 'GET') return this.reviewPage(req, res, id);
    if (method === 'POST') return api ? this.apiVote(req, res, id) : this.formVote(req, res, id);
    return this.notAllowed(res, 'GET, POST');
  }

  private notAllowed(res: PageResponse, allow: string): void {
    res.writeHead(405, { allow });
    res.end();
  }

  // --- the JSON API (bearer token) ---------------------------------------------------------------------------

  private async caller(req: PageRequest, res: PageResponse) {
    const auth = this.d.bearerAuth();
    if (!auth) {
      sendJson(res, 404, { error: 'not_found', message: 'this server has no bearer authentication' });
      return undefined;
    }
    try {
      return await auth.authenticate(req.rawHeaders, req.url ?? '/');
    } catch (error) {
      const refusal = error instanceof AuthRefusal ? error : undefined;
      sendJson(
        res,
        refusal?.status ?? 401,
        { error: refusal?.error ?? 'invalid_token', message: refusal?.message ?? 'Unauthorized' },
        { 'www-authenticate': auth.challenge(refusal) },
      );
      return undefined;
    }
  }

  private async apiList(req: PageRequest, res: PageResponse): Promise<void> {
    const who = await this.caller(req, res);
    if (!who) return;
    const me: Person = { subject: who.subject, issuer: who.issuer };
    const now = this.d.now();
    const mine = (await this.d.book.pending()).filter(
      (r) => !samePerson(r.requester, me) && who.roles.includes(r.role),
    );
    // Decided lately, as the console's history lists them: the same entries with the same fields and status words.
    const decided = (await this.d.book.decided()).filter(
      (r) => !samePerson(r.requester, me) && who.roles.includes(r.role),
    );
    const origin = this.d.signIn().origin;
    sendJson(res, 200, {
      approvals: mine.map((r) => approvalSummary(r, origin, now)),
      decided: decided.map((r) => approvalSummary(r, origin, now)),
    });
  }

  private async apiVote(req: PageRequest, res: PageResponse, id: string): Promise<void> {
    const who = await this.caller(req, res);
    if (!who) return;
    const body = await readJsonBody(req);
    const decision = body.decision;
    const comment = body.comment ?? '';
    if (
      (decision !== 'approve' && decision !== 'deny') ||
      typeof comment !== 'string' ||
      comment.length > 2000
    ) {
      sendJson(res, 400, {
        error: 'bad_request',
        message:
          'the body must be {"decision": "approve" | "deny", "comment": string (at most 2000 characters)}',
      });
      return;
    }
    if (body.effectDigest !== undefined && typeof body.effectDigest !== 'string') {
      sendJson(res, 400, { error: 'bad_request', message: 'effectDigest must be a string' });
      return;
    }
    const record = await this.d.book.get(id);
    if (!record) {
      sendJson(res, 404, { error: 'not_found', message: 'no such approval request' });
      return;
    }
    const me: Person = { subject: who.subject, issuer: who.issuer, ...(who.name ? { name: who.name } : {}) };
    try {
      const next = await this.d.decisions.vote(
        id,
        me,
        who.roles,
        {
          decision,
          comment,
          seen: apiSeenDigest(record),
          ...(typeof body.effectDigest === 'string' ? { effectDigest: body.effectDigest } : {}),
        },
        'api',
      );
      sendJson(res, 200, approvalSummary(next, this.d.signIn().origin, this.d.now()));
    } catch (error) {
      if (!(error instanceof ApprovalRefused)) throw error;
      const status = error.kind === 'forbidden' ? 403 : error.kind === 'not_found' ? 404 : 409;
      sendJson(res, status, { error: error.reason, message: error.message });
    }
  }

  // --- the pages (browser session) ---------------------------------------------------------------------------

  private session(req: PageRequest, res: PageResponse): PageSession | undefined {
    const signIn = this.d.signIn();
    const session = signIn.sessionOf(req);
    if (!session) seeOther(res, signIn.signInUrl(req.url ?? '/mrtr/approvals'));
    return session;
  }

  private async inbox(req: PageRequest, res: PageResponse): Promise<void> {
    const session = this.session(req, res);
    if (!session) return;
    const me = personOfSession(session);
    const pending = await this.d.book.pending();
    const toReview = pending.filter((r) => !samePerson(r.requester, me) && session.roles.includes(r.role));
    const own = pending.filter((r) => samePerson(r.requester, me));
    const item = (r: ApprovalRecord, href: string) =>
      html`<li class="card"><a href="${href}"><strong>${r.requester.name ?? r.requester.subject}</strong>: ${r.reason}</a>
        <div class="muted">${previewLines(r.effect, ALL_ON_PAGE).join(' · ')}</div></li>`;
    sendPage(
      res,
      200,
      'Approvals',
      html`<p>Signed in as <strong>${session.name ?? session.subject}</strong>${
        session.roles.length ? html` <span class="muted">(roles: ${session.roles.join(', ')})</span>` : ''
      }.</p>
      <h2>Waiting for your decision</h2>${
        toReview.length
          ? html`<ul class="list">${toReview.map((r) => item(r, `/mrtr/approvals/${r.id}`))}</ul>`
          : html`<p>Nothing waits for you.</p>`
      }${
        own.length
          ? html`<h2>Your own requests</h2><ul class="list">${own.map((r) => item(r, `/mrtr/approvals/${r.id}/status`))}</ul>`
          : ''
      }`,
    );
  }

  private notFound(res: PageResponse): void {
    sendPage(res, 404, 'No such request', html`<p>There is no approval request at this address.</p>`);
  }

  private async reviewPage(req: PageRequest, res: PageResponse, id: string): Promise<void> {
    const session = this.session(req, res);
    if (!session) return;
    const record = await this.d.book.get(id);
    if (!record) return this.notFound(res);
    const me = personOfSession(session);
    if (samePerson(record.requester, me)) return seeOther(res, `/mrtr/approvals/${id}/status`);
    const refused = this.d.book.checkReviewer(record, me, session.roles);
    if (refused) return this.refusedPage(res, refused, record);
    const state = stateAt(record, this.d.now());
    const voted = record.votes.find((v) => samePerson(v.by, me));
    let form: Html | string = '';
    if (state === 'pending' && !voted) {
      const csrf = this.d.signIn().csrfToken(session);
      form = html`<form method="post" action="/mrtr/approvals/${id}" class="card">
<label for="comment">Comment <span class="muted">(kept with your decision)</span></label>
<textarea id="comment" name="comment" rows="3" maxlength="2000"></textarea>
<input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="effect" value="${record.effectDigest}"><input type="hidden" name="seen" value="${pageDigest(record)}">
<p class="actions"><button type="submit" name="decision" value="approve">Approve</button> <button type="submit" name="decision" value="deny" class="deny">Deny</button></p>
</form>`;
    }
    sendPage(
      res,
      200,
      state === 'pending' ? (voted ? 'You have decided' : 'Review a request') : STATUS_TEXT[state]!,
      html`${withdrawnNote(record, state, this.d.now())}${decisionCard(record)}${votesList(record)}${form}<p><a href="/mrtr/approvals">Back to the inbox</a></p>`,
    );
  }

  private refusedPage(res: PageResponse, refused: ApprovalRefused, record?: ApprovalRecord): void {
    const title =
      refused.reason === 'self_approval'
        ? 'You cannot approve your own request'
        : refused.reason === 'missing_role'
          ? 'Not yours to review'
          : 'Not recorded';
    const status = refused.kind === 'forbidden' ? 403 : refused.kind === 'not_found' ? 404 : 409;
    sendPage(
      res,
      status,
      title,
      html`<p>${refused.message}. Nothing was recorded.</p>${
        record && refused.kind === 'conflict' ? votesList(record) : ''
      }<p><a href="/mrtr/approvals">Back to the inbox</a></p>`,
    );
  }

  private async formVote(req: PageRequest, res: PageResponse, id: string): Promise<void> {
    const signIn = this.d.signIn();
    const session = signIn.sessionOf(req);
    const form = await readForm(req);
    if (!session || !signIn.checkForm(req, session, form)) {
      sendPage(
        res,
        403,
        'Decision refused',
        html`<p>This form did not come from your session’s review page. Nothing was recorded.</p>
        <p><a href="/mrtr/approvals/${id}">Open the request</a></p>`,
      );
      return;
    }
    const me = personOfSession(session);
    const decision = form.get('decision');
    const comment = form.get('comment') ?? '';
    const effect = form.get('effect') ?? '';
    const seen = form.get('seen') ?? '';
    if ((decision !== 'approve' && decision !== 'deny') || comment.length > 2000) {
      sendPage(
        res,
        400,
        'Decision refused',
        html`<p>Choose approve or deny (a comment of at most 2000 characters).</p>`,
      );
      return;
    }
    const record = await this.d.book.get(id);
    if (!record) return this.notFound(res);
    // The page the reviewer saw must be this request's page as it is now: a vote is for exactly what was shown.
    if (seen !== pageDigest(record) && effect === record.effectDigest) {
      const stale = new ApprovalRefused(
        'conflict',
        'page_changed',
        'the request changed since you opened it: look again',
      );
      this.d.decisions.refused(id, me, stale, 'page');
      return this.refusedPage(res, stale, record);
    }
    try {
      await this.d.decisions.vote(
        id,
        me,
        session.roles,
        { decision, comment, seen, effectDigest: effect },
        'page',
      );
      seeOther(res, `/mrtr/approvals/${id}`);
    } catch (error) {
      if (!(error instanceof ApprovalRefused)) throw error;
      this.refusedPage(res, error, record);
    }
  }

  private async statusPage(req: PageRequest, res: PageResponse, id: string): Promise<void> {
    const signIn = this.d.signIn();
    const record = await this.d.book.get(id);
    if (!record) {
      if (this.session(req, res)) this.notFound(res);
      return;
    }
    // The URL-mode link belongs to the requester: anyone else who opens it is told so, and shown nothing of it.
    if (!signIn.requirePrincipal(req, res, record.requester)) return;
    const state = stateAt(record, this.d.now());
    sendPage(
      res,
      200,
      STATUS_TEXT[state]!,
      html`${withdrawnNote(record, state, this.d.now())}${votesList(record)}${decisionCard(record)}<p>${
        state === 'pending'
          ? 'Reviewers see this request in their inbox. Go back to your app and continue there: it asks for the decision again.'
          : 'Go back to your app and continue there.'
      }</p>`,
    );
  }
}
