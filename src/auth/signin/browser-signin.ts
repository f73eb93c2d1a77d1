// Browser sign-in for the server's own pages (`/mrtr/...`, on the MCP listener): a signed, HttpOnly, SameSite
// session cookie, CSRF-protected forms, and two ways in — OIDC against the issuer that mints the access tokens, and,
// on loopback only, development sign-in with the person's own development token (never a name picked from a list).
// Pages then ask "is the person who opened this the principal of flow X?" (requirePrincipal), the check URL-mode
// elicitation demands against phishing.
import { randomBytes } from 'node:crypto';
import { MrtrError, type PageRequest, type PageResponse } from '../../protocol/index.js';
import { macMatches } from '../../state/internal.js';
import type { DevTokens } from '../dev-tokens.js';
import { AuthRefusal } from '../errors.js';
import type { AuthPrincipal } from '../principal.js';
import { cookieName, readCookie, setCookie } from './cookies.js';
import { FormError, fromOurOrigin, readForm } from './form.js';
import { type Html, html, redirect, STYLESHEET_PATH, sendPage, sendStylesheet } from './html.js';
import { OidcSignIn, type OidcSignInOptions } from './oidc-client.js';
import {
  csrfTokenOf,
  type ExpectedPrincipal,
  isSamePrincipal,
  newSessionId,
  type PageSession,
  readSession,
} from './page-session.js';
import { SignedValues, type SigningKey } from './signed-value.js';
import { DEV_SIGNIN_LIMITS, WrongTokenCount } from './wrong-tokens.js';

export const SIGNIN_DEFAULTS = Object.freeze({
  /** A working day: a person who approves things signs in once in the morning, not every hour. */
  sessionTtlMs: 8 * 60 * 60 * 1000,
  /** Long enough to type a password and pass a second factor at the issuer. */
  signInTtlMs: 10 * 60 * 1000,
});

export interface BrowserSignInOptions {
  /** Keys the cookies are signed with, current first (McpServer derives them from its keyring). */
  keys: readonly SigningKey[];
  /** The server's public origin, e.g. `https://mcp.example.com`: the callback URL and the cookies' Secure flag follow. */
  origin: string;
  oidc?: OidcSignInOptions;
  /** Development sign-in with these tokens: offered only to requests from this machine. */
  devTokens?: DevTokens;
  sessionTtlMs?: number;
}

export class SignInConfigError extends MrtrError {
  override readonly name = 'SignInConfigError';
  declare readonly code: 'ERR_SIGNIN_CONFIG';
  constructor(message: string, options?: ErrorOptions) {
    super('ERR_SIGNIN_CONFIG', message, options);
  }
}

