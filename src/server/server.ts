// McpServer: the public face of the server room — register tools, prompts and resources, then serve them.

import { BearerAuth, BrowserSignIn } from '../auth/index.js';
import { REPLAY_GUARD_DEFAULTS, ReplayGuard } from '../guard/index.js';
import type { Implementation, ResourceDefinition, ResourceTemplateDefinition } from '../protocol/index.js';
import { createEphemeralKeyring, Keyring, purposeKeys, type StateCodecOptions } from '../state/index.js';
import { MemoryStore } from '../stores/index.js';
import type { Catalog } from './catalog/catalog.js';
import type { AskConnector } from './context.js';
import { SERVER_DEFAULTS } from './defaults.js';
import { Dispatcher, type TasksSetup } from './dispatch.js';
import { type Logger, stderrLogger } from './environment.js';
import { InvalidOptionError, registrationError } from './errors.js';
import type {
  CompletionHandler,
  HandlerOptions,
  PromptHandler,
  PromptOptions,
  ResourceHandler,
  ToolHandler,
  ToolOptions,
} from './handlers.js';
import {
  type HttpEndpoint,
  HttpServerTransport,
  type HttpServerTransportOptions,
  type PageRoutes,
} from './http.js';
import type { HttpEdgeSettings, LegacyClientOptions, ResolvedHttpEdge, SignInSetup } from './http-edge.js';
import { LegacyBridge, type LegacyBridgeOptions } from './legacy/bridge.js';
import { checkIntegerOption, MAX_TIMER_MS } from './option-checks.js';
import { Registry } from './registry.js';
import type { ServerCore } from './request-handler.js';
import { type RequestStateCodec, SealedStateCodec } from './request-state.js';
import type { RoundGuard } from './round/guard.js';
import type { ArgumentSchema } from './schema-input.js';
import { scopeGuard } from './scope-guard.js';
import {
  type FlatServerOptions,
  isFlatOption,
  type ReadRoundOptions,
  type ServerRoundOptions,
  type ServerStateOptions,
  type TaskOptions,
  withOptionGroups,
} from './server-options.js';
import { type StdioOptions, serveStdio } from './stdio.js';

export interface McpServerOptions extends FlatServerOptions {
  name: string;
  version: string;
  title?: string;
  instructions?: string;
  /** How requestState is sealed and bounded: keys, audience, maxBytes, compression, codec. */
  state?: ServerStateOptions;
  logger?: Logger;
  /** Page size for list methods (default 100). */
  pageSize?: number;
  /** ttlMs on list results, discovery and resources/read (default 60 s). */
  cacheTtlMs?: number;
  /** Validate every result against the official schema before sending it (default false; tests turn it on). */
  validateResults?: boolean;
  /** What every round passes through and its bounds: maxRounds, timeouts, guards, observers, links, replay. */
  rounds?: ServerRoundOptions;
  /**
   * Make this server an OAuth 2.1 resource server (`mrtr/auth`): every HTTP request needs a bearer token the
   * verifier accepts, checked before anything else; the Protected Resource Metadata is served; `requiredScopes`
   * are checked against the token's scopes on every round. The principal is what requestState is bound to.
   * @deprecated Give `auth` to `mcpHttp(server, { auth })` or `listen({ auth })`; read here for one more release.
   */
  auth?: BearerAuth;
  /**
   * Browser sign-in for the server's own pages (`/mrtr/signin`, `/mrtr/session`): OIDC against the issuer that
   * mints the access tokens, and/or development sign-in with the tokens file (loopback only). Cookies are signed with
   * keys derived from `state.keys`, so a session opens on every instance that shares the keyring.
   * @deprecated Give `signIn` to `listen({ signIn })` or `mcpHttp(server, { signIn })`; read here for one more release.
   */
  signIn?: SignInSetup;
  /**
   * Serve 2025-era clients too (default true): `initialize`, sessions, SSE streams, and flows whose questions go
   * out as server-to-client requests (docs/compatibility.md). `false` refuses them with an error naming the version.
   * @deprecated Give `legacyClients` to `mcpHttp(server, { legacyClients })` or `listen({ legacyClients })`.
   */
  legacyClients?: boolean | LegacyClientOptions;
  /**
   * Serve this catalog instead of what `.tool()`, `.prompt()` and `.resource()` register (they then throw): tools,
   * prompts and resources found per caller, possibly changing while the server runs (a gateway's upstream entries).
   * Its entries run through the same round pipeline, guards and observers as registered ones.
   */
  catalog?: Catalog;
  /**
   * The tasks extension (docs/tasks.md): tools registered with `task` run as tasks for clients that declare it, and a
   * call that waits for an approver becomes one. On by default; `false` offers no tasks.
   */
  tasks?: false | TaskOptions;
}

