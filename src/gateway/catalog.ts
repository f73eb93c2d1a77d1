// What the gateway serves: every upstream's tools under `<upstream>__<tool>`, listed from the upstream, cached, and
// shown to each caller only as the policy allows. A tool the policy hides for a caller does not exist for that
// caller: not in its list or its pages, not findable by name (the answer is the one for an unknown name), and a
// change to it is not signalled. A tool whose definition changed since it was pinned is withheld from everyone
// until an admin accepts the change (pins.ts).
import type { JsonObject, ToolDefinition } from '../protocol/index.js';
import {
  type Catalog,
  type CatalogCaller,
  type CatalogKind,
  type ToolEntry,
  type ToolHandler,
  toolEntry,
} from '../server/index.js';
import { callerOf } from './caller.js';
import type { EgressCaller } from './egress/index.js';
import { exposedName, splitExposedName } from './names.js';
import type { DefinitionChange } from './observer.js';
import { definitionDigest, type PinBook, type SeenTool } from './pins/index.js';
import type { Policy, Screening } from './policy/index.js';
import { META_NOTICE, META_UPSTREAMS_STARTING, upstreamStarting } from './starting.js';
import type { Upstream } from './upstream.js';

/** One upstream tool as the gateway serves it. */
export interface GatewayTool {
  readonly upstream: Upstream;
  /** The tool's name upstream. */
  readonly tool: string;
  /** The name callers see. */
  readonly name: string;
  /** The upstream's definition as it was listed (and pinned). */
  readonly definition: ToolDefinition;
  /** Digest of that definition: consents and approvals bind it. */
  readonly digest: string;
  readonly entry: ToolEntry;
}

/** What the gateway does to arguments before they are judged and sent: the path spellings made one (paths.ts). */
export type ArgumentsPrep = (tool: Pick<GatewayTool, 'upstream'>, args: JsonObject) => JsonObject;

/** What runs a call to an upstream tool: the gateway's forwarding handler. */
export type ForwardingHandler = (tool: Omit<GatewayTool, 'entry'>) => ToolHandler<JsonObject>;

export interface GatewayCatalogOptions {
  readonly upstreams: readonly Upstream[];
  /** The policy in force (read on every request: a reload swaps it). */
  readonly policy: () => Policy;
  /** The pinned definitions in force (a reload swaps the book). */
  readonly pins: () => PinBook;
  /** With a lock file given as locked, a tool never pinned is withheld too. */
  readonly locked: boolean;
  /**
   * Makes the book agree with the fleet's pins before a listing is checked (fleet-pins.ts); false when it could
   * not, and the listing then pins nothing at first sight. Absent for a gateway alone.
   */
  readonly settlePins?: (listed: readonly SeenTool[]) => Promise<boolean>;
  readonly handler: ForwardingHandler;
  /** What every call's arguments go through first, once (the path spellings made one): judged and sent as prepared. */
  readonly prepare: ArgumentsPrep;
  /** How long an upstream's listing is served from the cache (ms). */
  readonly refreshMs: number;
  readonly log: (line: string) => void;
  /** The request's verified token, for a per-caller token exchange when listing. */
  readonly tokenOf: (principal: object | undefined) => string | undefined;
  /** Told once per changed definition seen (the audit trail records it); a failure is logged, not thrown. */
  readonly definitionChanged?: (change: DefinitionChange) => void | Promise<void>;
  readonly now?: () => number;
  /** The upstreams' prompts, resources and templates (catalog-surface.ts); without it the gateway serves tools only. */
  readonly surface?: SurfaceCatalog;
  /** An upstream that needs each person's own account (`credentials: type: oauth`), else undefined. */
  readonly personal?: (upstream: string) => PersonalUpstream | undefined;
}

/** An upstream each person reaches with their own account: listed with a caller's token only once they connected. */
export interface PersonalUpstream {
  /** Whether `caller` has a connection to it now (no question asked). */
  connected(caller: EgressCaller, signal?: AbortSignal): Promise<boolean>;
  /** The `<upstream>__connect` tool's handler: asks the person to connect. */
  readonly connectHandler: ToolHandler<JsonObject>;
}

