// The Connections a server author composes (as HumanControls): each declared connection is a third party the server
// is an OAuth client of. `token(ctx, name)` gives the round's person's access token, or asks them to connect through
// the server's own page; the grants stay in the vault, bound to the person, and never reach the client.
import type { BrowserSignIn } from '../auth/index.js';
import { bearerDigest } from '../client/internal.js';
import type { ControlContext, ControlHost } from '../controls/index.js';
import { FleetWakeups, judged, Wakeups } from '../controls/internal.js';
import type { PageRequest, PageResponse } from '../protocol/index.js';
import { untilAborted } from '../protocol/internal.js';
import { Keyring } from '../state/index.js';
import type { SharedStore } from '../stores/index.js';
import { oauthFlow } from './authorization-flow.js';
import { connectedToken } from './connect-ask.js';
import { CONNECTIONS_DEFAULTS, type ConnectionEvent } from './connect-events.js';
import { UsableGrants } from './connect-grants.js';
import { ConnectPages } from './connect-pages.js';
import { PendingAuthorizations } from './connect-pending.js';
import type { ConnectRecord } from './connect-record.js';
import { ConnectionsPage } from './connections-page.js';
import { ConnectionRefused, ConnectionsUsageError } from './errors.js';
import type {
  AuthorizationFlow,
  ConnectionConfig,
  ConnectionOwner,
  ConnectionPages,
  ConnectionSummary,
  TokenGrant,
  TokenVault,
} from './types.js';

export interface ConnectionsOptions {
  /** Connect records, authorization requests on their way, wake-ups (a fleet's store carries them on its channel). */
  store: SharedStore;
  /** Where grants live, encrypted (`storeVault(store, keyring)`). */
  vault: TokenVault;
  /** The server's keyring: the authorization requests on their way (they hold the PKCE verifier) are sealed with it. */
  keyring: Keyring;
  connections: readonly ConnectionConfig[];
  /** The OAuth client side of each connection. */
  flowFor?: (config: ConnectionConfig) => AuthorizationFlow;
  /** How long a client's check of a pending connect holds for the person (default 20 s; 0 answers at once). */
  pendingWaitMs?: number;
  /** Refresh a grant this long before it expires (default 60 s). */
  refreshSkewMs?: number;
  /** Told of every connection made, used, refreshed, revoked, disconnected or refused: never a token. */
  onEvent?: (event: ConnectionEvent) => void;
  /** The clock (tests). */
  now?: () => number;
}

/** What `attach` needs of a server: the controls' host, and where `ctx.ask.connect` finds these connections. */
export interface ConnectionHost extends ControlHost {
  useConnections?(connector: Pick<Connections, 'token'>): unknown;
}

const NAME = /^[a-z0-9][a-z0-9-]{0,31}$/;
const WAKE_TOPIC = 'mrtr:connections:wake';
/** Reads and revocations a disconnect makes while other instances keep refreshing the grant under it. */
const DISCONNECT_TRIES = 3;

export class Connections implements ConnectionPages {
  private readonly configs = new Map<string, ConnectionConfig>();
  private readonly flows = new Map<string, AuthorizationFlow>();
  private readonly grants: UsableGrants;
  private readonly routes: ConnectionPages[];
  private readonly wakeups = new Wakeups();
  private readonly fleet: FleetWakeups | undefined;
  private readonly now: () => number;
  private readonly pendingWaitMs: number;
  private readonly told: (event: ConnectionEvent) => void;
  private host: ControlHost | undefined;