/** `http()` and `listen()`: the transport's options, and the edge's sign-in and 2025 clients. */
export type HttpOptions = HttpServerTransportOptions & Pick<HttpEdgeSettings, 'signIn' | 'legacyClients'>;

/** Every option name but the flat ones, checked by the compiler: a typo (`guard:`) is refused, not ignored. */
const OPTION_NAMES: ReadonlySet<string> = new Set(
  Object.keys({
    name: true,
    version: true,
    title: true,
    instructions: true,
    state: true,
    logger: true,
    pageSize: true,
    cacheTtlMs: true,
    validateResults: true,
    rounds: true,
    auth: true,
    signIn: true,
    legacyClients: true,
    catalog: true,
    tasks: true,
  } satisfies Record<Exclude<keyof McpServerOptions, keyof FlatServerOptions>, true>),
);

/** What a catalog must answer: checked when the server is built, so a wrong object fails there, not per request. */
const CATALOG_METHODS = [
  'offers',
  'listTools',
  'findTool',
  'listPrompts',
  'findPrompt',
  'listResources',
  'listResourceTemplates',
  'findResource',
  'findResourceTemplate',
] as const satisfies ReadonlyArray<keyof Catalog>;

export class McpServer {
  /** What `.tool()` and the others register; undefined on a server built over another catalog. */
  private readonly registry: Registry | undefined;
  private readonly catalog: Catalog;
  private dispatcher: Dispatcher | undefined;
  private keyringInUse: Keyring | undefined;
  private browserSignIn: BrowserSignIn | undefined;
  private readonly extraPages: PageRoutes[] = [];
  /** The auth of the HTTP edge serving this server (listen, http, mcpHttp): the scope guard's implications and challenge. */
  private edgeAuth: BearerAuth | undefined;
  private readonly cancelListeners = new Set<(flowId: string) => void>();
  private connector: AskConnector | undefined;
  private bridge: LegacyBridge | undefined;

  /** The `state` and `rounds` groups, whichever spelling they were given in. */
  private readonly state: ServerStateOptions;
  private readonly rounds: ReadRoundOptions;

  constructor(private readonly options: McpServerOptions) {
    for (const key of Object.keys(options)) {
      if (!OPTION_NAMES.has(key) && !isFlatOption(key))
        throw new InvalidOptionError(
          `McpServer: unknown option "${key}" (known: ${[...OPTION_NAMES].join(', ')})`,
        );
    }
    ({ state: this.state, rounds: this.rounds } = withOptionGroups(options));
    checkIntegerOption('McpServer', 'pageSize', options.pageSize);
    checkIntegerOption('McpServer', 'cacheTtlMs', options.cacheTtlMs, { min: 0 });
    if (options.auth !== undefined && !(options.auth instanceof BearerAuth))
      throw new InvalidOptionError('McpServer: auth must be a BearerAuth from mrtr/auth');
    if (options.catalog === undefined) {
      this.registry = new Registry();
      this.catalog = this.registry;
    } else {
      checkCatalog(options.catalog);
      this.registry = undefined;
      this.catalog = options.catalog;
    }
  }

  tool<S extends ArgumentSchema | undefined = undefined>(
    options: ToolOptions<S>,
    handler: ToolHandler<S>,
  ): this {
    this.openRegistry('tool').addTool(options, handler);
    return this;
  }

