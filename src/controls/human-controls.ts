// The three human controls a tool author uses in a few lines: consent bound to the effect, step-up through the
// server's own page, four-eyes approval. Their records live in the shared store, so any instance serves the pages
// and any instance runs the next round.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BearerAuth, BrowserSignIn } from '../auth/index.js';
import type { SharedStore } from '../stores/index.js';
import { type ApprovalGrant, type ApprovalOptions, requireApproval } from './approval.js';
import { ApprovalBook } from './approval-book.js';
import { ApprovalPages } from './approval-pages.js';
import { askConsent, type Consent, type ConsentOptions } from './consent.js';
import type { ControlContext, ControlEvent, ControlHost, ControlPages } from './context.js';
import { CONTROLS_DEFAULTS } from './defaults.js';
import { ControlsUsageError } from './errors.js';
import { requireStepUp, type StepUpOptions } from './step-up.js';
import { StepUpPage } from './step-up-page.js';
import { TotpCheck, type TotpCheckOptions } from './totp-check.js';
import type { TotpSecrets } from './totp-secrets.js';

export interface HumanControlsOptions {
  /** Where approvals, step-ups, used codes and lockouts live: share it between instances (SQLite, Redis). */
  store: SharedStore;
  /** Enrolled TOTP secrets (`totpSecretsFile(path)`); without, step-up pages say nobody is enrolled. */
  totp?: TotpSecrets;
  /** Code limits: failures before lockout, the lockout and its back-off. */
  totpLimits?: Omit<TotpCheckOptions, 'now'>;
  /** Told of every decision and refusal on the pages and the API (who, when, why); the round's audit gets them too. */
  onEvent?: (event: ControlEvent) => void;
  /** The clock (tests). */
  now?: () => number;
}

export class HumanControls implements ControlPages {
  readonly approvals: ApprovalBook;
  private host: ControlHost | undefined;
  private readonly routes: ControlPages[];
  private readonly totpCheck: TotpCheck | undefined;
  private readonly now: () => number;

  constructor(private readonly options: HumanControlsOptions) {
    if (!options?.store) throw new ControlsUsageError('HumanControls needs a store');
    this.now = options.now ?? Date.now;
    this.approvals = new ApprovalBook(options.store, this.now);
    this.totpCheck = options.totp
      ? new TotpCheck(options.store, options.totp, { ...options.totpLimits, now: this.now })
      : undefined;
    const onEvent = options.onEvent ?? (() => {});
    this.routes = [
      new ApprovalPages({
        book: this.approvals,
        signIn: () => this.signIn(),
        bearerAuth: () => this.bearerAuth(),
        onEvent,
        now: this.now,
      }),
      new StepUpPage({
        store: options.store,
        totp: () => this.totpCheck,
        signIn: () => this.signIn(),
        onEvent,
        now: this.now,
        ttlMs: CONTROLS_DEFAULTS.grantTtlMs,
      }),
    ];
  }

  /** Serve the pages on `server`'s listener, with its browser sign-in and bearer auth. Returns this. */
  attach(server: ControlHost): this {
    this.host = server;
    server.page(this);
    return this;
  }

  private signIn(): BrowserSignIn {
    const signIn = this.host?.signIn;
    if (!signIn)
      throw new ControlsUsageError(
        'HumanControls: attach(server) to a server with signIn configured: the controls send people to its pages',
      );
    return signIn;
  }

  private bearerAuth(): BearerAuth | undefined {
    return this.host?.bearerAuth;
  }

  handles(pathname: string): boolean {
    return this.routes.some((r) => r.handles(pathname));
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    this.routes.find((r) => r.handles(pathname))?.handle(req, res);
  }

  /** Ask for consent to exactly `effect`; resolves only for a yes. `execute` later checks the effect is unchanged. */
  consent(ctx: ControlContext, options: ConsentOptions): Promise<Consent> {
    return askConsent(ctx, this.options.store, options, CONTROLS_DEFAULTS.pendingTtlMs);
  }

  /** Resolves once the flow's principal has entered a TOTP code on the server's step-up page. */
  stepUp(ctx: ControlContext, options: StepUpOptions): Promise<void> {
    const origin = this.signIn().origin;
    return requireStepUp(
      ctx,
      this.options.store,
      (id) => `${origin}/mrtr/step-up/${id}`,
      options,
      CONTROLS_DEFAULTS.stepUpTtlMs,
    );
  }

  /** Resolves once enough reviewers with `role` approved exactly `effect`; denial or expiry ends the call. */
  approval(ctx: ControlContext, options: ApprovalOptions): Promise<ApprovalGrant> {
    const origin = this.signIn().origin;
    return requireApproval(ctx, this.approvals, (id) => `${origin}/mrtr/approvals/${id}/status`, options);
  }
}
