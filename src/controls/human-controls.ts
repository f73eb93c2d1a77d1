// The three human controls a tool author uses in a few lines: consent bound to the effect, step-up through the
// server's own page, four-eyes approval. Their records live in the shared store, so any instance serves the pages
// and any instance runs the next round.

import type { BearerAuth, BrowserSignIn } from '../auth/index.js';
import type { PageRequest, PageResponse } from '../protocol/index.js';
import type { SharedStore } from '../stores/index.js';
import { type ApprovalGrant, type ApprovalOptions, requireApproval } from './approval.js';
import { ApprovalBook, type ApprovalRecord } from './approval-book.js';
import { ApprovalDecisions } from './approval-decisions.js';
import { ApprovalPages } from './approval-pages.js';
import { askConsent, type Consent, type ConsentOptions } from './consent.js';
import type { ControlContext, ControlEvent, ControlHost, ControlPages } from './context.js';
import { CONTROLS_DEFAULTS } from './defaults.js';
import { ControlsUsageError } from './errors.js';
import { FleetWakeups } from './fleet-wakeups.js';
import { judged } from './judged.js';
import { PasskeyBook } from './passkey-book.js';
import { PasskeyPages } from './passkey-pages.js';
import { requireStepUp, type StepUpOptions } from './step-up.js';
import { StepUpPage } from './step-up-page.js';
import { TotpCheck, type TotpCheckOptions } from './totp-check.js';
import type { TotpSecrets } from './totp-secrets.js';
import { Wakeups } from './wakeups.js';

export interface HumanControlsOptions {
  /** Where approvals, step-ups, used codes and lockouts live: share it between instances (SQLite, Redis). */
  store: SharedStore;
  /** Enrolled TOTP secrets (`totpSecretsFile(path)`); without, step-up pages say nobody is enrolled. */
  totp?: TotpSecrets;
  /** Code limits: failures before lockout, the lockout and its back-off. */
  totpLimits?: Omit<TotpCheckOptions, 'now'>;
  /**
   * How long a client's check of a pending step-up or approval waits for the person's action before the round
   * answers "still waiting" again (default 20 s; 0 answers at once). The page's action ends the wait at once: on
   * this instance, and on every instance of a fleet whose store has a channel (Redis).
   */
  pendingWaitMs?: number;
  /**
   * Passkeys (WebAuthn) as the step-up's second factor, TOTP kept as the fallback: people add theirs at /mrtr/passkeys
   * (default on: they live in the same store, and a person without one sees the code form as before).
   */
  passkeys?: boolean;
  /** Told of every decision and refusal on the pages and the API (who, when, why); the round's audit gets them too. */
  onEvent?: (event: ControlEvent) => void;
  /** The clock (tests). */
  now?: () => number;
}

export class HumanControls implements ControlPages {
  readonly approvals: ApprovalBook;
  /** Votes, the one way every surface records them (pages, API, console), each told as an event. */
  readonly decisions: ApprovalDecisions;
  private readonly listeners = new Set<(event: ControlEvent) => void>();
  private host: ControlHost | undefined;
  private readonly routes: ControlPages[];
  private readonly totpCheck: TotpCheck | undefined;
  private readonly now: () => number;
  private readonly wakeups = new Wakeups();
  /** The other instances' wake-ups, when the store can carry them. */
  private readonly fleet: FleetWakeups | undefined;
  private readonly pendingWaitMs: number;
  private readonly told: (event: ControlEvent) => void;

