// A person's own connections: GET /mrtr/connections lists them (what, where, since when, never a token); POST
// disconnects one, from this page only (same origin and the session's CSRF token, as the approval pages' forms).
import type { BrowserSignIn, PageSession } from '../auth/index.js';
import { html, readForm, sendPage } from '../auth/internal.js';
import { answerPageFailure, NO_SIGN_IN, seeOther } from '../controls/internal.js';
import type { PageRequest, PageResponse } from '../protocol/index.js';
import type { ConnectionEvent } from './connect-events.js';
import type { ConnectionConfig, ConnectionOwner, ConnectionSummary, TokenVault } from './types.js';

export const CONNECTIONS_PATH = '/mrtr/connections';

export interface ConnectionsPageDeps {
  vault: TokenVault;
  configs: readonly ConnectionConfig[];
  signIn: () => BrowserSignIn | undefined;
  disconnect: (owner: ConnectionOwner, name: string) => Promise<boolean>;
  onEvent: (event: ConnectionEvent) => void;
  now: () => number;
}

const when = (ms: number | undefined) =>
  ms === undefined ? '—' : new Date(ms).toISOString().replace('.000Z', 'Z');

export class ConnectionsPage {
  constructor(private readonly d: ConnectionsPageDeps) {}

  handles(pathname: string): boolean {
    return pathname === CONNECTIONS_PATH;
  }

  handle(req: PageRequest, res: PageResponse): void {
    this.route(req, res).catch((error: unknown) =>
      answerPageFailure(res, error, () =>
        this.d.onEvent({
          connection: '-',
          action: 'page_failed',
          at: new Date(this.d.now()).toISOString(),
          detail: { method: req.method ?? 'GET', error: String(error) },
        }),
      ),
    );
  }

  private async route(req: PageRequest, res: PageResponse): Promise<void> {
    const method = req.method ?? 'GET';
    if (method !== 'GET' && method !== 'POST') {
      res.writeHead(405, { allow: 'GET, POST' });
      res.end();
      return;
    }
    const signIn = this.d.signIn();
    if (!signIn) return sendPage(res, 404, 'No sign-in on this server', NO_SIGN_IN);
    const session = signIn.sessionOf(req);
    if (!session) return seeOther(res, signIn.signInUrl(CONNECTIONS_PATH));
    const owner: ConnectionOwner = { issuer: session.issuer, subject: session.subject };
    if (method === 'GET') return this.listPage(res, signIn, session, owner);
    const form = await readForm(req);
    if (!signIn.checkForm(req, session, form))
      return sendPage(
        res,
        403,
        'Refused',
        html`<p>This form did not come from your connections page. Nothing was disconnected.</p>`,
      );
    const name = form.get('connection') ?? '';
    if (!this.d.configs.some((c) => c.name === name))
      return sendPage(
        res,
        400,
        'Unknown connection',
        html`<p>This server has no connection named “${name}”.</p>`,
      );
    await this.d.disconnect(owner, name);
    seeOther(res, CONNECTIONS_PATH);
  }

  private async listPage(
    res: PageResponse,
    signIn: BrowserSignIn,
    session: PageSession,
    owner: ConnectionOwner,
  ): Promise<void> {
    const mine = new Map((await this.d.vault.list(owner)).map((s) => [s.connection, s]));
    const csrf = signIn.csrfToken(session);
    const rows = this.d.configs.map((config) => this.row(config, mine.get(config.name), csrf));
    sendPage(
      res,
      200,
      'Your connections',
      html`<p><strong>${session.name ?? session.subject}</strong>, these are the accounts elsewhere this server acts at for you.</p>
<ul class="list">${rows}</ul>
<p class="muted">Their tokens stay on this server, encrypted: your apps never see them. A connection is made when a call first needs it.</p>`,
    );
  }

  private row(config: ConnectionConfig, summary: ConnectionSummary | undefined, csrf: string) {
    const label = config.label ?? config.name;
    if (!summary)
      return html`<li class="card"><strong>${label}</strong> <span class="muted">not connected</span></li>`;
    return html`<li class="card" data-connection="${config.name}"><strong>${label}</strong> connected
<table><tr><th>Account server</th><td>${summary.issuer}</td></tr>
<tr><th>Access</th><td>${summary.scopes.join(' ') || '—'}</td></tr>
<tr><th>Connected</th><td>${when(summary.connectedAt)}</td></tr>
<tr><th>Last used</th><td>${when(summary.lastUsedAt)}</td></tr></table>
<form method="post"><input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="connection" value="${config.name}">
<p><button type="submit" class="deny">Disconnect ${label}</button></p></form></li>`;
  }
}