const isLoopbackAddress = (address: string | undefined): boolean =>
  address !== undefined &&
  (address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.'));

/** Only our own pages are a place to return to: no open redirect through the sign-in. */
function safeReturn(value: string | null | undefined): string {
  if (
    typeof value !== 'string' ||
    !value.startsWith('/mrtr/') ||
    value.startsWith('//') ||
    /[\\\s]/.test(value)
  )
    return '/mrtr/session';
  return value;
}

const sameText = (a: string, b: string): boolean => macMatches(Buffer.from(a), Buffer.from(b));

export class BrowserSignIn {
  readonly origin: string;
  private readonly secure: boolean;
  private readonly sessions: SignedValues;
  private readonly transactions: SignedValues;
  private readonly csrfKey: Uint8Array;
  private readonly oidc: OidcSignIn | undefined;
  private readonly sessionCookie: string;
  private readonly signInCookie: string;
  private readonly csrfCookie: string;
  private readonly wrongTokens = new WrongTokenCount();

  constructor(private readonly options: BrowserSignInOptions) {
    let origin: URL;
    try {
      origin = new URL(options.origin);
    } catch {
      throw new SignInConfigError(`BrowserSignIn: origin ${JSON.stringify(options.origin)} is not a URL`);
    }
    if (origin.origin !== options.origin.replace(/\/$/, ''))
      throw new SignInConfigError(
        `BrowserSignIn: origin must be scheme://host[:port] only, got ${options.origin}`,
      );
    if (!options.oidc && !options.devTokens)
      throw new SignInConfigError(
        'BrowserSignIn: give oidc, devTokens, or both: there is no way in otherwise',
      );
    if (!options.keys?.length) throw new SignInConfigError('BrowserSignIn: keys are required');
    this.origin = origin.origin;
    this.secure = origin.protocol === 'https:';
    this.sessions = new SignedValues(options.keys, 'mrtr/page-session');
    this.transactions = new SignedValues(options.keys, 'mrtr/sign-in');
    this.csrfKey = options.keys[0]!.key;
    this.oidc = options.oidc ? new OidcSignIn(options.oidc) : undefined;
    this.sessionCookie = cookieName('mrtr-session', this.secure);
    this.signInCookie = cookieName('mrtr-sign-in', this.secure);
    this.csrfCookie = cookieName('mrtr-csrf', this.secure);
  }

  /** The URL of the sign-in page, returning to `returnTo` (a `/mrtr/...` path) afterwards. */
  signInUrl(returnTo: string): string {
    return `${this.origin}/mrtr/signin?return=${encodeURIComponent(safeReturn(returnTo))}`;
  }

  /** The session a request carries, or undefined. */
  sessionOf(req: PageRequest): PageSession | undefined {
    return readSession(req, this.sessionCookie, this.sessions);
  }

  /**
   * The session of the person who opened this page, if they are `expected` (a flow's principal). Otherwise the
   * page is answered here — a redirect to sign in, or 403 naming who is signed in and that the link is someone
   * else's — and undefined is returned.
   */
  requirePrincipal(
    req: PageRequest,
    res: PageResponse,
    expected: ExpectedPrincipal,
  ): PageSession | undefined {
    const session = this.sessionOf(req);
    if (!session) {
      redirect(res, this.signInUrl(req.url ?? '/mrtr/session'));
      return undefined;
    }
    if (!isSamePrincipal(session, expected)) {
      sendPage(
        res,
        403,
        'This link is not yours',
        html`<p>You are signed in as <strong>${session.name ?? session.subject}</strong>, but this page belongs to
          another person's request. Nothing was done. If someone sent you this link, do not act on it for them.</p>
          ${this.signOutForm(session)}`,
      );
      return undefined;
    }
    return session;
  }

  /** The CSRF token a page's form must carry for this session (a hidden `csrf` field). */
  csrfToken(session: PageSession): string {
    return csrfTokenOf(session, this.csrfKey);
  }

  /** A POST from one of our pages, for this session: same origin and the session's CSRF token. */
  checkForm(req: PageRequest, session: PageSession, form: URLSearchParams): boolean {
    const token = form.get('csrf');
    return fromOurOrigin(req, this.origin) && token !== null && sameText(token, this.csrfToken(session));
  }

  /** Whether `pathname` is one of the sign-in routes. */
  handles(pathname: string): boolean {
    return (
      pathname === STYLESHEET_PATH ||
      /^\/mrtr\/(signin(\/oidc|\/dev)?|callback|signout|session)$/.test(pathname)
    );
  }

  /** Answer a sign-in route. Never throws: failures become a page. */
  handle(req: PageRequest, res: PageResponse): void {
    const url = new URL(req.url ?? '/', this.origin);
    this.route(req, res, url).catch((error: unknown) => {
      if (res.headersSent) return;
      const message =
        error instanceof FormError ? error.message : 'Sign-in failed. Try again from the start.';
      sendPage(
        res,
        400,
        'Sign-in failed',
        html`<p>${message}</p><p><a href="/mrtr/signin">Sign in again</a></p>`,
      );
    });
  }

  private async route(req: PageRequest, res: PageResponse, url: URL): Promise<void> {
    const method = req.method ?? 'GET';
    const route = `${method} ${url.pathname}`;
    switch (route) {
      case `GET ${STYLESHEET_PATH}`:
        return sendStylesheet(res);
      case 'GET /mrtr/signin':
        return this.signInPage(req, res, safeReturn(url.searchParams.get('return')));
      case 'GET /mrtr/signin/oidc':
        return this.startOidc(res, safeReturn(url.searchParams.get('return')));
      case 'GET /mrtr/callback':
        return this.finishOidc(req, res, url);
      case 'POST /mrtr/signin/dev':
        return this.devSignIn(req, res);
      case 'GET /mrtr/session':
        return this.sessionPage(req, res);
      case 'POST /mrtr/signout':
        return this.signOut(req, res);
      default:
        res.writeHead(405, { allow: url.pathname.startsWith('/mrtr/sign') ? 'GET, POST' : 'GET' });
        res.end();
    }
  }

  private devAllowed(req: PageRequest): boolean {
    return this.options.devTokens !== undefined && isLoopbackAddress(req.socket.remoteAddress);
  }

  private signInPage(req: PageRequest, res: PageResponse, returnTo: string): void {
    const parts: Html[] = [];
    if (this.oidc) {
      const host = new URL(this.oidc.options.issuer).host;
      parts.push(
        html`<div class="card"><p>Sign in with your account at <strong>${host}</strong>.</p>
          <a class="button" href="/mrtr/signin/oidc?return=${encodeURIComponent(returnTo)}">Sign in with ${host}</a></div>`,
      );
    }
    const cookies: string[] = [];
    if (this.devAllowed(req)) {
      const csrf = randomBytes(16).toString('base64url');
      cookies.push(
        setCookie(this.csrfCookie, csrf, { maxAge: 600, secure: this.secure, sameSite: 'Strict' }),
      );
      // A token, never a name to pick: only the person who holds it can be signed in as them.
      parts.push(
        html`<form class="card" method="post" action="/mrtr/signin/dev">
          <p><strong>Development sign-in</strong> <span class="muted">(this machine only)</span></p>
          <label for="token">Development token</label>
          <input id="token" name="token" type="password" required maxlength="${DEV_SIGNIN_LIMITS.maxTokenChars}" autocomplete="off" spellcheck="false">
          <p class="muted">Your own token from the server's tokens file. It signs you in as the person it belongs to.</p>
          <input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="return" value="${returnTo}">
          <button type="submit">Sign in</button></form>`,
      );
    }
    if (parts.length === 0) parts.push(html`<p>No way to sign in is offered to this address.</p>`);
    sendPage(res, 200, 'Sign in', html`${parts}`, cookies.length ? { 'set-cookie': cookies } : {});
  }

  private async startOidc(res: PageResponse, returnTo: string): Promise<void> {
    if (!this.oidc) {
      sendPage(res, 404, 'Not available', html`<p>This server offers no OpenID sign-in.</p>`);
      return;
    }
    const started = await this.oidc.start(`${this.origin}/mrtr/callback`);
    const ttl = SIGNIN_DEFAULTS.signInTtlMs;
    const transaction = this.transactions.sign(
      { verifier: started.verifier, state: started.state, nonce: started.nonce, return: returnTo },
      Date.now() + ttl,
    );
    // Lax: the issuer's redirect back is a cross-site top-level navigation, which Lax cookies accompany.
    redirect(res, started.url, [
      setCookie(this.signInCookie, transaction, { maxAge: ttl / 1000, secure: this.secure, sameSite: 'Lax' }),
    ]);
  }

  private async finishOidc(req: PageRequest, res: PageResponse, url: URL): Promise<void> {
    const transaction = this.transactions.open(readCookie(req.headers.cookie, this.signInCookie));
    if (!this.oidc || !transaction) {
      sendPage(
        res,
        400,
        'Sign-in expired',
        html`<p>This sign-in was not started here, or took too long.</p>
        <p><a href="/mrtr/signin">Sign in again</a></p>`,
      );
      return;
    }
    const person = await this.oidc.finish(url, {
      verifier: String(transaction.verifier),
      state: String(transaction.state),
      nonce: String(transaction.nonce),
    });
    this.startSession(res, { ...person, via: 'oidc' }, safeReturn(String(transaction.return)), [
      setCookie(this.signInCookie, '', { maxAge: 0, secure: this.secure, sameSite: 'Lax' }),
    ]);
  }

  private async devSignIn(req: PageRequest, res: PageResponse): Promise<void> {
    if (!this.devAllowed(req)) {
      sendPage(res, 403, 'Not available', html`<p>Development sign-in is offered only on this machine.</p>`);
      return;
    }
    const form = await readForm(req);
    const cookie = readCookie(req.headers.cookie, this.csrfCookie);
    const csrf = form.get('csrf');
    if (!fromOurOrigin(req, this.origin) || !cookie || !csrf || !sameText(cookie, csrf)) {
      sendPage(
        res,
        403,
        'Sign-in refused',
        html`<p>This form did not come from this server's sign-in page.</p>
        <p><a href="/mrtr/signin">Sign in again</a></p>`,
      );
      return;
    }
    const returnTo = safeReturn(form.get('return'));
    const principal = this.devPrincipal(res, form.get('token')?.trim() ?? '', returnTo);
    if (!principal) return;
    const person = {
      subject: principal.subject,
      issuer: principal.issuer,
      roles: [...principal.roles],
      ...(principal.name === undefined ? {} : { name: principal.name }),
    };
    this.startSession(res, { ...person, via: 'dev' }, returnTo, [
      setCookie(this.csrfCookie, '', { maxAge: 0, secure: this.secure, sameSite: 'Strict' }),
    ]);
  }

  /**
   * The person whose development token this is, or undefined once a refusal page is sent. The lookup is by the
   * token's SHA-256 (DevTokens.verify), so its timing says nothing of how close a guess was.
   */
  private devPrincipal(res: PageResponse, token: string, returnTo: string): AuthPrincipal | undefined {
    const again = html`<p><a href="/mrtr/signin?return=${encodeURIComponent(returnTo)}">Try again</a></p>`;
    const wait = this.wrongTokens.waitSeconds();
    if (wait > 0) {
      sendPage(
        res,
        429,
        'Sign-in refused',
        html`<p>Too many wrong development tokens. Try again in ${wait} seconds.</p>${again}`,
        { 'retry-after': String(wait) },
      );
      return undefined;
    }
    if (token === '') {
      sendPage(res, 400, 'Sign-in refused', html`<p>Enter your development token.</p>${again}`);
      return undefined;
    }
    if (token.length > DEV_SIGNIN_LIMITS.maxTokenChars) {
      this.wrongTokens.record();
      sendPage(
        res,
        400,
        'Sign-in refused',
        html`<p>A development token is at most ${DEV_SIGNIN_LIMITS.maxTokenChars} characters; this one is longer.</p>${again}`,
      );
      return undefined;
    }
    try {
      return this.options.devTokens!.verify(token);
    } catch (error) {
      if (!(error instanceof AuthRefusal)) throw error;
      this.wrongTokens.record();
      // The page never repeats the token: it is a secret, and a page may be kept in history or a screenshot.
      sendPage(
        res,
        401,
        'Sign-in refused',
        html`<p>That is not one of this server's development tokens. Check the token and try again.</p>${again}`,
      );
      return undefined;
    }
  }

  private startSession(
    res: PageResponse,
    person: { subject: string; issuer: string; name?: string; roles: string[]; via: 'oidc' | 'dev' },
    returnTo: string,
    cookies: string[],
  ): void {
    const ttl = this.options.sessionTtlMs ?? SIGNIN_DEFAULTS.sessionTtlMs;
    const value = this.sessions.sign(
      {
        sub: person.subject,
        iss: person.issuer,
        name: person.name,
        roles: person.roles,
        via: person.via,
        sid: newSessionId(),
      },
      Date.now() + ttl,
    );
    redirect(res, returnTo, [
      ...cookies,
      setCookie(this.sessionCookie, value, {
        maxAge: Math.floor(ttl / 1000),
        secure: this.secure,
        sameSite: 'Lax',
      }),
    ]);
  }

  private signOutForm(session: PageSession): Html {
    return html`<form method="post" action="/mrtr/signout"><input type="hidden" name="csrf" value="${this.csrfToken(session)}">
      <button type="submit" class="secondary">Sign out</button></form>`;
  }

  private sessionPage(req: PageRequest, res: PageResponse): void {
    const session = this.sessionOf(req);
    if (!session) {
      redirect(res, this.signInUrl('/mrtr/session'));
      return;
    }
    sendPage(
      res,
      200,
      'Signed in',
      html`<div class="card"><p>You are signed in as <strong>${session.name ?? session.subject}</strong>.</p>
        <p class="muted">Subject <code>${session.subject}</code> at <code>${session.issuer}</code>${
          session.roles.length ? html`; roles ${session.roles.join(', ')}` : ''
        }. Until ${new Date(session.expiresAt).toISOString()}.</p></div>${this.signOutForm(session)}`,
    );
  }

  private async signOut(req: PageRequest, res: PageResponse): Promise<void> {
    const session = this.sessionOf(req);
    const form = await readForm(req);
    if (!session || !this.checkForm(req, session, form)) {
      sendPage(res, 403, 'Sign-out refused', html`<p>This form did not come from your session's page.</p>`);
      return;
    }
    res.setHeader(
      'set-cookie',
      setCookie(this.sessionCookie, '', { maxAge: 0, secure: this.secure, sameSite: 'Lax' }),
    );
    sendPage(
      res,
      200,
      'Signed out',
      html`<p>You are signed out.</p><p><a href="/mrtr/signin">Sign in again</a></p>`,
    );
  }
}
