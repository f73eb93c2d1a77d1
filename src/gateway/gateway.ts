// The gateway put together: an McpServer whose catalog is the upstreams' tools (filtered per caller by the policy),
// whose policy guard asks the controls a call needs before the forwarding handler calls the upstream, and whose
// replay guard, auth and audit trail are the ones `mrtr serve` uses. The policy can be swapped while it runs
// (SIGHUP): calls in progress keep going, and every later round is judged by the new one.
import { HumanControls, type HumanControlsOptions } from '../controls/index.js';
import type { JsonObject } from '../protocol/index.js';
import { McpServer, type McpServerOptions } from '../server/index.js';
import { withOptionGroups } from '../server/internal.js';
import type { SharedStore } from '../stores/index.js';
import { type ArgumentsPrep, GatewayCatalog } from './catalog.js';
import { GatewaySurface } from './catalog-surface.js';
import type { GatewayConfig } from './config.js';
import { UpstreamConnect } from './connect-upstream.js';
import { egressFor, type UpstreamConnections } from './egress/index.js';
import { forwardingHandler } from './forward-call.js';
import { splitExposedName } from './names.js';
import type { GatewayObserver } from './observer.js';
import { normalizePathArguments } from './paths.js';
import { FleetPins, type PinBook, pinKey, type SeenTool } from './pins/index.js';
import type { Decision, Policy, PolicyCaller } from './policy/index.js';
import { PolicyLink } from './policy-link.js';
import { RateLimiter } from './rate-limit.js';
import { Upstream } from './upstream.js';
import { UpstreamListener } from './upstream-listen.js';

export const GATEWAY_DEFAULTS = Object.freeze({
  /** How long an upstream's tool list is served from the cache before it is listed again. */
  refreshMs: 60_000,
  /** Time limit of one upstream request (a listing, a round). */
  upstreamTimeoutMs: 120_000,
  /** Upstream clients kept for per-caller credentials. */
  maxCallersPerUpstream: 1000,
});

export interface GatewayOptions {
  readonly config: GatewayConfig;
  /** The server's options: auth, sign-in, `state`, `rounds` (the replay store, the audit trail as an observer). */
  readonly server?: Partial<McpServerOptions>;
  /** Where approvals, step-ups and rate-limit buckets live: share it between instances. */
  readonly store: SharedStore;
  /** The human controls' other options (TOTP secrets, events). */
  readonly controls?: Omit<HumanControlsOptions, 'store'>;
  readonly pins: PinBook;
  /** Withhold tools that are not in the lock file (default: pin them at first sight). */
  readonly locked?: boolean;
  readonly log?: (line: string) => void;
  readonly refreshMs?: number;
  readonly upstreamTimeoutMs?: number;
  /**
   * The verified bearer token of the request a principal came with (`rememberingVerifier(…).tokenOf`): the subject
   * token of a per-caller token exchange. Never sent upstream itself.
   */
  readonly tokenOf?: (principal: object | undefined) => string | undefined;
  /** Told of each upstream round and each changed tool definition (metrics, the audit trail). */
  readonly observers?: readonly GatewayObserver[];
  /**
   * The people's connections (`Connections` from mrtr/connections, declared with `connectionConfigs(config)`):
   * required when an upstream's credentials are `type: oauth`.
   */
  readonly connections?: UpstreamConnections;
}

export class Gateway {
  readonly server: McpServer;
  readonly controls: HumanControls;
  readonly catalog: GatewayCatalog;
  readonly upstreams: readonly Upstream[];
  #policy: Policy;
  #config: GatewayConfig;
  #pins: PinBook;
  #loadedAt: number;
  #withdrawal: Promise<number> = Promise.resolve(0);
  readonly #prepare: ArgumentsPrep;
  readonly #specs: ReadonlyMap<string, GatewayConfig['upstreams'][number]>;
  readonly #listeners: readonly UpstreamListener[];
  /** The pins shared with the other instances, when the store is a fleet's (it has a channel: Redis). */
  readonly #fleetPins: FleetPins | undefined;

