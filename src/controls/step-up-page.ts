// The step-up page: GET /mrtr/step-up/<id> shows the code form to the flow's own principal (anyone else is told the
// link is not theirs); POST checks the code and marks the step-up done in the shared store.
import type { BrowserSignIn, PageSession } from '../auth/index.js';
import { html, readForm, sendPage } from '../auth/internal.js';
import { type PageRequest, type PageResponse, StoreContendedError } from '../protocol/index.js';
import type { SharedStore } from '../stores/index.js';
import { type ControlEvent, pageFailed } from './context.js';
import { readJsonBody, sendJson } from './http-bits.js';
import { answerPageFailure } from './page-failure.js';
import type { PasskeyBook } from './passkey-book.js';
import { authenticationOptions, finishAuthentication } from './passkey-ceremony.js';
import { fromOurPage, relyingParty } from './passkey-pages.js';
import { PASSKEY_SCRIPT_PATH } from './passkey-script.js';
import { readStepUp, type StepUpRecord, stepUpKey } from './step-up.js';
import type { TotpCheck } from './totp-check.js';

export interface StepUpPageDeps {
  store: SharedStore;
  /** People's passkeys: the page offers one when the principal has any (TOTP stays the fallback). */
  passkeys?: PasskeyBook | undefined;
  totp: () => TotpCheck | undefined;
  signIn: () => BrowserSignIn;
  onEvent: (event: ControlEvent) => void;
  now: () => number;
  ttlMs: number;
}

const ROUTE = /^\/mrtr\/step-up\/([A-Za-z0-9_-]{1,64})(\/passkey(?:\/options)?)?$/;

const REASONS: Record<string, string> = {
  wrong_code: 'That code is not right. Check the time on your phone and try the current code.',
  code_reused: 'That code was already used. Wait for the next one.',
  malformed: 'A code is six digits.',
};

export class StepUpPage {
  constructor(private readonly d: StepUpPageDeps) {}

  handles(pathname: string): boolean {
    return ROUTE.test(pathname);
  }

  handle(req: PageRequest, res: PageResponse): void {
    this.route(req, res).catch((error: unknown) =>
      answerPageFailure(res, error, () => {
        const id = ROUTE.exec(new URL(req.url ?? '/', 'http://x').pathname)?.[1];
        this.d.onEvent(pageFailed('step_up', id, req, error, this.d.now()));
      }),
    );
  }

  private async route(req: PageRequest, res: PageResponse): Promise<void> {
    const [, id = '', passkeyRoute] = ROUTE.exec(new URL(req.url ?? '/', 'http://x').pathname) ?? [];
    const method = req.method ?? 'GET';
    if (passkeyRoute && method !== 'POST') {
      res.writeHead(405, { allow: 'POST' });
      res.end();
      return;
    }
    if (method !== 'GET' && method !== 'POST') {
      res.writeHead(405, { allow: 'GET, POST' });
      res.end();
      return;
    }
    const signIn = this.d.signIn();
    const record = await readStepUp(this.d.store, id);
    if (!record) {
      if (!signIn.sessionOf(req)) {
        res.writeHead(303, { location: signIn.signInUrl(req.url ?? '/mrtr/session') });
        res.end();
        return;
      }
      sendPage(
        res,
        404,
        'Link expired',
        html`<p>This step-up link is unknown or expired. Retry the call in your app for a new one.</p>`,
      );
      return;
    }
    const session = signIn.requirePrincipal(req, res, record.person);
    if (!session) {
      if (signIn.sessionOf(req)) this.event('wrong_person', id, signIn.sessionOf(req)!.subject);
      return;
    }
    if (passkeyRoute) return this.passkey(req, res, record, session, passkeyRoute.endsWith('/options'));
    if (record.state === 'done') return this.donePage(res);
    const totp = this.d.totp();
    const passkeys = (await this.d.passkeys?.list(record.person))?.length ?? 0;
    const hasTotp = totp !== undefined && (await totp.enrolled(record.person.subject));
    if (!hasTotp && passkeys === 0) {
      sendPage(
        res,
        409,
        'No second factor enrolled',
        html`<p>There is no second factor enrolled for <strong>${record.person.subject}</strong>. Add a passkey at <a href="/mrtr/passkeys">your passkeys page</a>, or an administrator enrols an authenticator app with <code>mrtr users totp ${record.person.subject}</code>.</p>`,
      );
      return;
    }
    const offer = { totp: hasTotp, passkeys: passkeys > 0 };
    if (method === 'GET' || !totp || !hasTotp)
      return this.formPage(res, record, signIn.csrfToken(session), offer);
    const form = await readForm(req);
    if (!signIn.checkForm(req, session, form)) {
      this.event('csrf_refused', id, session.subject);
      sendPage(
        res,
        403,
        'Refused',
        html`<p>This form did not come from your step-up page. Nothing was checked.</p>`,
      );
      return;
    }
    const result = await totp.check(record.person.subject, (form.get('code') ?? '').trim());
    if (!result.ok) {
      this.event('code_refused', id, session.subject, { reason: result.reason });
      if (result.reason === 'locked') {
        const seconds = Math.ceil((result.retryAfterMs ?? 0) / 1000);
        sendPage(
          res,
          429,
          'Too many wrong codes',
          html`<p>Your second factor is locked for ${seconds} seconds after too many wrong codes. Try again later.</p>`,
          { 'retry-after': String(seconds) },
        );
        return;
      }
      return this.formPage(
        res,
        record,
        signIn.csrfToken(session),
        offer,
        REASONS[result.reason] ?? 'Not accepted.',
        400,
      );
    }
    await this.markDone(record);
    this.event('done', id, session.subject);
    this.donePage(res);
  }

