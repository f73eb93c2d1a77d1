// The gateway demo's stand-in for a third party's authorization server: just enough OAuth 2.1 for a person to
// connect their "tracker" account — authorization code with PKCE (S256), the `iss` response parameter (RFC 9207),
// refresh tokens that rotate, revocation. Tokens are opaque and live in this process. For the demo only: it asks
// for no password (the page offers the demo's people by name) and keeps nothing when it stops.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { escapeHtml, readForm } from '../../auth/internal.js';
import type { PageRequest, PageResponse } from '../../protocol/index.js';

const CODE_TTL_MS = 60_000;
const ACCESS_TTL_S = 600;

export interface DemoClient {
  readonly id: string;
  readonly redirectUris: readonly string[];
}

interface Grant {
  readonly user: string;
  readonly client: string;
  readonly scope: string;
}

interface PendingCode extends Grant {
  readonly redirectUri: string;
  readonly challenge: string;
  readonly expiresAt: number;
}

const newToken = () => randomBytes(32).toString('base64url');
const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');
const sameText = (a: string, b: string) =>
  a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

export class DemoAuthorizationServer {
  readonly #codes = new Map<string, PendingCode>();
  readonly #access = new Map<string, Grant & { expiresAt: number }>();
  readonly #refresh = new Map<string, Grant>();
  /** Authorization requests shown to a person, by the id their page's form posts back. */
  readonly #shown = new Map<string, Omit<PendingCode, 'user'> & { state: string }>();

  constructor(
    readonly issuer: string,
    private readonly clients: readonly DemoClient[],
    private readonly people: readonly string[],
    private readonly now: () => number = Date.now,
  ) {}

  /** The person an access token was issued to, with its scopes; undefined for an unknown or expired token. */
  holderOf(token: string): { user: string; scopes: string[]; expiresAt: number } | undefined {
    const grant = this.#access.get(token);
    if (!grant || grant.expiresAt <= this.now()) return undefined;
    return { user: grant.user, scopes: grant.scope.split(' ').filter(Boolean), expiresAt: grant.expiresAt };
  }

  handles(pathname: string): boolean {
    return ['/.well-known/oauth-authorization-server', '/authorize', '/token', '/revoke'].includes(pathname);
  }