  prompt(
    options: PromptOptions & { complete?: Record<string, CompletionHandler> },
    handler: PromptHandler,
  ): this {
    this.openRegistry('prompt').addPrompt(options, handler);
    return this;
  }

  resource(options: ResourceDefinition & HandlerOptions, handler: ResourceHandler): this {
    this.openRegistry('resource').addResource(options, handler);
    return this;
  }

  resourceTemplate(
    options: ResourceTemplateDefinition & HandlerOptions & { complete?: Record<string, CompletionHandler> },
    handler: ResourceHandler,
  ): this {
    this.openRegistry('resourceTemplate').addTemplate(options, handler);
    return this;
  }

  /** The transport-independent request handler (built on first use; registration closes then). */
  get core(): ServerCore {
    if (!this.dispatcher) {
      const o = this.options;
      const serverInfo: Implementation = { name: o.name, version: o.version };
      if (o.title !== undefined) serverInfo.title = o.title;
      this.dispatcher = new Dispatcher(this.catalog, {
        serverInfo,
        instructions: o.instructions,
        codec: this.state.codec ?? this.defaultCodec(),
        logger: this.logger,
        pageSize: o.pageSize ?? SERVER_DEFAULTS.pageSize,
        maxRounds: this.rounds.maxRounds ?? SERVER_DEFAULTS.maxRounds,
        listTtlMs: o.cacheTtlMs ?? SERVER_DEFAULTS.cacheTtlMs,
        validateResults: o.validateResults ?? false,
        handlerTimeoutMs: this.rounds.handlerTimeoutMs ?? SERVER_DEFAULTS.handlerTimeoutMs,
        hookTimeoutMs: this.rounds.hookTimeoutMs ?? SERVER_DEFAULTS.hookTimeoutMs,
        guards: this.guards(),
        observers: this.rounds.observers,
        links: this.rounds.links,
        connector: () => this.connector,
        ...(o.tasks === false ? {} : { tasks: this.tasksSetup(o.tasks ?? {}) }),
      });
    }
    return this.dispatcher;
  }

  /**
   * Stop this server's background work: its tasks' checks and running rounds (their answers dropped). The tasks
   * themselves live on in the store: another instance runs them on once their claims lapse. Closing an HTTP
   * endpoint does this too.
   */
  close(): void {
    this.dispatcher?.close();
  }

  /**
   * A Streamable HTTP transport; use `.listener` with your own node:http server, or `.listen()`. `signIn` and
   * `legacyClients` here take the place of this server's (deprecated) options of the same names.
   */
  http(options: HttpOptions = {}): HttpServerTransport {
    return this.transportFor(options).transport;
  }

  private transportFor(options: HttpOptions): { transport: HttpServerTransport; legacy?: LegacyBridge } {
    const { signIn, legacyClients, ...rest } = options;
    const edge = this.httpEdge({
      ...('signIn' in options ? { signIn } : {}),
      ...('legacyClients' in options ? { legacyClients } : {}),
      ...('auth' in options ? { auth: options.auth } : {}),
    });
    const auth = options.authenticate ? {} : { auth: edge.auth };
    const pages = edge.pages.length > 0 ? { pages: routesOf(edge.pages) } : {};
    const transport = new HttpServerTransport(this.core, {
      logger: this.logger,
      ...auth,
      ...pages,
      ...(edge.observers?.length ? { observers: edge.observers } : {}),
      ...(edge.legacy ? { legacy: edge.legacy, legacyHttp: edge.legacyHttp } : {}),
      ...rest,
    });
    return edge.legacy ? { transport, legacy: edge.legacy } : { transport };
  }

