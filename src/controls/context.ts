// What the controls need of a handler's request context and of the server, structurally: the controls room does
// not import the server (the server does not import it either; a server author composes both).
import type { BearerAuth, BrowserSignIn } from '../auth/index.js';
import type { Ask } from '../flow/index.js';
import type { PageRequest, PageResponse } from '../protocol/index.js';

export interface ControlPrincipal {
  readonly subject: string;
  readonly issuer?: string;
  readonly name?: string;
  readonly roles?: readonly string[];
}

/** The part of a handler's `ctx` the controls read. */
export interface ControlContext {
  readonly principal: ControlPrincipal | undefined;
  readonly flowId: string;
  readonly round: number;
  readonly ask: Ask;
  readonly audit: {
    note(facts: Readonly<Record<string, unknown>>): void;
    /** Set when the round is traced: a control starts judging, and records its decision on the round's span. */
    judging?(control: string): (decision: 'allowed' | 'refused', reason?: string) => void;
  };
  readonly inputResponses: Readonly<Record<string, unknown>>;
  /** Aborts when the client goes away: a check holding for a person's action stops waiting. */
  readonly signal?: AbortSignal;
  /** Waits for `work` with the handler's time limit stopped (a server's ctx has it): a person's time is not its own. */
  waitForPerson?<T>(work: PromiseLike<T>): Promise<T>;
}

/** Page routes on the server's listener or fetch handler (the server's `PageRoutes`). */
export interface ControlPages {
  handles(pathname: string): boolean;
  handle(req: PageRequest, res: PageResponse): void;
}

/** What `HumanControls.attach` needs of a server: an `McpServer` is one. */
export interface ControlHost {
  readonly signIn: BrowserSignIn | undefined;
  readonly bearerAuth: BearerAuth | undefined;
  page(routes: ControlPages): unknown;
  /**
   * A person finished what a URL-mode question sent them to do (`url`): the server tells clients that wait for it
   * (a 2025-11-25 client gets notifications/elicitation/complete). Optional: a host without it is never told.
   */
  urlElicitationDone?(url: string): void;
  /** Told the flow of each task its caller cancelled. Optional: a host without tasks never calls back. */
  onFlowCancelled?(listener: (flowId: string) => void): void;
}

/** Who did what on a control's page or API: for the log, and for the flow's audit event when it resumes. */
export interface ControlEvent {
  readonly control: 'approval' | 'step_up';
  readonly action: string;
  readonly id: string;
  readonly by?: string;
  readonly at: string;
  readonly detail?: Readonly<Record<string, unknown>>;
}

/** The event a page reports when it failed for a reason of the server's own (answered 500). */
export function pageFailed(
  control: ControlEvent['control'],
  id: string | undefined,
  req: { method?: string | undefined },
  error: unknown,
  now: number,
): ControlEvent {
  return {
    control,
    action: 'page_failed',
    id: id ?? '-',
    at: new Date(now).toISOString(),
    detail: {
      method: req.method ?? 'GET',
      error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    },
  };
}