  handle(req: PageRequest, res: PageResponse): void {
    const url = new URL(req.url ?? '/', this.issuer);
    const route = `${req.method ?? 'GET'} ${url.pathname}`;
    const done = (promise: Promise<void>) =>
      promise.catch(() =>
        json(res, 400, { error: 'invalid_request', error_description: 'unreadable request' }),
      );
    if (route === 'GET /.well-known/oauth-authorization-server') json(res, 200, this.#metadata());
    else if (route === 'GET /authorize') this.#show(url.searchParams, res);
    else if (route === 'POST /authorize') done(readForm(req).then((f) => this.#decide(f, res)));
    else if (route === 'POST /token') done(readForm(req).then((f) => this.#token(f, res)));
    else if (route === 'POST /revoke') done(readForm(req).then((f) => this.#revoke(f, res)));
    else {
      res.writeHead(405, { allow: url.pathname === '/authorize' ? 'GET, POST' : 'POST' });
      res.end();
    }
  }

  #metadata() {
    return {
      issuer: this.issuer,
      authorization_endpoint: `${this.issuer}/authorize`,
      token_endpoint: `${this.issuer}/token`,
      revocation_endpoint: `${this.issuer}/revoke`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      authorization_response_iss_parameter_supported: true,
      scopes_supported: ['tickets:read', 'tickets:write'],
    };
  }

  /** The consent page. A bad client or redirect URI is shown, never redirected to (no open redirect). */
  #show(q: URLSearchParams, res: PageResponse): undefined {
    const client = this.clients.find((c) => c.id === q.get('client_id'));
    const redirectUri = q.get('redirect_uri') ?? '';
    if (!client?.redirectUris.includes(redirectUri))
      return page(
        res,
        400,
        'Unknown client or redirect URI',
        '<p>This request did not come from a registered client.</p>',
      );
    const state = q.get('state') ?? '';
    const challenge = q.get('code_challenge') ?? '';
    if (
      q.get('response_type') !== 'code' ||
      q.get('code_challenge_method') !== 'S256' ||
      !challenge ||
      !state
    )
      return redirect(res, redirectUri, { error: 'invalid_request', state, iss: this.issuer });
    const id = newToken();
    const scope = q.get('scope') ?? 'tickets:read';
    this.#shown.set(id, {
      client: client.id,
      redirectUri,
      challenge,
      scope,
      state,
      expiresAt: this.now() + 300_000,
    });
    const buttons = this.people
      .map((p) => `<button name="user" value="${escapeHtml(p)}">Allow as ${escapeHtml(p)}</button> `)
      .join('');
    page(
      res,
      200,
      'Tracker (demo): connect your account',
      `<p><b>${escapeHtml(client.id)}</b> asks to use your tracker account: <code>${escapeHtml(scope)}</code>.</p>
<p>A real tracker would ask for your password here. The demo lets you pick who you are.</p>
<form method="post" action="/authorize"><input type="hidden" name="request" value="${id}">${buttons}
<button name="user" value="">Deny</button></form>`,
      new URL(redirectUri).origin,
    );
  }

  #decide(f: URLSearchParams, res: PageResponse): undefined {
    const id = f.get('request') ?? '';
    const shown = this.#shown.get(id);
    this.#shown.delete(id);
    if (!shown || shown.expiresAt <= this.now())
      return page(res, 400, 'Request expired', '<p>Go back to your app and try again.</p>');
    const user = f.get('user') ?? '';
    if (!this.people.includes(user))
      return redirect(res, shown.redirectUri, {
        error: 'access_denied',
        state: shown.state,
        iss: this.issuer,
      });
    const code = newToken();
    this.#codes.set(code, { ...shown, user, expiresAt: this.now() + CODE_TTL_MS });
    redirect(res, shown.redirectUri, { code, state: shown.state, iss: this.issuer });
  }

  #token(f: URLSearchParams, res: PageResponse): undefined {
    const client = f.get('client_id') ?? '';
    const refused = (error: string, why: string) => json(res, 400, { error, error_description: why });
    if (!this.clients.some((c) => c.id === client)) return json(res, 401, { error: 'invalid_client' });
    if (f.get('grant_type') === 'authorization_code') {
      const code = f.get('code') ?? '';
      const pending = this.#codes.get(code);
      this.#codes.delete(code); // used once, right or wrong
      if (!pending || pending.expiresAt <= this.now() || pending.client !== client)
        return refused('invalid_grant', 'unknown, used or expired code');
      if (f.get('redirect_uri') !== pending.redirectUri)
        return refused('invalid_grant', 'redirect_uri differs');
      if (!sameText(s256(f.get('code_verifier') ?? ''), pending.challenge))
        return refused('invalid_grant', 'PKCE verifier does not match');
      return json(res, 200, this.#issue(pending));
    }
    if (f.get('grant_type') === 'refresh_token') {
      const old = f.get('refresh_token') ?? '';
      const grant = this.#refresh.get(old);
      this.#refresh.delete(old); // rotated: the old one never works again
      if (!grant || grant.client !== client)
        return refused('invalid_grant', 'unknown or revoked refresh token');
      return json(res, 200, this.#issue(grant));
    }
    refused('unsupported_grant_type', 'authorization_code or refresh_token');
  }

  #issue(grant: Grant) {
    const access = newToken();
    const refresh = newToken();
    const only = { user: grant.user, client: grant.client, scope: grant.scope };
    this.#access.set(access, { ...only, expiresAt: this.now() + ACCESS_TTL_S * 1000 });
    this.#refresh.set(refresh, only);
    return {
      access_token: access,
      token_type: 'Bearer',
      expires_in: ACCESS_TTL_S,
      refresh_token: refresh,
      scope: grant.scope,
    };
  }

  #revoke(f: URLSearchParams, res: PageResponse): void {
    const token = f.get('token') ?? '';
    const grant = this.#refresh.get(token) ?? this.#access.get(token);
    this.#refresh.delete(token);
    this.#access.delete(token);
    // Revoking a refresh token ends the person's access tokens too (RFC 7009 §2.1 allows it; people expect it).
    if (grant)
      for (const [t, g] of this.#access)
        if (g.user === grant.user && g.client === grant.client) this.#access.delete(t);
    res.writeHead(200, { 'cache-control': 'no-store' });
    res.end();
  }
}

function json(res: PageResponse, status: number, body: unknown): undefined {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

function redirect(res: PageResponse, to: string, params: Record<string, string>): undefined {
  const url = new URL(to);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  res.writeHead(303, { location: url.href, 'cache-control': 'no-store' });
  res.end();
}

function page(res: PageResponse, status: number, title: string, body: string, formTarget = ''): undefined {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    // The form posts here and is redirected to the client: both must be allowed form targets.
    'content-security-policy': `default-src 'none'; style-src 'unsafe-inline'; form-action 'self' ${formTarget}; frame-ancestors 'none'`,
    'cache-control': 'no-store',
  });
  res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body><h1>${escapeHtml(title)}</h1>${body}</body></html>`);
}