  private async markDone(record: StepUpRecord): Promise<void> {
    for (let i = 0; i < 10; i++) {
      const entry = await this.d.store.get(stepUpKey(record.id));
      if (!entry) break;
      const current = JSON.parse(entry.value) as StepUpRecord;
      if (current.state === 'done') return;
      const done: StepUpRecord = { ...current, state: 'done', doneAt: this.d.now() };
      if (await this.d.store.replace(stepUpKey(record.id), entry.version, JSON.stringify(done), this.d.ttlMs))
        return;
    }
    throw new StoreContendedError('step-up record could not be marked done');
  }

  private event(action: string, id: string, by: string, detail?: Record<string, unknown>): void {
    this.d.onEvent({
      control: 'step_up',
      action,
      id,
      by,
      at: new Date(this.d.now()).toISOString(),
      ...(detail ? { detail } : {}),
    });
  }

  private formPage(
    res: PageResponse,
    record: StepUpRecord,
    csrf: string,
    offer: { totp: boolean; passkeys: boolean },
    problem?: string,
    status = 200,
  ): void {
    const path = `/mrtr/step-up/${record.id}`;
    sendPage(
      res,
      status,
      'Confirm it is you',
      html`<section class="card"><p><strong>${record.person.name ?? record.person.subject}</strong>, a request you made needs your second factor:</p>
<p>${record.reason}</p></section>
${problem ? html`<p class="card error" role="alert">${problem}</p>` : ''}${
  offer.passkeys
    ? html`<section class="card" aria-labelledby="pk-h"><h2 id="pk-h">With your passkey</h2>
<p><button type="button" data-ceremony="authenticate" data-options="${path}/passkey/options" data-verify="${path}/passkey" data-csrf="${csrf}">Use a passkey</button></p>
<p id="passkey-status" role="status"></p></section>`
    : ''
}${
  offer.totp
    ? html`<form method="post" class="card"><label for="code">${offer.passkeys ? 'Or a code' : 'Code'} from your authenticator app</label>
<input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required${offer.passkeys ? '' : html` autofocus`}>
<input type="hidden" name="csrf" value="${csrf}"><p><button type="submit">Confirm</button></p></form>`
    : ''
}
<p class="muted">Checked here, on this server: nothing of it passes through your app.</p>`,
      {},
      offer.passkeys ? { scripts: [PASSKEY_SCRIPT_PATH] } : {},
    );
  }

  /** The passkey ceremony's two calls from the page's script: its options, then the authenticator's answer. */
  private async passkey(
    req: PageRequest,
    res: PageResponse,
    record: StepUpRecord,
    session: PageSession,
    options: boolean,
  ): Promise<void> {
    const signIn = this.d.signIn();
    const book = this.d.passkeys;
    const next = `/mrtr/step-up/${record.id}`;
    if (!book) return sendJson(res, 404, { error: 'not_found', message: 'this server takes no passkeys' });
    if (!fromOurPage(req, signIn, session)) {
      this.event('csrf_refused', record.id, session.subject);
      return sendJson(res, 403, {
        error: 'forbidden',
        message: 'this request did not come from your step-up page',
      });
    }
    if (record.state === 'done') return sendJson(res, 200, { done: true, next });
    const who = { person: record.person, sid: session.sid };
    const rp = relyingParty(signIn);
    if (options) {
      const started = await authenticationOptions(book, rp, who, record.id);
      if (!started)
        return sendJson(res, 409, { error: 'no_passkey', message: 'you have no passkey: add one first' });
      return sendJson(res, 200, started);
    }
    const body = await readJsonBody(req);
    if (typeof body.handle !== 'string' || typeof body.response !== 'object' || body.response === null)
      return sendJson(res, 400, {
        error: 'bad_request',
        message: 'the body must be {"handle": string, "response": object}',
      });
    const proved = await finishAuthentication(book, rp, who, record.id, body.handle, body.response as never);
    if (proved !== true) {
      this.event('passkey_refused', record.id, session.subject, { reason: proved });
      return sendJson(res, 403, { error: proved, message: `not confirmed: ${proved.replace(/_/g, ' ')}` });
    }
    await this.markDone(record);
    this.event('done', record.id, session.subject, { method: 'passkey' });
    sendJson(res, 200, { done: true, next });
  }

  private donePage(res: PageResponse): void {
    sendPage(
      res,
      200,
      'Confirmed',
      html`<p>Your second factor is confirmed. Go back to your app and retry the call.</p>`,
    );
  }
}
