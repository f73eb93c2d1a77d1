// The connections panel: a signed-in person's own connected accounts (which, where, what access, since when, never a
// token), each with a button to disconnect it; an admin also sees how many people hold each connection, and nothing
// more: never whose, never a token. The connections themselves are the server's (`Connections` of mrtr/connections).
import type { PageSession } from '../auth/index.js';
import { type Html, html } from '../auth/internal.js';
import type { PageRequest, PageResponse } from '../protocol/index.js';
import type { ConsolePanel, PanelContext } from './panel.js';

/** Whose connections: a person, by the issuer and subject of their sign-in. */
export interface ConsoleConnectionOwner {
  readonly issuer: string;
  readonly subject: string;
}

/** One of a person's connections as the panel shows it (the connections room's ConnectionSummary, structurally). */
export interface ConsoleConnectionSummary {
  readonly connection: string;
  readonly issuer: string;
  readonly scopes: readonly string[];
  readonly connectedAt: number;
  readonly refreshedAt?: number;
  readonly lastUsedAt?: number;
  readonly expiresAt?: number;
}

/** What the panel needs of a server's connections (`Connections` from mrtr/connections has it). */
export interface ConsoleConnections {
  /** The connections the server declares, each with the label people see. */
  declared(): ReadonlyArray<{ readonly name: string; readonly label: string }>;
  /** The owner's own connections. */
  list(owner: ConsoleConnectionOwner): Promise<readonly ConsoleConnectionSummary[]>;
  /** Revoke at the authorization server when it can, remove, and tell (`disconnected`). */
  disconnect(owner: ConsoleConnectionOwner, name: string): Promise<boolean>;
  /** How many people hold each connection. */
  counts(): Promise<Record<string, number>>;
}

const PATH = '/mrtr/console/connections';

const when = (ms: number | undefined) =>
  ms === undefined
    ? '—'
    : new Date(ms)
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d+Z$/, 'Z');

const ownerOf = (session: PageSession): ConsoleConnectionOwner => ({
  issuer: session.issuer,
  subject: session.subject,
});

export class ConnectionsPanel implements ConsolePanel {
  readonly id = 'connections';
  readonly title = 'Connections';
  // Everyone signed in has connections of their own; the admin's counts are drawn only for the admin role.
  readonly roles = ['person'] as const;

  constructor(private readonly connections: ConsoleConnections) {}

  async summary(ctx: PanelContext): Promise<string> {
    const mine = (await this.connections.list(ownerOf(ctx.session))).length;
    const of = this.connections.declared().length;
    return `You have connected ${mine} of ${of} account${of === 1 ? '' : 's'}.`;
  }

  async handle(req: PageRequest, _res: PageResponse, ctx: PanelContext, rest: string): Promise<void> {
    if (rest === '' || rest === '/') {
      if (req.method !== 'GET') return ctx.notAllowed('GET');
      return this.show(ctx);
    }
    if (rest !== '/disconnect')
      return ctx.page(404, 'Not found', html`<p>The connections panel has no page at this address.</p>`);
    const form = await ctx.postedForm('Use the button on the connections page.', 'Nothing was disconnected.');
    if (!form) return;
    const name = form.get('connection') ?? '';
    if (!this.connections.declared().some((c) => c.name === name))
      return ctx.page(400, 'Unknown connection', html`<p>This server has no connection named “${name}”.</p>`);
    // Always the signed-in person's own: the form names a connection, never an owner.
    await this.connections.disconnect(ownerOf(ctx.session), name);
    return ctx.seeOther(PATH);
  }

  private async show(ctx: PanelContext): Promise<void> {
    const declared = this.connections.declared();
    const mine = new Map((await this.connections.list(ownerOf(ctx.session))).map((s) => [s.connection, s]));
    const rows = declared.map((c) => this.row(c.name, c.label, mine.get(c.name), ctx.csrf));
    const admin = ctx.roles.has('admin') ? await this.counts(declared) : '';
    ctx.page(
      200,
      'Connections',
      html`<section aria-labelledby="mine-h"><h2 id="mine-h">Your connected accounts</h2>
<ul class="list" id="my-connections">${rows}</ul>
<p class="muted">Their tokens stay on this server, encrypted: no page and no app shows them. A connection is made when a call first needs it.</p></section>${admin}`,
    );
  }

  private row(name: string, label: string, s: ConsoleConnectionSummary | undefined, csrf: string): Html {
    if (!s)
      return html`<li class="card"><strong>${label}</strong> <span class="muted">not connected</span></li>`;
    return html`<li class="card" data-connection="${name}"><strong>${label}</strong> connected
<table><tr><th scope="row">Account server</th><td>${s.issuer}</td></tr>
<tr><th scope="row">Access</th><td>${s.scopes.join(' ') || '—'}</td></tr>
<tr><th scope="row">Connected</th><td>${when(s.connectedAt)}</td></tr>
<tr><th scope="row">Refreshed</th><td>${when(s.refreshedAt)}</td></tr>
<tr><th scope="row">Last used</th><td>${when(s.lastUsedAt)}</td></tr>
<tr><th scope="row">Expires</th><td>${when(s.expiresAt)}</td></tr></table>
<form method="post" action="${PATH}/disconnect"><input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="connection" value="${name}">
<p><button type="submit" class="deny">Disconnect ${label}</button></p></form></li>`;
  }

  /** The admin's view: how many people hold each connection. Never whose, never a token. */
  private async counts(declared: ReadonlyArray<{ name: string; label: string }>): Promise<Html> {
    const counts = await this.connections.counts();
    return html`<section aria-labelledby="counts-h"><h2 id="counts-h">Everyone’s connections (admin)</h2>
<div class="scroll"><table id="connection-counts"><thead><tr><th scope="col">Connection</th><th scope="col">People connected</th></tr></thead><tbody>${declared.map(
      (c) => html`<tr><td>${c.label}</td><td>${counts[c.name] ?? 0}</td></tr>`,
    )}</tbody></table></div>
<p class="muted">Counts only: who connected, and their tokens, stay with each person.</p></section>`;
  }
}