  constructor(private readonly options: HumanControlsOptions) {
    if (!options?.store) throw new ControlsUsageError('HumanControls needs a store');
    this.now = options.now ?? Date.now;
    this.approvals = new ApprovalBook(options.store, this.now);
    this.totpCheck = options.totp
      ? new TotpCheck(options.store, options.totp, { ...options.totpLimits, now: this.now })
      : undefined;
    const pendingWaitMs = options.pendingWaitMs ?? CONTROLS_DEFAULTS.pendingWaitMs;
    if (!(Number.isInteger(pendingWaitMs) && pendingWaitMs >= 0 && pendingWaitMs <= 120_000))
      throw new ControlsUsageError(
        'HumanControls: pendingWaitMs must be a whole number of ms from 0 to 120000',
      );
    this.pendingWaitMs = pendingWaitMs;
    const told = options.onEvent ?? (() => {});
    this.told = told;
    this.fleet = options.store.channel
      ? new FleetWakeups(
          options.store.channel,
          (key, settled) => this.wokenByFleet(key, settled),
          (error) => this.channelFailed(error),
        )
      : undefined;
    const onEvent = (event: ControlEvent) => {
      told(event);
      this.changed(event);
    };
    this.decisions = new ApprovalDecisions(this.approvals, onEvent, this.now);
    const passkeys = options.passkeys === false ? undefined : new PasskeyBook(options.store, this.now);
    this.routes = [
      new ApprovalPages({
        book: this.approvals,
        decisions: this.decisions,
        signIn: () => this.signIn(),
        bearerAuth: () => this.bearerAuth(),
        onEvent,
        now: this.now,
      }),
      new StepUpPage({
        store: options.store,
        passkeys,
        totp: () => this.totpCheck,
        signIn: () => this.signIn(),
        onEvent,
        now: this.now,
        ttlMs: CONTROLS_DEFAULTS.grantTtlMs,
      }),
      ...(passkeys
        ? [new PasskeyPages({ book: passkeys, signIn: () => this.signIn(), onEvent, now: this.now })]
        : []),
    ];
  }

  /** Serve the pages on `server`'s listener, with its browser sign-in and bearer auth. Returns this. */
  attach(server: ControlHost): this {
    this.host = server;
    server.page(this);
    server.onFlowCancelled?.((flowId) => {
      this.withdraw((r) => r.flowId === flowId, 'the task that asked was cancelled').catch(() => {
        // A store that failed: the request stays pending until it expires, and no grant can reach the cancelled task.
      });
    });
    return this;
  }

  /**
   * Withdraw the pending requests `which` picks, saying `why` (a replaced policy, a cancelled task): they leave
   * every inbox, read "withdrawn" with why, take no vote; reviewers and webhooks are told (`withdrawn`).
   */
  async withdraw(which: (record: ApprovalRecord) => boolean, why: string): Promise<ApprovalRecord[]> {
    const withdrawn = await this.approvals.withdraw(which, why);
    for (const record of withdrawn) {
      const event: ControlEvent = {
        control: 'approval',
        action: 'withdrawn',
        id: record.id,
        at: new Date(this.now()).toISOString(),
        detail: { state: 'withdrawn', because: why, role: record.role, reason: record.reason },
      };
      this.told(event);
      this.changed(event);
    }
    return withdrawn;
  }

  /**
   * Be told of every control event on this instance (a new request, a decision, a step-up done), after the
   * `onEvent` option: the console's live view listens here. Returns the way to stop listening.
   */
  subscribe(listener: (event: ControlEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A page recorded a person's action: wake the checks holding for it, and tell the server's waiting clients. */
  private changed(event: ControlEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A listener's failure (a closed stream) is its own: the decision is recorded and the others are told.
      }
    }
    let key: string | undefined;
    let settled = true;
    if (event.control === 'step_up' && event.action === 'done') key = `step_up/${event.id}`;
    else if (
      event.control === 'approval' &&
      (event.action === 'approve' || event.action === 'deny' || event.action === 'withdrawn')
    ) {
      key = `approval/${event.id}`;
      settled = event.detail?.state !== 'pending';
    }
    if (key === undefined) return;
    this.wakeups.wake(key);
    if (settled) this.elicitationDone(key);
    this.fleet?.tell(key, settled);
  }

  /** Another instance recorded a person's action: wake the checks holding here, and this server's waiting clients. */
  private wokenByFleet(key: string, settled: boolean): void {
    this.wakeups.wake(key);
    if (settled) this.elicitationDone(key);
  }

