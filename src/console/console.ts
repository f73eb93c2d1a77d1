// The operator's console at /mrtr/console, on the MCP server's own listener: one frame (navigation, who is signed
// in, the live stream) around panels. The console decides who sees what: a person must be signed in, and holds
// console roles through the roles their sign-in carries; a panel is opened only with one of its roles, every time.

import type { BrowserSignIn, PageSession } from '../auth/index.js';
import { type Html, html, readForm, sendPage } from '../auth/internal.js';
import type { ControlHost } from '../controls/index.js';
import { answerPageFailure } from '../controls/internal.js';
import type { PageRequest, PageResponse } from '../protocol/index.js';
import { ConsoleUsageError } from './errors.js';
import { LiveHub, type LiveLimits, type LiveTopic } from './live.js';
import type { ConsolePanel, ConsoleRole, PanelContext } from './panel.js';
import { type ConsoleRoles, consoleRolesOf, DEFAULT_CONSOLE_ROLES } from './roles.js';
import { CONSOLE_SCRIPT, CONSOLE_SCRIPT_PATH } from './script.js';

export interface OperatorConsoleOptions {
  /** The panels, in the navigation's order (approvals, flows, audit, gateway…). */
  panels: readonly ConsolePanel[];
  /** Which token roles grant the console roles (default: approver, auditor and admin, each by its own name). */
  roles?: ConsoleRoles;
  /** How many live streams may be open, in all and per person. */
  live?: LiveLimits;
  /** Told when a page failed for the server's own reasons (a store or a sink down). */
  onError?: (error: unknown, req: PageRequest) => void;
}

const ROUTE = /^\/mrtr\/console(?:\/([a-z]+)(\/.*)?)?$/;
/** Where a person manages their passkeys (the human controls' page): the console links to it. */
const PASSKEYS_PATH = '/mrtr/passkeys';

export class OperatorConsole {
  private host: ControlHost | undefined;
  private readonly roles: ConsoleRoles;
  private readonly live: LiveHub;

  constructor(private readonly options: OperatorConsoleOptions) {
    this.roles = options.roles ?? DEFAULT_CONSOLE_ROLES;
    this.live = new LiveHub(options.live);
  }

  /** Serve the console on `server`'s listener, with its browser sign-in. Returns this. */
  attach(server: ControlHost): this {
    // Checked here, not in the constructor: a program may build the console first (it is a round observer) and add
    // the panels once the server exists.
    const ids = new Set<string>();
    for (const p of this.options.panels) {
      if (!/^[a-z]+$/.test(p.id) || p.id === 'live' || ids.has(p.id))
        throw new ConsoleUsageError(
          `OperatorConsole: panel id '${p.id}' must be lowercase letters, unique, not 'live'`,
        );
      ids.add(p.id);
    }
    this.host = server;
    server.page(this);
    return this;
  }

  /** Tell open pages that `topic` changed (a panel's data source calls this). */
  changed(topic: LiveTopic): void {
    this.live.changed(topic);
  }

  /** A round observer: each round recorded is news for the flows panel. */
  readonly observer = { observe: (): void => this.live.changed('flows') };

  close(): void {
    this.live.close();
  }

  handles(pathname: string): boolean {
    return pathname === CONSOLE_SCRIPT_PATH || ROUTE.test(pathname);
  }

  handle(req: PageRequest, res: PageResponse): void {
    this.route(req, res).catch((error: unknown) =>
      answerPageFailure(res, error, () => this.options.onError?.(error, req), 'Nothing was changed.'),
    );
  }

  private signIn(): BrowserSignIn | undefined {
    return this.host?.signIn;
  }