  constructor(private readonly options: ConnectionsOptions) {
    if (!options?.store) throw new ConnectionsUsageError('Connections needs a store');
    if (!options.vault)
      throw new ConnectionsUsageError('Connections needs a vault (storeVault(store, keyring))');
    if (!(options.keyring instanceof Keyring))
      throw new ConnectionsUsageError(
        "Connections needs the server's keyring (a Keyring, the vault's): it seals the authorization requests",
      );
    for (const config of options.connections ?? []) {
      if (!NAME.test(config.name))
        throw new ConnectionsUsageError(
          `Connections: connection name "${config.name}" must match ${NAME.source} (lower-case letters, digits, dashes)`,
        );
      if (this.configs.has(config.name))
        throw new ConnectionsUsageError(`Connections: connection "${config.name}" is declared twice`);
      this.configs.set(config.name, config);
    }
    const pendingWaitMs = options.pendingWaitMs ?? CONNECTIONS_DEFAULTS.pendingWaitMs;
    if (!(Number.isInteger(pendingWaitMs) && pendingWaitMs >= 0 && pendingWaitMs <= 120_000))
      throw new ConnectionsUsageError(
        'Connections: pendingWaitMs must be a whole number of ms from 0 to 120000',
      );
    const refreshSkewMs = options.refreshSkewMs ?? CONNECTIONS_DEFAULTS.refreshSkewMs;
    if (!(Number.isInteger(refreshSkewMs) && refreshSkewMs >= 0))
      throw new ConnectionsUsageError('Connections: refreshSkewMs must be a whole number of ms, 0 or more');
    this.pendingWaitMs = pendingWaitMs;
    this.now = options.now ?? Date.now;
    const told = options.onEvent ?? (() => {});
    this.told = (event) => {
      try {
        told(event);
      } catch {
        // A listener's failure is its own: what happened is recorded in the vault and the store regardless.
      }
    };
    this.grants = new UsableGrants({
      vault: options.vault,
      flow: (name) => this.flow(name),
      refreshSkewMs,
      now: this.now,
      refreshed: (owner, name) => this.event('refreshed', name, owner),
      dropped: (owner, name, why) => this.event('revoked', name, owner, { why }),
      revoke: (name, grant) => this.revokeAtIssuer(name, grant),
    });
    this.fleet = options.store.channel
      ? new FleetWakeups(
          options.store.channel,
          (key) => this.settledHere(key),
          (error) => this.event('channel_failed', '-', undefined, { error: String(error) }),
          WAKE_TOPIC,
        )
      : undefined;
    const signIn = () => this.host?.signIn;
    this.routes = [
      new ConnectPages({
        store: options.store,
        vault: options.vault,
        config: (name) => this.configs.get(name),
        flow: (name) => this.flow(name),
        signIn,
        settled: (record) => this.settled(record),
        onEvent: this.told,
        now: this.now,
        recordTtlMs: CONNECTIONS_DEFAULTS.connectTtlMs,
        pending: new PendingAuthorizations(options.store, options.keyring, {
          ttlMs: CONNECTIONS_DEFAULTS.authorizationTtlMs,
          perPerson: CONNECTIONS_DEFAULTS.authorizationsPerPerson,
          now: this.now,
        }),
      }),
      new ConnectionsPage({
        vault: options.vault,
        configs: [...this.configs.values()],
        signIn,
        disconnect: (owner, name) => this.disconnect(owner, name),
        onEvent: this.told,
        now: this.now,
      }),
    ];
  }

  /**
   * Serve the connect pages and the person's connections page on `server`'s listener, with its sign-in; its handlers'
   * `ctx.ask.connect(name)` then calls `token(ctx, name)`.
   */
  attach(server: ConnectionHost): this {
    this.host = server;
    server.page(this);
    server.useConnections?.(this);
    return this;
  }

  has(name: string): boolean {
    return this.configs.has(name);
  }

  /** The declared connections, as people see them (the console lists them). */
  declared(): Array<{ name: string; label: string }> {
    return [...this.configs.values()].map((c) => ({ name: c.name, label: c.label ?? c.name }));
  }

  /** The owner's own connections: what, where, since when; never a token. */
  list(owner: ConnectionOwner): Promise<ConnectionSummary[]> {
    return this.options.vault.list(owner);
  }

  /** How many people hold each connection: an admin's view, never whose or a token. */
  counts(): Promise<Record<string, number>> {
    return this.options.vault.counts();
  }

  handles(pathname: string): boolean {
    return this.routes.some((r) => r.handles(pathname));
  }

  handle(req: PageRequest, res: PageResponse): void {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    this.routes.find((r) => r.handles(pathname))?.handle(req, res);
  }

  /** The round's person's access token for `name`; asks them to connect (URL mode) when they have none. */
  token(ctx: ControlContext, name: string): Promise<string> {
    const config = this.config(name);
    const signIn = this.signIn(); // fails early without sign-in: the question would send the person nowhere
    return judged(ctx, 'connect', () =>
      connectedToken(ctx, config, {
        store: this.options.store,
        grants: this.grants,
        connectUrl: (id) => `${signIn.origin}/mrtr/connect/${id}`,
        ttlMs: CONNECTIONS_DEFAULTS.connectTtlMs,
        now: this.now,
        hold: (id, signal, stillPending) => this.hold(name, id, signal, stillPending),
        used: (owner) => this.event('used', name, owner),
      }),
    );
  }

  /** The owner's token (refreshed if due), or undefined when not connected: no question (a gateway's egress). */
  async tokenFor(owner: ConnectionOwner, name: string, signal?: AbortSignal): Promise<string | undefined> {
    this.config(name);
    const grant = await this.grants.current(owner, name, signal);
    if (!grant) return undefined;
    this.event('used', name, owner);
    return grant.accessToken;
  }

