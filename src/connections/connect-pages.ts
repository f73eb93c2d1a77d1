// The connect pages. GET /mrtr/connect/<id> is the URL-mode question's link: the signed-in person must be the one the
// question was minted for; then the authorization request is kept server-side under its state and the browser goes
// to the third party. GET /mrtr/connect/callback/<connection> is each connection's own redirect URI: the request is
// taken once, its connection and person checked, the code traded, the grant put in the vault; the client never sees
// any of it. One URI per connection, so an answer one authorization server forwards through another (a mix-up) is
// told apart even when that server sends no `iss`.
import type { BrowserSignIn, PageSession } from '../auth/index.js';
import { html, sendPage } from '../auth/internal.js';
import { answerPageFailure, NO_SIGN_IN, seeOther } from '../controls/internal.js';
import type { PageRequest, PageResponse } from '../protocol/index.js';
import type { SharedStore } from '../stores/index.js';
import type { ConnectionEvent } from './connect-events.js';
import type { PendingAuthorizations } from './connect-pending.js';
import { type ConnectRecord, readConnect, settleConnect } from './connect-record.js';
import { ConnectionRefused } from './errors.js';
import type { AuthorizationFlow, ConnectionConfig, TokenVault } from './types.js';

export const CONNECT_CALLBACK_PATH = '/mrtr/connect/callback';
const ROUTE = /^\/mrtr\/connect\/(?:callback\/([a-z0-9][a-z0-9-]{0,31})|([A-Za-z0-9_-]{22}))$/;

/** The redirect URI of connection `name` on a server at `origin`: what its authorization server must know. */
export const connectRedirectUri = (origin: string, name: string): string =>
  `${origin}${CONNECT_CALLBACK_PATH}/${name}`;

export interface ConnectPagesDeps {
  store: SharedStore;
  vault: TokenVault;
  config: (name: string) => ConnectionConfig | undefined;
  flow: (name: string) => AuthorizationFlow;
  signIn: () => BrowserSignIn | undefined;
  /** The record is done or failed: wake the checks holding for it, here and on the fleet, and the 2025 clients. */
  settled: (record: ConnectRecord) => void;
  onEvent: (event: ConnectionEvent) => void;
  now: () => number;
  recordTtlMs: number;
  /** The authorization requests on their way, sealed. */
  pending: PendingAuthorizations;
}

/** How a refusal reads to the person, by reason. */
const REFUSED: Record<ConnectionRefused['reason'], { status: number; text: string }> = {
  denied: { status: 403, text: 'did not allow access' },
  mismatch: { status: 400, text: 'sent back an answer that does not match the request (possibly an attack)' },
  invalid_grant: { status: 400, text: 'did not accept the authorization code' },
  unavailable: { status: 502, text: 'could not be reached or did not answer properly' },
};

export class ConnectPages {
  constructor(private readonly d: ConnectPagesDeps) {}

  handles(pathname: string): boolean {
    return ROUTE.test(pathname);
  }

  handle(req: PageRequest, res: PageResponse): void {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const [, callbackOf, id] = ROUTE.exec(path) ?? [];
    this.route(req, res, id ?? '', callbackOf).catch((error: unknown) =>
      answerPageFailure(
        res,
        error,
        () =>
          this.event('page_failed', '-', undefined, undefined, {
            method: req.method ?? 'GET',
            error: String(error),
          }),
        'Nothing was connected.',
      ),
    );
  }

  private async route(
    req: PageRequest,
    res: PageResponse,
    id: string,
    callbackOf: string | undefined,
  ): Promise<void> {
    if ((req.method ?? 'GET') !== 'GET') {
      res.writeHead(405, { allow: 'GET' });
      res.end();
      return;
    }
    const signIn = this.d.signIn();
    if (!signIn) return sendPage(res, 404, 'No sign-in on this server', NO_SIGN_IN);
    if (callbackOf !== undefined) return this.callback(req, res, signIn, callbackOf);
    const record = await readConnect(this.d.store, id);
    if (!record) {
      if (!signIn.sessionOf(req)) return seeOther(res, signIn.signInUrl(req.url ?? '/mrtr/session'));
      return sendPage(
        res,
        404,
        'Link expired',
        html`<p>This connect link is unknown or expired. Retry the call in your app for a new one.</p>`,
      );
    }
    const session = this.owner(req, res, signIn, record);
    if (!session) return;
    const label = this.label(record.connection);
    if (record.state === 'done') return this.connectedPage(res, label);
    if (record.state === 'failed') return this.refusedPage(res, label, record.reason ?? 'denied');
    const redirectUri = connectRedirectUri(signIn.origin, record.connection);
    let url: URL;
    try {
      const started = await this.d.flow(record.connection).start(redirectUri);
      await this.d.pending.keep(record.owner, record.connection, { id: record.id, pending: started.pending });
      url = started.url;
    } catch (error) {
      // Discovery failed (the third party out of reach, or not usable): the call that asked ends with why, rather
      // than holding for a person who cannot go on, and asking again.
      const refused =
        error instanceof ConnectionRefused
          ? error
          : new ConnectionRefused('unavailable', 'this server could not start the authorization request');
      await this.fail(record, session, refused);
      if (error instanceof ConnectionRefused) return this.refusedPage(res, label, error.reason);
      throw error;
    }
    seeOther(res, url.href);
  }