  constructor(options: GatewayOptions) {
    const log = options.log ?? (() => {});
    this.#config = options.config;
    this.#policy = options.config.policy;
    this.#pins = options.pins;
    this.#loadedAt = Date.now();
    const { channel } = options.store;
    this.#fleetPins =
      channel === undefined
        ? undefined
        : new FleetPins({
            store: options.store,
            channel,
            book: () => this.#pins,
            locked: options.locked ?? false,
            // A prompt's or resource's pin names its upstream `<upstream>#<kind>`.
            heard: (names) => {
              for (const name of new Set(names.map((n) => n.split('#')[0] as string)))
                this.catalog.invalidate(name);
            },
            log,
          });
    const fleetPins = this.#fleetPins;
    const settlePins = fleetPins && ((listed: readonly SeenTool[]) => fleetPins.settle(listed));
    const policy = () => this.#policy;
    const observers = options.observers ?? [];
    const timeoutMs = options.upstreamTimeoutMs ?? GATEWAY_DEFAULTS.upstreamTimeoutMs;
    this.upstreams = options.config.upstreams.map(
      (spec) =>
        new Upstream(spec, {
          egress: egressFor(spec.credentials, { upstream: spec.name, connections: options.connections }),
          log,
          timeoutMs,
          maxCallers: GATEWAY_DEFAULTS.maxCallersPerUpstream,
        }),
    );
    const specs = new Map(options.config.upstreams.map((s) => [s.name, s]));
    this.#specs = specs;
    const connects = new Map(
      options.config.upstreams.flatMap((s) =>
        s.credentials.type === 'oauth' && options.connections
          ? [
              [
                s.name,
                new UpstreamConnect(s.name, options.connections, options.store, () =>
                  this.catalog.invalidate(s.name),
                ),
              ] as const,
            ]
          : [],
      ),
    );
    // Every entry prepares its call's arguments once (tools/call applies it): the policy judges and the upstream is
    // sent that one object, so what was judged is what is sent. whatIf uses the same preparation.
    const prepare: ArgumentsPrep = (tool, args) => {
      const spec = specs.get(tool.upstream.name);
      return normalizePathArguments(args, {
        names: spec?.pathArguments,
        base: spec?.cwd,
        caseInsensitive: spec?.caseInsensitive,
      });
    };
    this.#prepare = prepare;
    const surface = new GatewaySurface({
      upstreams: this.upstreams,
      policy,
      pins: () => this.#pins,
      locked: options.locked ?? false,
      settlePins,
      refreshMs: options.refreshMs ?? GATEWAY_DEFAULTS.refreshMs,
      log,
      tokenOf: options.tokenOf ?? (() => undefined),
      starting: (name) => this.catalog.starting().includes(name),
    });
    this.catalog = new GatewayCatalog({
      surface,
      upstreams: this.upstreams,
      policy,
      pins: () => this.#pins,
      locked: options.locked ?? false,
      settlePins,
      handler: forwardingHandler(
        options.tokenOf ?? (() => undefined),
        (event) => {
          for (const o of observers) {
            try {
              o.upstreamRound?.(event);
            } catch {
              // A watcher's failure (metrics) is its own: the call goes on.
            }
          }
        },
        (name) => connects.get(name),
      ),
      prepare,
      refreshMs: options.refreshMs ?? GATEWAY_DEFAULTS.refreshMs,
      log,
      tokenOf: options.tokenOf ?? (() => undefined),
      personal: (name) => connects.get(name),
      definitionChanged: (change) =>
        Promise.all(observers.map((o) => o.definitionChanged?.(change))).then(() => undefined),
    });
    // The link needs the controls and the controls attach to the server the link is in: the link reads them when a
    // round comes, by then both exist.
    const policyLink = new PolicyLink({
      catalog: this.catalog,
      policy,
      controls: () => this.controls,
      rates: new RateLimiter(options.store),
    });
    const server = withOptionGroups(options.server ?? {});
    const { replay, links = [] } = server.rounds;
    this.server = new McpServer({
      name: 'mrtr-gateway',
      version: '0.1.0',
      instructions: `A gateway in front of ${this.upstreams.map((u) => u.name).join(', ')}: tools are named <upstream>__<tool>.`,
      ...server,
      catalog: this.catalog,
      rounds: {
        ...server.rounds,
        // Every round single-use even when no replay store was given: a client's retry of a final round (a dropped
        // connection) must get the recorded answer, not call the upstream a second time.
        replay: { ...replay, store: replay?.store ?? options.store },
        links: [...links, policyLink],
      },
    });
    this.controls = new HumanControls({ ...options.controls, store: options.store }).attach(this.server);
    // HTTP upstreams reached with one credential are listened to: a changed list is re-listed (and a changed
    // definition withheld) as soon as they say so, not at the next refresh.
    this.#listeners = this.upstreams.flatMap((u, i) =>
      u.spec.url === undefined || u.perCaller
        ? []
        : [
            new UpstreamListener({
              name: u.name,
              url: u.spec.url,
              egress: egressFor(options.config.upstreams[i]!.credentials),
              changed: () => this.catalog.invalidate(u.name),
              log,
            }),
          ],
    );
    // Upstreams start with the gateway, not at the first call: a slow one (npx fetching a package) is on its way
    // while callers connect, and they are told it is starting until it answers.
    this.started = this.catalog.start();
    // Listen for the fleet's accepts from the start, not from the first wait on `listening`.
    void this.#fleetPins?.listening();
  }

  /** Settles once every upstream started with the gateway has answered its first listing (or failed it). */
  readonly started: Promise<void>;

  /**
   * Settles once every HTTP upstream listened to has its stream of list changes up (or offers none), and, in a
   * fleet, once this instance hears the others' accepts.
   */
  get listening(): Promise<void> {
    return Promise.all([...this.#listeners.map((l) => l.listening), this.#fleetPins?.listening()]).then(
      () => undefined,
    );
  }

  /** Settles once the last accept or reload is shared with the fleet (at once without a fleet). */
  get pinsShared(): Promise<void> {
    return this.#fleetPins?.shared ?? Promise.resolve();
  }

  /** The policy in force. */
  get policy(): Policy {
    return this.#policy;
  }

  /** The config in force (its policy, upstreams and rules as written). */
  get config(): GatewayConfig {
    return this.#config;
  }

  /** When the config in force was loaded (start, or the last reload). */
  get loadedAt(): number {
    return this.#loadedAt;
  }

  /** The pinned tool definitions and the drift waiting for an admin. */
  get pins(): PinBook {
    return this.#pins;
  }

  /**
   * Pin the definition an upstream now lists for a drifted tool, save the lock file and serve it from the next
   * listing on — what `mrtr gateway pin --accept` and a SIGHUP do together. Returns whether there was such drift.
   */
  acceptDrift(upstream: string, tool: string): boolean {
    const drift = this.#pins.drift().find((d) => d.upstream === upstream && d.tool === tool);
    if (!drift) return false;
    this.#pins.pin(drift.upstream, drift.tool, drift.definition);
    this.#pins.save();
    this.#fleetPins?.share([pinKey(upstream, tool)]);
    this.catalog.invalidate(upstream);
    return true;
  }

  /**
   * What the policy in force would decide for `caller` calling `name` (`<upstream>__<tool>`) with `args`, with the
   * same path spellings a real call gets; nothing is called and no rate-limit token is used. Undefined for a name
   * that is no upstream's tool.
   */
  whatIf(caller: PolicyCaller, name: string, args: JsonObject): Decision | undefined {
    const split = splitExposedName(name);
    if (!split || !this.#specs.has(split.upstream)) return undefined;
    const upstream = this.upstreams.find((u) => u.name === split.upstream)!;
    const prepared = this.#prepare({ upstream }, args);
    return this.#policy.decide(caller, split, prepared);
  }

  /**
   * Take a new config's policy (and the lock file's pins, re-read); calls in progress keep going and are judged by it from their next round. Upstreams
   * are not changed by a reload (restart the gateway for that): returns what was not taken, for the log.
   */
  reload(config: GatewayConfig, pins?: PinBook): string[] {
    const ignored: string[] = [];
    const before = JSON.stringify(this.#config.upstreams);
    const replaced = config.policy.digest !== this.#policy.digest ? this.#policy.digest : undefined;
    if (JSON.stringify(config.upstreams) !== before)
      ignored.push('upstreams changed: restart the gateway to use the new upstreams');
    // The new policy spells its paths as the new config's upstreams do (case, cwd); the running ones send the old
    // spelling. Judging one spelling and sending another would let a path past a deny: keep the old policy.
    const pathSettings = (u: GatewayConfig['upstreams'][number]) =>
      JSON.stringify([u.cwd ?? null, u.pathArguments ?? null, u.caseInsensitive ?? false]);
    const moved = config.upstreams.find((u) => {
      const running = this.#specs.get(u.name);
      return running !== undefined && pathSettings(running) !== pathSettings(u);
    });
    if (moved) {
      ignored.push(
        `upstream ${moved.name} changed cwd, pathArguments or caseInsensitive: restart the gateway; the old policy stays in force`,
      );
      return ignored;
    }
    this.#policy = config.policy;
    this.#config = { ...this.#config, policy: config.policy, rules: config.rules };
    this.#loadedAt = Date.now();
    if (pins) {
      // What the admin changed in the lock file applies to the whole fleet, whatever its pinnedAt says.
      this.#fleetPins?.share(changedPins(this.#pins, pins));
      this.#pins = pins;
    }
    // Lists differ under the new policy: tell listening callers (each hears only of its own).
    this.catalog.invalidate();
    this.#withdrawal =
      replaced === undefined ? Promise.resolve(0) : this.#withdrawUnder(replaced, config.policy.digest);
    return ignored;
  }

  /**
   * The approval requests the last reload withdrew (asked under the policy it replaced), once they are withdrawn:
   * an approval of them could never be used, so nobody is left to decide them.
   */
  get withdrawal(): Promise<number> {
    return this.#withdrawal;
  }

  async #withdrawUnder(old: string, next: string): Promise<number> {
    const why = `the gateway policy it was asked under (version ${old.slice(0, 12)}) was replaced by version ${next.slice(0, 12)}`;
    try {
      return (await this.controls.withdraw((r) => r.effect.policy === old, why)).length;
    } catch {
      // A store that failed: the requests stay pending until they expire; a grant of them still never applies.
      return 0;
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([
      ...this.#listeners.map((l) => l.close()),
      this.#fleetPins?.close(),
      ...this.upstreams.map((u) => u.close()),
    ]);
  }
}

/** The keys `next` pins differently from `before` (or pins where it did not). */
function changedPins(before: PinBook, next: PinBook): string[] {
  return next
    .pins()
    .filter(({ upstream, tool, pin }) => before.get(upstream, tool)?.digest !== pin.digest)
    .map(({ upstream, tool }) => pinKey(upstream, tool));
}