  /**
   * The HTTP edge as a serving side sees it (`http()`, `mcpHttp`): what `edge` names, else this server's own
   * (deprecated) `auth`, `signIn` and `legacyClients` options. Internal: not part of the public API.
   */
  httpEdge(edge: HttpEdgeSettings): ResolvedHttpEdge {
    // An edge's `auth: undefined` (a config's `prod ? auth : undefined`) must not switch the server's own auth off.
    const auth = edge.auth ?? this.options.auth;
    this.edgeAuth = auth;
    const signIn = 'signIn' in edge ? this.signInFor(edge.signIn, auth) : this.signIn;
    const legacy = 'legacyClients' in edge ? this.legacyBridgeFor(edge.legacyClients) : this.legacyBridge;
    const setting = 'legacyClients' in edge ? edge.legacyClients : this.options.legacyClients;
    const tuning = typeof setting === 'object' ? setting : {};
    return {
      core: this.core,
      logger: this.logger,
      auth,
      pages: [...(signIn ? [signIn] : []), ...this.extraPages],
      observers: this.rounds.observers,
      legacy,
      legacyHttp: {
        ...(tuning.retryMs === undefined ? {} : { retryMs: tuning.retryMs }),
        ...(tuning.pollAfterMs === undefined ? {} : { pollAfterMs: tuning.pollAfterMs }),
      },
    };
  }

  /**
   * Serve more pages beside the MCP endpoint on the same listener (the human controls' approvals and step-up pages),
   * with the same Host and Origin rules. Add them before `http()` or `listen()`.
   */
  page(routes: PageRoutes): this {
    this.extraPages.push(routes);
    return this;
  }

  /**
   * A person finished on the server's own page what a URL-mode question sent them to do: 2025-era clients waiting on
   * that URL through the bridge are told (notifications/elicitation/complete) and their flow goes on at once.
   */
  urlElicitationDone(url: string): void {
    this.bridge?.urlElicitationDone(url);
  }

  /**
   * Be told the flow id of every task its caller cancels on this instance: the human controls withdraw the approval
   * requests that flow left pending, so nobody decides what no longer waits.
   */
  onFlowCancelled(listener: (flowId: string) => void): void {
    this.cancelListeners.add(listener);
  }

  /**
   * What `ctx.ask.connect(name)` calls in this server's handlers: `Connections.attach(server)` registers itself here
   * (mrtr/connections), so the server needs no import of it.
   */
  useConnections(connector: AskConnector): this {
    this.connector = connector;
    return this;
  }

  /** The bearer authentication the `auth` option set up (pages with a JSON API check callers with it). */
  get bearerAuth(): BearerAuth | undefined {
    return this.options.auth;
  }

  /** The bridge that serves 2025-era clients (undefined with `legacyClients: false`). */
  get legacyBridge(): LegacyBridge | undefined {
    if (this.bridge) return this.bridge;
    this.bridge = this.legacyBridgeFor(this.options.legacyClients);
    return this.bridge;
  }

  /** A bridge for 2025-era clients set up as `setting` says (default on). */
  private legacyBridgeFor(setting: boolean | LegacyClientOptions | undefined): LegacyBridge | undefined {
    if (setting === false) return undefined;
    const core = this.core; // the keyring is settled when the core is built
    const o = typeof setting === 'object' ? setting : {};
    const keyring = this.keyringInUse ?? createEphemeralKeyring();
    const store = o.store ?? this.rounds.replay?.store;
    return new LegacyBridge(core, {
      sessionKeys: purposeKeys(keyring, 'mrtr/legacy-session'),
      logger: this.logger,
      ...(store ? { store } : {}),
      storeTimeoutMs: this.rounds.hookTimeoutMs ?? SERVER_DEFAULTS.hookTimeoutMs,
      ...(o.relay ? { relay: o.relay } : {}),
      ...(o.sessionMaxAgeMs === undefined ? {} : { sessionMaxAgeMs: o.sessionMaxAgeMs }),
      ...(o.answerTimeoutMs === undefined ? {} : { answerTimeoutMs: o.answerTimeoutMs }),
      ...pendingLimits(o),
    });
  }

  /** The browser sign-in the `signIn` option set up (for pages that need to know who opened them). */
  get signIn(): BrowserSignIn | undefined {
    if (this.browserSignIn) return this.browserSignIn;
    this.browserSignIn = this.signInFor(this.options.signIn, this.options.auth);
    return this.browserSignIn;
  }