/** The one tool of an upstream nobody has listed yet, for a person not connected to it: calling it connects. */
export const CONNECT_TOOL = 'connect';

/** What serves the upstreams' prompts, resources and templates beside their tools (catalog-surface.ts). */
export interface SurfaceCatalog
  extends Pick<
    Catalog,
    | 'listPrompts'
    | 'findPrompt'
    | 'listResources'
    | 'listResourceTemplates'
    | 'findResource'
    | 'findResourceTemplate'
  > {
  invalidate(upstream?: string): void;
  /** Whether the policy offers the kind to anyone. */
  offers(kind: 'prompt' | 'resource'): boolean;
  watch(caller: CatalogCaller, changed: (kind: CatalogKind) => void): () => void;
}

interface Screened {
  readonly tool: GatewayTool;
  readonly policy: Policy;
  readonly principal: CatalogCaller['principal'];
  readonly screening: Screening;
}

interface Listing {
  readonly tools: ReadonlyMap<string, GatewayTool>;
  readonly at: number;
  /** Tools of the upstream's list withheld from every caller (changed, not pinned, unusable). */
  readonly withheld: number;
}

export class GatewayCatalog implements Catalog {
  readonly sameForEveryone = false;
  readonly #byName = new Map<string, Upstream>();
  /** The gateway tool behind each entry this catalog made: a round's resolved entry names its tool without a lookup. */
  readonly #toolOf = new WeakMap<object, GatewayTool>();
  /** What the policy said of the tool each request found, kept for that request's call (screeningOf). */
  readonly #screened = new WeakMap<CatalogCaller, Screened>();
  readonly #listings = new Map<string, Listing>();
  /** A personal upstream's tools as known without listing it (pins, or the connect tool): for people not connected. */
  readonly #known = new Map<string, Listing>();
  readonly #connectTools = new Map<string, GatewayTool>();
  readonly #loading = new Map<string, Promise<Listing>>();
  readonly #watchers = new Set<() => void>();
  /** Each upstream's last listing failure, until a listing succeeds again (the console's health view). */
  readonly #failures = new Map<string, { at: number; message: string }>();
  /** Upstreams started with the gateway that have not answered their first listing yet: not waited for by lists. */
  readonly #starting = new Set<string>();
  /** The changed definition last told for each `<upstream>/<tool>`: a change is told once, not at every listing. */
  readonly #toldChanges = new Map<string, string>();
  /** Bumped by invalidate(): a listing that started before it is not kept as current. */
  #generation = 0;
  readonly #now: () => number;

  constructor(private readonly options: GatewayCatalogOptions) {
    this.#now = options.now ?? Date.now;
    for (const upstream of options.upstreams) {
      this.#byName.set(upstream.name, upstream);
      upstream.onToolsChanged(() => this.invalidate(upstream.name));
    }
  }