  /** Tell the server's 2025 clients waiting on the page of `key` that the person is done there. */
  private elicitationDone(key: string): void {
    const [kind, id = ''] = key.split('/');
    try {
      this.host?.urlElicitationDone?.(kind === 'step_up' ? this.stepUpUrl(id) : this.statusUrl(id));
    } catch {
      // No sign-in on this server (a misconfigured instance of a fleet): there is no page to be done with.
    }
  }

  /** The store's channel failed: said once as an event; checks hold to their limit meanwhile. */
  private channelFailed(error: unknown): void {
    this.told({
      control: 'approval',
      action: 'channel_failed',
      id: '-',
      at: new Date(this.now()).toISOString(),
      detail: { error: error instanceof Error ? error.message : String(error) },
    });
  }

  private hold(kind: ControlEvent['control']) {
    return async (
      id: string,
      signal: AbortSignal | undefined,
      stillPending?: () => Promise<boolean>,
    ): Promise<void> => {
      if (this.pendingWaitMs === 0) return;
      const key = `${kind}/${id}`;
      // Listening before the hold: a decision published from now on reaches it.
      await this.fleet?.listening();
      // Reported, so an operator sees a client waiting for a person (and a test knows the hold has begun).
      this.told({
        control: kind,
        action: 'waiting',
        id,
        at: new Date(this.now()).toISOString(),
        detail: { waitMs: this.pendingWaitMs },
      });
      const held = this.wakeups.wait(key, this.pendingWaitMs, signal);
      // A decision recorded after the caller's read but before the wait began sent its wake-up to nobody: read again.
      stillPending?.().then(
        (pending) => {
          if (!pending) this.wakeups.wake(key);
        },
        () => {},
      );
      return held;
    };
  }

  private stepUpUrl(id: string): string {
    return `${this.signIn().origin}/mrtr/step-up/${id}`;
  }

  private statusUrl(id: string): string {
    return `${this.signIn().origin}/mrtr/approvals/${id}/status`;
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

  handle(req: PageRequest, res: PageResponse): void {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    this.routes.find((r) => r.handles(pathname))?.handle(req, res);
  }

  /** Ask for consent to exactly `effect`; resolves only for a yes. `execute` later checks the effect is unchanged. */
  consent(ctx: ControlContext, options: ConsentOptions): Promise<Consent> {
    return judged(ctx, 'consent', () =>
      askConsent(ctx, this.options.store, options, CONTROLS_DEFAULTS.pendingTtlMs),
    );
  }

  /** Resolves once the flow's principal has entered a TOTP code on the server's step-up page. */
  stepUp(ctx: ControlContext, options: StepUpOptions): Promise<void> {
    this.signIn(); // fails early without sign-in: the question would send the person nowhere
    return judged(ctx, 'step_up', () =>
      requireStepUp(
        ctx,
        this.options.store,
        (id) => this.stepUpUrl(id),
        options,
        CONTROLS_DEFAULTS.stepUpTtlMs,
        this.hold('step_up'),
      ),
    );
  }

  /** Resolves once enough reviewers with `role` approved exactly `effect`; denial or expiry ends the call. */
  approval(ctx: ControlContext, options: ApprovalOptions): Promise<ApprovalGrant> {
    this.signIn(); // fails early without sign-in: the question would send the person nowhere
    return judged(ctx, 'approval', () =>
      requireApproval(ctx, this.approvals, (id) => this.statusUrl(id), options, {
        hold: this.hold('approval'),
        created: (record) => this.requested(record),
      }),
    );
  }

  /** A new request waits for reviewers: told as an event, so the console and webhooks can bring it to them. */
  private requested(record: ApprovalRecord): void {
    const event: ControlEvent = {
      control: 'approval',
      action: 'requested',
      id: record.id,
      by: record.requester.subject,
      at: new Date(this.now()).toISOString(),
      detail: {
        role: record.role,
        reason: record.reason,
        requester: record.requester.name ?? record.requester.subject,
        effect: record.effect,
        effectDigest: record.effectDigest,
        approve: record.approve,
        expiresAt: new Date(record.expiresAt).toISOString(),
        url: `${this.signIn().origin}/mrtr/approvals/${record.id}`,
      },
    };
    this.told(event);
    this.changed(event);
  }
}
