// /mrtr/passkeys: where a signed-in person sees, adds and removes their own passkeys (the console links here), and
// the script the passkey ceremonies run in the browser. Adding one is a WebAuthn registration bound to this session.

import type { BrowserSignIn, PageSession } from '../auth/index.js';
import { html, readForm, sendPage } from '../auth/internal.js';
import type { PageRequest, PageResponse } from '../protocol/index.js';
import type { Person } from './approval-book.js';
import { type ControlEvent, pageFailed } from './context.js';
import { readJsonBody, seeOther, sendJson } from './http-bits.js';
import { answerPageFailure } from './page-failure.js';
import type { PasskeyBook } from './passkey-book.js';
import { finishRegistration, type RelyingParty, registrationOptions } from './passkey-ceremony.js';
import { PASSKEY_SCRIPT, PASSKEY_SCRIPT_PATH } from './passkey-script.js';

export interface PasskeyPagesDeps {
  book: PasskeyBook;
  signIn: () => BrowserSignIn;
  onEvent: (event: ControlEvent) => void;
  now: () => number;
}

const ROUTE = /^\/mrtr\/passkeys(?:\/(options|register|remove))?$/;

export const relyingParty = (signIn: BrowserSignIn): RelyingParty => ({
  origin: signIn.origin,
  id: new URL(signIn.origin).hostname,
  name: 'mrtr',
});

export const personOfSession = (s: PageSession): Person => ({
  subject: s.subject,
  issuer: s.issuer,
  ...(s.name === undefined ? {} : { name: s.name }),
});

/** A JSON call from one of our pages: same origin, and the session's CSRF token in `x-mrtr-csrf`. */
export function fromOurPage(req: PageRequest, signIn: BrowserSignIn, session: PageSession): boolean {
  const token = req.headers['x-mrtr-csrf'];
  return typeof token === 'string' && signIn.checkForm(req, session, new URLSearchParams({ csrf: token }));
}

export class PasskeyPages {
  constructor(private readonly d: PasskeyPagesDeps) {}

  handles(pathname: string): boolean {
    return pathname === PASSKEY_SCRIPT_PATH || ROUTE.test(pathname);
  }

  handle(req: PageRequest, res: PageResponse): void {
    this.route(req, res).catch((error: unknown) =>
      answerPageFailure(res, error, () =>
        this.d.onEvent(pageFailed('step_up', 'passkeys', req, error, this.d.now())),
      ),
    );
  }

  private async route(req: PageRequest, res: PageResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === PASSKEY_SCRIPT_PATH) {
      res.writeHead(200, {
        'content-type': 'text/javascript; charset=utf-8',
        'cache-control': 'public, max-age=3600',
        'x-content-type-options': 'nosniff',
      });
      res.end(PASSKEY_SCRIPT);
      return;
    }
    const signIn = this.d.signIn();
    const session = signIn.sessionOf(req);
    const action = ROUTE.exec(url.pathname)?.[1];
    if (!session) {
      if (action) sendJson(res, 401, { error: 'not_signed_in', message: 'sign in first' });
      else seeOther(res, signIn.signInUrl('/mrtr/passkeys'));
      return;
    }
    const method = req.method ?? 'GET';
    if (action === undefined) {
      if (method !== 'GET') return notAllowed(res, 'GET');
      return this.page(res, signIn, session);
    }
    if (method !== 'POST') return notAllowed(res, 'POST');
    const who = { person: personOfSession(session), sid: session.sid };
    if (action === 'remove') {
      const form = await readForm(req);
      if (!signIn.checkForm(req, session, form)) {
        sendPage(
          res,
          403,
          'Refused',
          html`<p>This form did not come from your passkeys page. Nothing was removed.</p>`,
        );
        return;
      }
      const id = form.get('id') ?? '';
      await this.d.book.update(who.person, (keys) => keys.filter((k) => k.id !== id));
      this.event('passkey_removed', session.subject, { id });
      return seeOther(res, '/mrtr/passkeys');
    }
    if (!fromOurPage(req, signIn, session)) {
      sendJson(res, 403, {
        error: 'forbidden',
        message: 'this request did not come from your passkeys page',
      });
      return;
    }
    const rp = relyingParty(signIn);
    if (action === 'options') {
      sendJson(res, 200, await registrationOptions(this.d.book, rp, who));
      return;
    }
    const body = await readJsonBody(req);
    const label = typeof body.label === 'string' ? body.label.trim().slice(0, 60) : '';
    if (typeof body.handle !== 'string' || typeof body.response !== 'object' || body.response === null) {
      sendJson(res, 400, {
        error: 'bad_request',
        message: 'the body must be {"handle": string, "response": object}',
      });
      return;
    }
    const added = await finishRegistration(
      this.d.book,
      rp,
      who,
      body.handle,
      body.response as never,
      label || 'Passkey',
    );
    if (typeof added === 'string') {
      this.event('passkey_refused', session.subject, { reason: added });
      sendJson(res, added === 'too_many' ? 409 : 400, {
        error: added,
        message: `passkey not added: ${added.replace(/_/g, ' ')}`,
      });
      return;
    }
    this.event('passkey_added', session.subject, { id: added.id, label: added.label });
    sendJson(res, 200, { added: added.label, next: '/mrtr/passkeys' });
  }

  private async page(res: PageResponse, signIn: BrowserSignIn, session: PageSession): Promise<void> {
    const csrf = signIn.csrfToken(session);
    const keys = await this.d.book.list(session);
    const item = (k: (typeof keys)[number]) =>
      html`<li class="card"><strong>${k.label}</strong> <span class="muted">added ${new Date(k.createdAt).toISOString().slice(0, 10)}${
        k.lastUsedAt ? `, last used ${new Date(k.lastUsedAt).toISOString().slice(0, 10)}` : ''
      }</span>
<form method="post" action="/mrtr/passkeys/remove"><input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="id" value="${k.id}"><button type="submit" class="secondary">Remove</button></form></li>`;
    sendPage(
      res,
      200,
      'Your passkeys',
      html`<p>A passkey proves it is you when a request needs your second factor. It stays on your device: nothing secret reaches this server or your app.</p>
${keys.length ? html`<ul class="list" id="passkeys">${keys.map(item)}</ul>` : html`<p id="passkeys">You have no passkey yet.</p>`}
<section class="card" aria-labelledby="add-h"><h2 id="add-h">Add a passkey</h2>
<label for="passkey-label">Name it <span class="muted">(which device)</span></label><input id="passkey-label" maxlength="60" value="This device">
<p><button type="button" data-ceremony="register" data-options="/mrtr/passkeys/options" data-verify="/mrtr/passkeys/register" data-csrf="${csrf}">Add a passkey</button></p>
<p id="passkey-status" role="status"></p></section>
<p><a href="/mrtr/console">Back to the console</a></p>`,
      {},
      { scripts: [PASSKEY_SCRIPT_PATH] },
    );
  }

  private event(action: string, by: string, detail: Record<string, unknown>): void {
    this.d.onEvent({
      control: 'step_up',
      action,
      id: 'passkeys',
      by,
      at: new Date(this.d.now()).toISOString(),
      detail,
    });
  }
}

function notAllowed(res: PageResponse, allow: string): void {
  res.writeHead(405, { allow });
  res.end();
}