  private async callback(
    req: PageRequest,
    res: PageResponse,
    signIn: BrowserSignIn,
    cameTo: string,
  ): Promise<void> {
    const callback = new URL(req.url ?? '/', signIn.origin);
    const state = callback.searchParams.get('state');
    if (!state) return this.unknownAnswer(res);
    // Signed in first, before the request is taken: a person whose session lapsed at the third party comes back here.
    if (!signIn.sessionOf(req))
      return seeOther(res, signIn.signInUrl(`${callback.pathname}${callback.search}`));
    const onItsWay = await this.d.pending.take(state);
    if (!onItsWay) return this.unknownAnswer(res);
    const record = await readConnect(this.d.store, onItsWay.id);
    if (!record) return this.unknownAnswer(res);
    const session = this.owner(req, res, signIn, record);
    if (!session) return;
    const label = this.label(record.connection);
    // Another connection's redirect URI: its authorization server sent back the answer to ours (a mix-up). The code
    // goes to no token endpoint, and the call ends: one of the two servers is hostile or broken.
    if (cameTo !== record.connection) {
      await this.fail(record, session, new ConnectionRefused('mismatch', mixUp(record.connection, cameTo)));
      return this.mixUpPage(res, label, this.label(cameTo));
    }
    let grant: Awaited<ReturnType<AuthorizationFlow['finish']>>;
    try {
      grant = await this.d.flow(record.connection).finish(callback, onItsWay.pending);
    } catch (error) {
      if (!(error instanceof ConnectionRefused)) throw error;
      await this.fail(record, session, error);
      return this.refusedPage(res, label, error.reason);
    }
    await this.d.vault.put(record.owner, record.connection, grant);
    const done = { state: 'done', settledAt: this.d.now() } as const;
    await settleConnect(this.d.store, record.id, done, this.d.recordTtlMs);
    this.event('connected', record.connection, record.id, session, {
      issuer: grant.issuer,
      scopes: grant.scopes,
    });
    this.d.settled({ ...record, ...done });
    this.connectedPage(res, label);
  }

  /** The authorization server gave no token (or its answer failed a check): the call that asked ends with why. */
  private async fail(record: ConnectRecord, session: PageSession, error: ConnectionRefused): Promise<void> {
    const failed = {
      state: 'failed',
      reason: error.reason,
      message: error.message,
      settledAt: this.d.now(),
    } as const;
    await settleConnect(this.d.store, record.id, failed, this.d.recordTtlMs);
    this.event('refused', record.connection, record.id, session, { reason: error.reason });
    this.d.settled({ ...record, ...failed });
  }

  /** The signed-in person, if they are the record's owner; else the page is answered (sign in, or 403). */
  private owner(
    req: PageRequest,
    res: PageResponse,
    signIn: BrowserSignIn,
    record: ConnectRecord,
  ): PageSession | undefined {
    const session = signIn.requirePrincipal(req, res, record.owner);
    const someone = session ? undefined : signIn.sessionOf(req);
    if (someone) this.event('wrong_person', record.connection, record.id, someone);
    return session;
  }

  private label(name: string): string {
    return this.d.config(name)?.label ?? name;
  }

  private unknownAnswer(res: PageResponse): void {
    sendPage(
      res,
      400,
      'Not a request we made',
      html`<p>This answer from the other service is unknown, expired, or was already used. Nothing was connected. Retry the call in your app for a new link.</p>`,
    );
  }

  private mixUpPage(res: PageResponse, label: string, other: string): void {
    sendPage(
      res,
      400,
      'Not connected',
      html`<p>This answer came back to the ${other} address, but the request was for your ${label} account. One of the two services may be trying an attack. Nothing was connected, and the answer was sent nowhere. Go back to your app: the call ends there with this reason.</p>`,
    );
  }

  private connectedPage(res: PageResponse, label: string): void {
    sendPage(
      res,
      200,
      'Connected',
      html`<p>Your ${label} account is connected. Go back to your app and continue.</p>
<p class="muted">Its tokens stay on this server: your app never sees them. You can disconnect it on <a href="/mrtr/connections">your connections page</a>.</p>`,
    );
  }

  private refusedPage(res: PageResponse, label: string, reason: ConnectionRefused['reason']): void {
    const { status, text } = REFUSED[reason];
    sendPage(
      res,
      status,
      'Not connected',
      html`<p>The ${label} sign-in ${text}. Nothing was connected. Go back to your app: the call ends there with this reason.</p>`,
    );
  }

  private event(
    action: ConnectionEvent['action'],
    connection: string,
    id: string | undefined,
    by: { readonly issuer: string; readonly subject: string } | undefined,
    detail?: Record<string, unknown>,
  ): void {
    this.d.onEvent({
      connection,
      action,
      ...(id === undefined ? {} : { id }),
      ...(by === undefined ? {} : { by: by.subject, byIssuer: by.issuer }),
      at: new Date(this.d.now()).toISOString(),
      ...(detail ? { detail } : {}),
    });
  }
}

const mixUp = (asked: string, cameTo: string) =>
  `the answer to a request for connection "${asked}" came back on the redirect URI of "${cameTo}" (an authorization server mix-up): not used`;