  /**
   * Start every upstream the gateway reaches with one credential now (a stdio child is spawned, an HTTP server
   * listed), not at the first caller's request. Until one answers, lists go on without it and say so, and a call to
   * its tools is told it is starting; once it answers, listening callers hear that their tools changed. Resolves
   * when each has answered or failed.
   */
  async start(): Promise<void> {
    const system: CatalogCaller = { principal: undefined, signal: new AbortController().signal };
    const shared = this.options.upstreams.filter((u) => !u.perCaller);
    for (const upstream of shared) this.#starting.add(upstream.name);
    await Promise.all(
      shared.map(async (upstream) => {
        try {
          await this.#listing(upstream, system);
        } catch (error) {
          // A lock file that could not be saved: told, and the next request lists again.
          this.options.log(`upstream ${upstream.name}: cannot start: ${(error as Error).message}`);
        } finally {
          this.#starting.delete(upstream.name);
          for (const w of [...this.#watchers]) w();
        }
      }),
    );
  }

  /** The upstreams still starting (their first listing not answered yet), in config order. */
  starting(): string[] {
    return this.options.upstreams.filter((u) => this.#starting.has(u.name)).map((u) => u.name);
  }

  /** Forget an upstream's listing (it said its tools changed, or a pin was accepted): the next request lists anew. */
  invalidate(upstream?: string): void {
    this.#generation++;
    if (upstream === undefined) {
      this.#listings.clear();
      this.#known.clear();
    } else {
      this.#listings.delete(upstream);
      this.#known.delete(upstream);
    }
    // A prompt's or resource's accepted pin names its upstream `<upstream>#<kind>`.
    this.options.surface?.invalidate(upstream?.split('#')[0]);
    for (const w of [...this.#watchers]) w();
  }

  /**
   * How each upstream answered its last listing: when it was listed, how many tools it serves, and the last failure
   * while it fails (an upstream never listed yet shows neither).
   */
  health(): Array<{
    upstream: string;
    listedAt?: number;
    tools: number;
    /** Tools withheld from every caller at the last listing. */
    withheld: number;
    failure?: { at: number; message: string };
  }> {
    return this.options.upstreams.map((u) => {
      const listing = this.#listings.get(u.name);
      const failure = this.#failures.get(u.name);
      return {
        upstream: u.name,
        ...(listing ? { listedAt: listing.at } : {}),
        tools: listing?.tools.size ?? 0,
        withheld: listing?.withheld ?? 0,
        ...(failure ? { failure } : {}),
      };
    });
  }

  /** Every tool of every upstream, hidden ones included: for `mrtr gateway pin` and the policy's what-if. */
  async allTools(caller: CatalogCaller): Promise<GatewayTool[]> {
    const listings = await Promise.all(this.options.upstreams.map((u) => this.#listing(u, caller)));
    return listings.flatMap((l) => [...l.tools.values()]);
  }

  /** The tool behind an exposed name if `caller` may see it, else undefined (as if it did not exist). */
  async route(name: string, caller: CatalogCaller): Promise<GatewayTool | undefined> {
    const split = splitExposedName(name);
    const upstream = split && this.#byName.get(split.upstream);
    if (!(split && upstream)) return undefined;
    // On an upstream not up yet, a tool this caller could be shown is said to be starting (not "unknown tool"); one
    // it could never see is unknown at once, as it will be once the upstream answers.
    if (this.#starting.has(upstream.name)) {
      if (this.#couldSee(upstream.name, split.tool, caller)) throw upstreamStarting(upstream.name);
      return undefined;
    }
    const personal = this.options.personal?.(upstream.name);
    // A call of the connect tool that connected the person: its next round finds it though the listing moved on.
    const tool =
      (await this.#listing(upstream, caller)).tools.get(split.tool) ??
      (personal && split.tool === CONNECT_TOOL ? this.#connectTool(upstream, personal) : undefined);
    const who = callerOf(caller.principal);
    if (!(tool && who)) return undefined;
    const policy = this.options.policy();
    const screening = policy.screen(who, { upstream: upstream.name, tool: tool.tool });
    if (!screening.visible) return undefined;
    this.#screened.set(caller, { tool, policy, principal: caller.principal, screening });
    return tool;
  }

  /**
   * The policy's screening of `tool` for the request that found it (route), taken once: its call is judged on it
   * instead of walking the rules again. Undefined when that request found another tool, or `policy` is not the one
   * it was screened under (a reload came between).
   */
  screeningOf(caller: CatalogCaller, tool: GatewayTool, policy: Policy): Screening | undefined {
    const kept = this.#screened.get(caller);
    if (!kept) return undefined;
    this.#screened.delete(caller);
    const same = kept.tool === tool && kept.policy === policy && kept.principal === caller.principal;
    return same ? kept.screening : undefined;
  }

  async listTools(caller: CatalogCaller): Promise<ToolEntry[]> {
    // Upstreams still starting are not waited for: the list says so (listNotice), and changes once they answer.
    const up = this.options.upstreams.filter((u) => !this.#starting.has(u.name));
    const listings = await Promise.all(up.map((u) => this.#listing(u, caller)));
    return listings
      .flatMap((l) => [...l.tools.values()])
      .filter((t) => this.#visible(t, caller))
      .map((t) => t.entry);
  }

  /** A tools/list while upstreams are starting names them in its `_meta`: the caller knows the list is partial. */
  listNotice(kind: CatalogKind): JsonObject | undefined {
    const starting = this.starting();
    if (kind !== 'tools' || starting.length === 0) return undefined;
    return {
      [META_UPSTREAMS_STARTING]: starting,
      [META_NOTICE]: `${starting.join(', ')} ${starting.length === 1 ? 'is' : 'are'} still starting: ${starting.length === 1 ? 'its' : 'their'} tools are not listed yet; notifications/tools/list_changed follows when they are`,
    };
  }

  async findTool(name: string, caller: CatalogCaller): Promise<ToolEntry | undefined> {
    return (await this.route(name, caller))?.entry;
  }

  /** The gateway tool behind an entry this catalog made (a round's `tool`), else undefined. */
  toolOf(entry: object | undefined): GatewayTool | undefined {
    return entry === undefined ? undefined : this.#toolOf.get(entry);
  }

  // Everyone may be offered tools: upstreams can list tools at any time, so saying so tells nothing of hidden ones.
  // Prompts and resources are offered when some rule could show them to someone: that too tells nothing of hidden ones.
  offers() {
    const prompts = this.options.surface?.offers('prompt') ?? false;
    const resources = this.options.surface?.offers('resource') ?? false;
    return { tools: true, prompts, resources, completions: prompts || resources };
  }

  watch(caller: CatalogCaller, changed: (kind: CatalogKind) => void): () => void {
    const tools = this.#watchTools(caller, changed);
    const surface = this.options.surface?.watch(caller, changed);
    return () => {
      tools();
      surface?.();
    };
  }

  #watchTools(caller: CatalogCaller, changed: (kind: CatalogKind) => void): () => void {
    let seen: string | undefined;
    const names = async () => (await this.listTools(caller)).map((t) => t.definition.name).join('\n');
    void names().then(
      (n) => {
        seen = n;
      },
      () => {},
    );
    const watcher = () => {
      void names().then(
        (now) => {
          // A caller hears only of a change to what it sees: a signal is itself information.
          if (seen !== undefined && now !== seen) changed('tools');
          seen = now;
        },
        () => {},
      );
    };
    this.#watchers.add(watcher);
    return () => this.#watchers.delete(watcher);
  }

  listPrompts(caller: CatalogCaller) {
    return this.options.surface?.listPrompts(caller) ?? [];
  }
  findPrompt(name: string, caller: CatalogCaller) {
    return this.options.surface?.findPrompt(name, caller);
  }
  listResources(caller: CatalogCaller) {
    return this.options.surface?.listResources(caller) ?? [];
  }
  listResourceTemplates(caller: CatalogCaller) {
    return this.options.surface?.listResourceTemplates(caller) ?? [];
  }
  findResource(uri: string, caller: CatalogCaller) {
    return this.options.surface?.findResource(uri, caller);
  }
  findResourceTemplate(uriTemplate: string, caller: CatalogCaller) {
    return this.options.surface?.findResourceTemplate(uriTemplate, caller);
  }

  #couldSee(upstream: string, tool: string, caller: CatalogCaller): boolean {
    const who = callerOf(caller.principal);
    return who !== undefined && this.options.policy().visible(who, { upstream, tool });
  }

  #visible(tool: GatewayTool, caller: CatalogCaller): boolean {
    const who = callerOf(caller.principal);
    return (
      who !== undefined &&
      this.options.policy().visible(who, { upstream: tool.upstream.name, tool: tool.tool })
    );
  }

  async #listing(upstream: Upstream, caller: CatalogCaller): Promise<Listing> {
    const cached = this.#listings.get(upstream.name);
    if (cached && this.#now() - cached.at < this.options.refreshMs) return cached;
    // A person not connected to a personal upstream cannot list it with their own token (it would answer 401).
    // They still see its tools, so that calling one asks them to connect: the last listing someone connected made,
    // else the pinned definitions (what the operator accepted), else one `<upstream>__connect` tool.
    const personal = this.options.personal?.(upstream.name);
    if (personal && !(await personal.connected(egressCallerOf(caller, this.options.tokenOf), caller.signal)))
      return cached ?? this.#knownListing(upstream, personal);
    let loading = this.#loading.get(upstream.name);
    if (!loading) {
      loading = this.#load(upstream, caller).finally(() => this.#loading.delete(upstream.name));
      this.#loading.set(upstream.name, loading);
    }
    return loading;
  }

  async #load(upstream: Upstream, caller: CatalogCaller): Promise<Listing> {
    const at = this.#now();
    const generation = this.#generation;
    let definitions: ToolDefinition[];
    try {
      definitions = await upstream.listTools(egressCallerOf(caller, this.options.tokenOf));
    } catch (error) {
      this.#failures.set(upstream.name, { at: this.#now(), message: (error as Error).message });
      this.options.log(`upstream ${upstream.name}: cannot list its tools: ${(error as Error).message}`);
      // An upstream that is down serves nothing until it answers again; the last good listing is kept meanwhile.
      const personal = this.options.personal?.(upstream.name);
      return (
        this.#listings.get(upstream.name) ??
        (personal ? this.#knownListing(upstream, personal) : { tools: new Map(), at, withheld: 0 })
      );
    }
    this.#failures.delete(upstream.name);
    const settled = await (this.options.settlePins?.(
      definitions.map((d) => ({
        upstream: upstream.name,
        tool: d.name,
        definition: d as unknown as JsonObject,
      })),
    ) ?? true);
    const locked = this.options.locked || !settled;
    const previous = this.#listings.get(upstream.name)?.tools;
    const tools = new Map<string, GatewayTool>();
    let pinned = false;
    let withheld = 0;
    for (const definition of definitions) {
      const name = exposedName(upstream.name, definition.name);
      if (name === undefined) {
        withheld++;
        this.options.log(
          `upstream ${upstream.name}: tool ${definition.name} withheld: its gateway name would exceed 128 characters`,
        );
        continue;
      }
      const digest = definitionDigest(definition as unknown as JsonObject);
      const check = this.options
        .pins()
        .check(upstream.name, definition.name, definition as unknown as JsonObject);
      if (check.status === 'changed') {
        withheld++;
        this.#tellChange(upstream.name, definition.name, name, check.pinned, check.seen);
        this.options.log(
          `upstream ${upstream.name}: tool ${definition.name} withheld: its definition changed since it was pinned (mrtr gateway pin --diff shows how; --accept serves it)`,
        );
        continue;
      }
      if (check.status === 'new') {
        if (locked) {
          withheld++;
          this.options.log(
            `upstream ${upstream.name}: tool ${definition.name} withheld: ${settled ? 'not in the lock file' : "not pinned, and the fleet's pins cannot be read"}`,
          );
          continue;
        }
        this.options.pins().pin(upstream.name, definition.name, definition as unknown as JsonObject);
        pinned = true;
      }
      const kept = previous?.get(definition.name);
      if (kept && kept.digest === digest) {
        tools.set(definition.name, kept);
        continue;
      }
      const built = this.#build(upstream, definition, name, digest);
      if (built) tools.set(definition.name, built);
      else withheld++;
    }
    if (pinned) this.options.pins().save();
    const listing = { tools, at, withheld };
    if (generation === this.#generation) this.#listings.set(upstream.name, listing);
    return listing;
  }

  /** A personal upstream's tools from its pins, or its connect tool when none is pinned (kept until invalidated). */
  #knownListing(upstream: Upstream, personal: PersonalUpstream): Listing {
    const kept = this.#known.get(upstream.name);
    if (kept) return kept;
    const tools = new Map<string, GatewayTool>();
    for (const { upstream: pinnedAt, tool, pin } of this.options.pins().pins()) {
      if (pinnedAt !== upstream.name || pin.definition.name !== tool) continue;
      const name = exposedName(upstream.name, tool);
      const definition = pin.definition as unknown as ToolDefinition;
      const built = name && this.#build(upstream, definition, name, pin.digest);
      if (built) tools.set(tool, built);
    }
    const connect = tools.size === 0 ? this.#connectTool(upstream, personal) : undefined;
    if (connect) tools.set(CONNECT_TOOL, connect);
    const listing = { tools, at: this.#now(), withheld: 0 };
    this.#known.set(upstream.name, listing);
    return listing;
  }

  /** `<upstream>__connect`, the same object each time (its next round must find the tool its first round did). */
  #connectTool(upstream: Upstream, personal: PersonalUpstream): GatewayTool | undefined {
    const kept = this.#connectTools.get(upstream.name);
    if (kept) return kept;
    const definition: ToolDefinition = {
      name: CONNECT_TOOL,
      title: `Connect your ${upstream.name} account`,
      description: `Connect your own ${upstream.name} account to this gateway (once): its tools are listed after that.`,
      inputSchema: { type: 'object', properties: {} },
    };
    const name = exposedName(upstream.name, CONNECT_TOOL) as string;
    const digest = definitionDigest(definition as unknown as JsonObject);
    const built = this.#build(upstream, definition, name, digest, personal.connectHandler);
    if (built) this.#connectTools.set(upstream.name, built);
    return built;
  }

  #tellChange(upstream: string, tool: string, name: string, pinned: string, seen: string): void {
    const key = `${upstream}/${tool}`;
    const tell = this.options.definitionChanged;
    if (!tell || this.#toldChanges.get(key) === seen) return;
    this.#toldChanges.set(key, seen);
    const drift = this.options
      .pins()
      .drift()
      .find((d) => d.upstream === upstream && d.tool === tool);
    const change = { upstream, tool, name, pinned, seen, changes: drift?.changes ?? [], at: this.#now() };
    const failed = (error: unknown) => {
      // Told again at the next listing: the trail may be back by then.
      this.#toldChanges.delete(key);
      this.options.log(
        `upstream ${upstream}: tool ${tool}: the definition change was not recorded: ${(error as Error).message}`,
      );
    };
    try {
      void Promise.resolve(tell(change)).catch(failed);
    } catch (error) {
      failed(error);
    }
  }

  #build(
    upstream: Upstream,
    definition: ToolDefinition,
    name: string,
    digest: string,
    handler?: ToolHandler<JsonObject>,
  ): GatewayTool | undefined {
    const base = { upstream, tool: definition.name, name, definition, digest };
    try {
      const built = toolEntry(
        {
          name,
          title: definition.title,
          description: definition.description,
          input: checkedSchema(definition.inputSchema as JsonObject | undefined),
          annotations: definition.annotations,
        },
        handler ?? (this.options.handler(base) as ToolHandler<JsonObject>),
      );
      // Callers see the upstream's schemas as it wrote them (its dialect included); its results are its own to keep to.
      if (definition.inputSchema !== undefined) built.definition.inputSchema = definition.inputSchema;
      if (definition.outputSchema !== undefined) built.definition.outputSchema = definition.outputSchema;
      const prepare = this.options.prepare;
      const entry: ToolEntry = { ...built, prepareArguments: (args) => prepare(base, args) };
      const tool = { ...base, entry };
      this.#toolOf.set(entry, tool);
      return tool;
    } catch (error) {
      this.options.log(
        `upstream ${upstream.name}: tool ${definition.name} withheld: ${(error as Error).message}`,
      );
      return undefined;
    }
  }
}

/**
 * The schema the gateway checks arguments with. Many servers (every one built on the 2025 SDKs) declare JSON Schema
 * draft-07; the keywords tool inputs use (type, properties, required, enum, items as one schema, bounds, formats)
 * mean the same in 2020-12, so the declaration is dropped for the check. The upstream still checks its own.
 */
function checkedSchema(schema: JsonObject | undefined): JsonObject | undefined {
  if (schema === undefined || typeof schema.$schema !== 'string') return schema;
  if (!/^https?:\/\/json-schema\.org\/draft-0[4-7]\/schema#?$/.test(schema.$schema)) return schema;
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}

/** Who an upstream request is made for, for its egress credentials (their own token, for a token exchange). */
export function egressCallerOf(
  caller: Pick<CatalogCaller, 'principal'>,
  tokenOf: (principal: object | undefined) => string | undefined,
): EgressCaller {
  const subjectToken = tokenOf(caller.principal);
  return {
    subject: caller.principal?.subject ?? '',
    ...(caller.principal?.issuer !== undefined ? { issuer: caller.principal.issuer } : {}),
    ...(subjectToken !== undefined ? { subjectToken } : {}),
  };
}
