// What a panel of the operator's console is: a few routes under /mrtr/console/, for people with some console roles,
// drawn inside the console's frame. The console checks the session and the roles before a panel sees a request; a
// panel reads a form with `ctx.postedForm`, which checks the method and the CSRF token, before it changes anything.

import type { PageSession } from '../auth/index.js';
import type { Html } from '../auth/internal.js';
import type { PageRequest, PageResponse } from '../protocol/index.js';

/** What a person may do in the console, from the roles their token or sign-in carries (mapped by `ConsoleRoles`). */
export type ConsoleRole = 'approver' | 'auditor' | 'admin';

/** Who may open a panel: a console role, or `person`, anyone signed in (a panel of their own things). */
export type PanelAudience = ConsoleRole | 'person';

export interface PanelContext {
  readonly session: PageSession;
  /** The console roles this person holds. */
  readonly roles: ReadonlySet<ConsoleRole>;
  /** The CSRF token every form of this session carries (a hidden `csrf` field). */
  readonly csrf: string;
  /** The request's URL (pathname and query). */
  readonly url: URL;
  /** The server's public origin (`https://host`), for deep links. */
  readonly origin: string;
  /** A form POST from one of this session's pages (same origin, its CSRF token). */
  checkForm(form: URLSearchParams): boolean;
  /**
   * The posted form, once it is a POST from one of this session's pages; otherwise the refusal is answered (405
   * saying `use`, or 403 saying `nothing`) and the result is undefined.
   */
  postedForm(use: string, nothing: string): Promise<URLSearchParams | undefined>;
  /** Answer with a page in the console's frame (navigation, sign-out, live updates). */
  page(status: number, title: string, body: Html): void;
  /** Answer 405 with the methods that work (`GET`, `POST`, `GET, POST`) in `Allow`; the page says `use`. */
  notAllowed(allow: string, use?: string): void;
  /** After a form's change: send the browser to `path` (a GET), so a reload does not post again. */
  seeOther(path: string): void;
  /** Answer with JSON (the console's API), never cached. */
  json(status: number, body: unknown, headers?: Record<string, string>): void;
}

export interface ConsolePanel {
  /** Short and stable: `approvals`, `flows`, `audit`, `gateway`. Its pages live under /mrtr/console/<id>. */
  readonly id: string;
  /** The navigation's label. */
  readonly title: string;
  /** Who may open it: a person needs one of these console roles (`person`: anyone signed in). */
  readonly roles: readonly PanelAudience[];
  /** Answer a request under /mrtr/console/<id> (`rest` is what follows, '' or '/…'). */
  handle(req: PageRequest, res: PageResponse, ctx: PanelContext, rest: string): Promise<void>;
  /** A line for the console's home page (a count, a state), if the panel has one. */
  summary?(ctx: PanelContext): Promise<Html | string>;
}