  private async route(req: PageRequest, res: PageResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === CONSOLE_SCRIPT_PATH) {
      res.writeHead(200, {
        'content-type': 'text/javascript; charset=utf-8',
        'cache-control': 'public, max-age=3600',
        'x-content-type-options': 'nosniff',
      });
      res.end(CONSOLE_SCRIPT);
      return;
    }
    const signIn = this.signIn();
    if (!signIn) {
      sendPage(
        res,
        404,
        'No sign-in on this server',
        html`<p>The console needs browser sign-in: serve with <code>--tokens FILE</code> or <code>--issuer URL</code>.</p>`,
      );
      return;
    }
    const session = signIn.sessionOf(req);
    if (!session) {
      res.writeHead(303, {
        location: signIn.signInUrl(url.pathname + url.search),
        'cache-control': 'no-store',
      });
      res.end();
      return;
    }
    const roles = consoleRolesOf(session.roles, this.roles);
    const [, id, rest = ''] = ROUTE.exec(url.pathname) ?? [];
    const ctx = this.context(req, res, session, roles, url, signIn, id);
    if (id === 'live') {
      if (req.method !== 'GET') return notAllowed(res, 'GET');
      if (roles.size === 0) return ctx.json(403, { error: 'forbidden', message: 'you hold no console role' });
      this.live.open(res, `${session.issuer} ${session.subject}`, roles);
      return;
    }
    if (id === undefined) {
      if (req.method !== 'GET') return notAllowed(res, 'GET');
      return this.home(ctx);
    }
    const panel = this.options.panels.find((p) => p.id === id);
    if (!panel) {
      ctx.page(404, 'Not found', html`<p>The console has no page at this address.</p>`);
      return;
    }
    if (!mayOpen(panel, roles)) {
      ctx.page(
        403,
        'Not yours to see',
        html`<p>${panel.title} is for people with the console role ${panel.roles.join(' or ')}. You are signed in as <strong>${session.name ?? session.subject}</strong>${
          roles.size ? html`, with ${[...roles].join(', ')}` : ', with no console role'
        }.</p>`,
      );
      return;
    }
    await panel.handle(req, res, ctx, rest);
  }

  private context(
    req: PageRequest,
    res: PageResponse,
    session: PageSession,
    roles: ReadonlySet<ConsoleRole>,
    url: URL,
    signIn: BrowserSignIn,
    current: string | undefined,
  ): PanelContext {
    const csrf = signIn.csrfToken(session);
    // Built when a page is sent: JSON answers and redirects need no frame.
    const frame = () => ({
      banner: this.banner(session, roles, csrf, current),
      scripts: [CONSOLE_SCRIPT_PATH],
    });
    const ctx: PanelContext = {
      session,
      roles,
      csrf,
      url,
      origin: signIn.origin,
      checkForm: (form) => signIn.checkForm(req, session, form),
      postedForm: async (use, nothing) => {
        if (req.method !== 'POST') {
          ctx.notAllowed('POST', use);
          return undefined;
        }
        const form = await readForm(req);
        if (signIn.checkForm(req, session, form)) return form;
        ctx.page(
          403,
          'Refused',
          html`<p>This form did not come from your session’s console page. ${nothing}</p>`,
        );
        return undefined;
      },
      page: (status, title, body) => sendPage(res, status, title, body, {}, frame()),
      // A 405 names the methods that work (RFC 9110, section 15.5.6).
      notAllowed: (allow, use = `Use ${allow.replaceAll(', ', ' or ')}.`) =>
        sendPage(res, 405, 'Not allowed', html`<p>${use}</p>`, { allow }, frame()),
      seeOther: (path) => {
        res.writeHead(303, { location: path, 'cache-control': 'no-store' });
        res.end();
      },
      json: (status, body, headers = {}) => {
        res.writeHead(status, {
          'content-type': 'application/json',
          'cache-control': 'no-store',
          ...headers,
        });
        res.end(JSON.stringify(body));
      },
    };
    return ctx;
  }

  private visible(roles: ReadonlySet<ConsoleRole>): ConsolePanel[] {
    return this.options.panels.filter((p) => mayOpen(p, roles));
  }

  private banner(
    session: PageSession,
    roles: ReadonlySet<ConsoleRole>,
    csrf: string,
    current?: string,
  ): Html {
    const link = (href: string, label: string, here: boolean) =>
      html`<a href="${href}"${here ? html` aria-current="page"` : ''}>${label}</a>`;
    const links = [
      link('/mrtr/console', 'Console', current === undefined),
      ...this.visible(roles).map((p) => link(`/mrtr/console/${p.id}`, p.title, current === p.id)),
      link(PASSKEYS_PATH, 'Passkeys', false),
    ];
    return html`<header class="console"><nav aria-label="Console">${links}</nav>
<form method="post" action="/mrtr/signout" class="whoami"><span>${session.name ?? session.subject}${
      roles.size ? html` <span class="muted">(${[...roles].join(', ')})</span>` : ''
    }</span> <input type="hidden" name="csrf" value="${csrf}"><button type="submit" class="secondary">Sign out</button></form></header>`;
  }

  private async home(ctx: PanelContext): Promise<void> {
    const panels = this.visible(ctx.roles);
    if (panels.length === 0) {
      ctx.page(
        200,
        'Console',
        html`<p>You are signed in as <strong>${ctx.session.name ?? ctx.session.subject}</strong> but hold no console role (approver, auditor or admin). Ask an administrator for one.</p>`,
      );
      return;
    }
    const cards = await Promise.all(
      panels.map(
        async (p) =>
          html`<li class="card"><h2><a href="/mrtr/console/${p.id}">${p.title}</a></h2>${p.summary ? html`<p>${await p.summary(ctx)}</p>` : ''}</li>`,
      ),
    );
    // The live stream is for console roles: a person who holds none (their own connections only) does not open it.
    ctx.page(
      200,
      'Console',
      html`<ul class="list" id="home"${ctx.roles.size ? html` data-live="approvals"` : ''}>${cards}</ul>`,
    );
  }
}

/** A panel opens for one of its console roles, or for anyone signed in when it is a person's own (`person`). */
function mayOpen(panel: ConsolePanel, roles: ReadonlySet<ConsoleRole>): boolean {
  return panel.roles.some((r) => r === 'person' || roles.has(r));
}

function notAllowed(res: PageResponse, allow: string): void {
  res.writeHead(405, { allow });
  res.end();
}