  /** Browser sign-in set up as `setup` says, its cookies signed with keys derived from this server's keyring. */
  private signInFor(setup: SignInSetup | undefined, auth: BearerAuth | undefined): BrowserSignIn | undefined {
    if (!setup) return undefined;
    void this.core; // the keyring is settled when the core is built
    const keyring = this.keyringInUse;
    if (!keyring)
      throw new InvalidOptionError(
        'McpServer: signIn needs state.keys (its cookies are signed with keys derived from them)',
      );
    const origin = setup.origin ?? (auth ? new URL(auth.resource).origin : undefined);
    if (!origin)
      throw new InvalidOptionError('McpServer: signIn needs an origin (or auth, whose resource gives one)');
    return new BrowserSignIn({
      keys: purposeKeys(keyring, 'mrtr/page-session'),
      origin,
      ...(setup.oidc ? { oidc: setup.oidc } : {}),
      ...(setup.devTokens ? { devTokens: setup.devTokens } : {}),
      ...(setup.sessionTtlMs === undefined ? {} : { sessionTtlMs: setup.sessionTtlMs }),
    });
  }

  async listen(options: HttpOptions = {}): Promise<HttpEndpoint> {
    const { transport, legacy } = this.transportFor(options);
    // With a relay, answers from other instances must reach this one before it asks anything.
    await legacy?.ready();
    return transport.listen();
  }

  stdio(options: StdioOptions = {}): Promise<void> {
    const observers = this.rounds.observers;
    const legacy = this.legacyBridge;
    return serveStdio(this.core, {
      logger: this.logger,
      ...(observers?.length ? { observers } : {}),
      ...(legacy ? { legacy } : {}),
      ...options,
    });
  }

  /**
   * The scope check comes first (a caller without the scopes is answered 403 before anything is read or counted),
   * then the replay guard (a replayed round is refused before any other guard spends work on it), then the author's.
   */
  private guards(): RoundGuard[] {
    const { guards: given = [], replay, handlerTimeoutMs, hookTimeoutMs } = this.rounds;
    const guards = [...given];
    if (replay?.store) {
      // A claim must outlive the round it protects: by default, the server's time limit plus a margin.
      const leaseMs = (handlerTimeoutMs ?? SERVER_DEFAULTS.handlerTimeoutMs) + 10_000;
      // A retry waiting on a dead instance's claim must hear "retry shortly" (503) before the guard's own time
      // limit answers a bare internal error: wait at most half of it.
      const hookMs = hookTimeoutMs ?? SERVER_DEFAULTS.hookTimeoutMs;
      const waitMs = Math.min(REPLAY_GUARD_DEFAULTS.waitMs, Math.floor(hookMs / 2));
      const { store, ...tuning } = replay;
      guards.unshift(new ReplayGuard(store, { leaseMs, waitMs, ...tuning }));
    } else if (replay)
      // Only the flat spelling gets here: a grouped replay without a store is refused at construction.
      throw new InvalidOptionError(
        'McpServer: replay options were given without a replayStore (the replay guard needs one): pass replayStore, or leave replay out',
      );
    // Another catalog's entries may come and go, each with its own requiredScopes: it is always checked (fail closed).
    if (this.registry?.requiresScopes() ?? true) {
      guards.unshift(scopeGuard(() => this.edgeAuth ?? this.options.auth));
    }
    return guards;
  }