  /**
   * The third party refused the token (a 401): drop it so the next token(ctx) asks again, and revoke it at the
   * authorization server, which may still honour its refresh token. With `refused` (the refused token's
   * bearerDigest, as a 401 from the client's transport names it), a grant holding another token is kept: the refusal
   * was of an older one. The revocation runs in the background, within `revokeTimeoutMs`: the call's answer never
   * waits for it. Its `revoked` event says whether it was done.
   */
  async forget(owner: ConnectionOwner, name: string, why: string, refused?: string): Promise<void> {
    this.config(name);
    const grant = await this.options.vault.get(owner, name);
    if (!grant) return;
    // A late refusal of an older token: the grant was refreshed or connected again since.
    if (refused !== undefined && bearerDigest(grant.accessToken) !== refused) return;
    // Only this grant: one put between the read and the removal (a refresh, a new connect) stays.
    if (!(await this.options.vault.remove(owner, name, grant))) return;
    void this.revokeAtIssuer(name, grant).then((revokedAtIssuer) =>
      this.event('revoked', name, owner, { why, revokedAtIssuer }),
    );
  }

  /** Revoke at the authorization server (when it offers revocation) and remove. */
  async disconnect(owner: ConnectionOwner, name: string): Promise<boolean> {
    this.config(name);
    // A grant refreshed meanwhile (on another instance) is read again and revoked as well: none stays live there.
    for (let tries = 0; tries < DISCONNECT_TRIES; tries++) {
      const grant = await this.options.vault.get(owner, name);
      if (!grant) return false;
      // An authorization server out of reach, or slow past the limit: the grant is removed here all the same.
      const revoked = await this.revokeAtIssuer(name, grant);
      if (await this.options.vault.remove(owner, name, grant)) {
        this.event('disconnected', name, owner, { revokedAtIssuer: revoked });
        return true;
      }
    }
    // Refreshed on every try: removed unrevoked, which is still what the person asked for here.
    const removed = await this.options.vault.remove(owner, name);
    if (removed) this.event('disconnected', name, owner, { revokedAtIssuer: false });
    return removed;
  }

  /** Best effort: true when the authorization server took the revocation (or offers none) within the limit. */
  private async revokeAtIssuer(name: string, grant: TokenGrant): Promise<boolean> {
    const limit = new AbortController();
    const timer = setTimeout(
      () => limit.abort(new ConnectionRefused('unavailable', 'the revocation did not end in time')),
      CONNECTIONS_DEFAULTS.revokeTimeoutMs,
    );
    timer.unref?.();
    try {
      // Raced as well as signalled: a flow that ignores the signal still ends here on time.
      await untilAborted(this.flow(name).revoke(grant, limit.signal), limit.signal);
      return true;
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  private config(name: string): ConnectionConfig {
    const config = this.configs.get(name);
    if (!config)
      throw new ConnectionsUsageError(
        `no connection named "${name}" (declared: ${[...this.configs.keys()].join(', ') || 'none'})`,
      );
    return config;
  }

  private flow(name: string): AuthorizationFlow {
    let flow = this.flows.get(name);
    if (!flow) {
      flow = (this.options.flowFor ?? oauthFlow)(this.config(name));
      this.flows.set(name, flow);
    }
    return flow;
  }

  private signIn(): BrowserSignIn {
    const signIn = this.host?.signIn;
    if (!signIn)
      throw new ConnectionsUsageError(
        'Connections: attach(server) to a server with signIn configured: people connect on its pages',
      );
    return signIn;
  }

  /** A client came back to check: hold until the callback settles the record, or the limit. */
  private async hold(
    name: string,
    id: string,
    signal: AbortSignal | undefined,
    stillPending: () => Promise<boolean>,
  ): Promise<void> {
    if (this.pendingWaitMs === 0) return;
    await this.fleet?.listening(); // listening before the hold: a callback from now on reaches it
    this.event('waiting', name, undefined, { waitMs: this.pendingWaitMs }, id);
    const held = this.wakeups.wait(id, this.pendingWaitMs, signal);
    // A callback recorded after the caller's read but before the wait began woke nobody: read again.
    stillPending().then(
      (pending) => {
        if (!pending) this.wakeups.wake(id);
      },
      () => {},
    );
    return held;
  }

  /** The callback settled `record` on this instance: wake here, tell the fleet and the 2025 clients. */
  private settled(record: ConnectRecord): void {
    this.settledHere(record.id);
    this.fleet?.tell(record.id, true);
  }

  private settledHere(id: string): void {
    this.wakeups.wake(id);
    const signIn = this.host?.signIn;
    if (signIn) this.host?.urlElicitationDone?.(`${signIn.origin}/mrtr/connect/${id}`);
  }

  private event(
    action: ConnectionEvent['action'],
    connection: string,
    by: ConnectionOwner | undefined,
    detail?: Record<string, unknown>,
    id?: string,
  ): void {
    this.told({
      connection,
      action,
      ...(id === undefined ? {} : { id }),
      ...(by === undefined ? {} : { by: by.subject, byIssuer: by.issuer }),
      at: new Date(this.now()).toISOString(),
      ...(detail ? { detail } : {}),
    });
  }
}