  private tasksSetup(t: TaskOptions): TasksSetup {
    if (t === null || typeof t !== 'object')
      throw new InvalidOptionError(
        'McpServer: tasks must be false or { store?, ttlMs?, pollIntervalMs?, leaseMs?, maxPerPrincipal? }',
      );
    checkIntegerOption('McpServer', 'tasks.ttlMs', t.ttlMs, { max: 0xffff_ffff });
    checkIntegerOption('McpServer', 'tasks.pollIntervalMs', t.pollIntervalMs, { max: MAX_TIMER_MS });
    checkIntegerOption('McpServer', 'tasks.leaseMs', t.leaseMs, { max: MAX_TIMER_MS });
    // Its list of tasks is one store value: 10 000 entries stay well under a store's value limit.
    checkIntegerOption('McpServer', 'tasks.maxPerPrincipal', t.maxPerPrincipal, { max: 10_000 });
    return {
      store: t.store ?? this.rounds.replay?.store ?? new MemoryStore(),
      ttlMs: t.ttlMs ?? SERVER_DEFAULTS.taskTtlMs,
      pollIntervalMs: t.pollIntervalMs ?? SERVER_DEFAULTS.taskPollIntervalMs,
      leaseMs: t.leaseMs ?? SERVER_DEFAULTS.taskLeaseMs,
      maxPerPrincipal: t.maxPerPrincipal ?? SERVER_DEFAULTS.taskMaxPerPrincipal,
      cancelled: (flowId) => {
        for (const listener of this.cancelListeners) listener(flowId);
      },
    };
  }

  private get logger(): Logger {
    return this.options.logger ?? stderrLogger;
  }

  private defaultCodec(): RequestStateCodec {
    const { keys, audience, compression, maxBytes } = this.state;
    const spec = keys ?? process.env.MRTR_STATE_KEYS;
    let keyring: Keyring;
    if (spec instanceof Keyring) keyring = spec;
    else if (spec !== undefined && spec.trim() !== '') keyring = Keyring.fromSpec(spec);
    else {
      keyring = createEphemeralKeyring();
      this.logger.warn(
        { server: this.options.name },
        'no requestState keys configured (MRTR_STATE_KEYS): using a per-process key. Multi-round calls will fail ' +
          'when another instance takes the next round — give every instance of a fleet the same keyring',
      );
    }
    this.keyringInUse = keyring;
    const codecOptions: StateCodecOptions = { keyring, audience: audience ?? this.options.name };
    if (compression !== undefined) codecOptions.compression = compression;
    if (maxBytes !== undefined) codecOptions.maxTokenBytes = maxBytes;
    return new SealedStateCodec(codecOptions);
  }

  private openRegistry(what: string): Registry {
    if (!this.registry)
      throw registrationError(
        `McpServer.${what}(): this server serves the catalog given in its options; add entries to that catalog instead`,
      );
    if (this.dispatcher) throw registrationError('register tools, prompts and resources before serving');
    return this.registry;
  }
}

function checkCatalog(catalog: Catalog): void {
  const c = catalog as unknown as Partial<Record<string, unknown>> | null;
  const missing = CATALOG_METHODS.filter((name) => typeof c?.[name] !== 'function');
  if (missing.length > 0)
    throw new InvalidOptionError(`McpServer: catalog needs the Catalog methods ${missing.join(', ')}`);
  if (typeof c?.sameForEveryone !== 'boolean')
    throw new InvalidOptionError(
      'McpServer: catalog.sameForEveryone must be true or false (whether every caller sees the same lists)',
    );
  if (c.watch !== undefined && typeof c.watch !== 'function')
    throw new InvalidOptionError('McpServer: catalog.watch, when present, must be a function');
}

/** One PageRoutes over several: the first that handles a path answers it. */
function routesOf(routes: readonly PageRoutes[]): PageRoutes {
  if (routes.length === 1) return routes[0]!;
  return {
    handles: (pathname) => routes.some((r) => r.handles(pathname)),
    handle(req, res) {
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      const pathname = q < 0 ? url : url.slice(0, q);
      routes.find((r) => r.handles(pathname))?.handle(req, res);
    },
  };
}

/** The bridge's bounds on waiting questions that the options name (the others keep LEGACY_DEFAULTS). */
function pendingLimits(o: LegacyClientOptions): Partial<LegacyBridgeOptions> {
  const keys = [
    'maxPendingPerPrincipal',
    'maxSessionsPerPrincipal',
    'maxPendingPerSession',
    'maxPendingAnswers',
  ] as const;
  return Object.fromEntries(keys.filter((k) => o[k] !== undefined).map((k) => [k, o[k]]));
}
