// The gateway's prompts, resources and resource templates: each upstream's, listed from it, cached, pinned, and
// shown to each caller only as the policy allows (its rules' `prompts` and `resources`). Prompts are named
// `<upstream>__<prompt>` as tools are; a URI gets the upstream's name before its scheme, `docs+file:///a.md`
// (names.ts). What the policy hides from a caller does not exist for them: not listed, not found, not completed,
// and its changes not signalled. A definition changed since it was pinned is withheld from everyone.
import type {
  JsonObject,
  PromptDefinition,
  ResourceDefinition,
  ResourceTemplateDefinition,
} from '../protocol/index.js';
import {
  type CatalogCaller,
  type CatalogKind,
  type Completers,
  type FoundResource,
  type PromptEntry,
  type ResourceEntry,
  type ResourceTemplateEntry,
  resourceTemplateEntry,
} from '../server/index.js';
import { callerOf } from './caller.js';
import { egressCallerOf, type SurfaceCatalog } from './catalog.js';
import { holderOf } from './holder.js';
import { exposedName, exposedUri, splitExposedName, splitExposedUri } from './names.js';
import { definitionDigest, type PinBook, type SeenTool, surfacePinUpstream } from './pins/index.js';
import type { Policy, SurfaceKind } from './policy/index.js';
import { relaySurface } from './relay-surface.js';
import { canonicalResourceUri, fillTemplate } from './resource-uri.js';
import type { Upstream } from './upstream.js';
import { completeUpstream, listSurface, surfaceRound } from './upstream-surface.js';

export interface GatewaySurfaceOptions {
  readonly upstreams: readonly Upstream[];
  readonly policy: () => Policy;
  readonly pins: () => PinBook;
  /** With a lock file given as locked, a definition never pinned is withheld too. */
  readonly locked: boolean;
  /** As the tools' catalog's: the book made to agree with the fleet's pins first (false: pin nothing new). */
  readonly settlePins?: (listed: readonly SeenTool[]) => Promise<boolean>;
  readonly refreshMs: number;
  readonly log: (line: string) => void;
  readonly tokenOf: (principal: object | undefined) => string | undefined;
  /** Upstreams still starting: lists go on without them rather than wait. */
  readonly starting: (upstream: string) => boolean;
  readonly now?: () => number;
}

/** One listed prompt, resource or template: whose it is, its own name (or URI), and the entry callers get. */
interface Listed<E> {
  readonly upstream: Upstream;
  readonly own: string;
  readonly digest: string;
  readonly entry: E;
}

interface SurfaceListing {
  readonly prompts: ReadonlyMap<string, Listed<PromptEntry>>;
  readonly resources: ReadonlyMap<string, Listed<ResourceEntry>>;
  readonly templates: readonly Listed<ResourceTemplateEntry>[];
  /** The upstream's own URIs of resources withheld (changed since pinned): not readable by URI either. */
  readonly withheld: ReadonlySet<string>;
  readonly at: number;
}

const EMPTY: Omit<SurfaceListing, 'at'> = {
  prompts: new Map(),
  resources: new Map(),
  templates: [],
  withheld: new Set(),
};

export class GatewaySurface implements SurfaceCatalog {
  readonly #byName = new Map<string, Upstream>();
  readonly #listings = new Map<string, SurfaceListing>();
  readonly #loading = new Map<string, Promise<SurfaceListing>>();
  readonly #watchers = new Set<() => void>();
  #generation = 0;
  readonly #now: () => number;

  constructor(private readonly options: GatewaySurfaceOptions) {
    this.#now = options.now ?? Date.now;
    for (const upstream of options.upstreams) this.#byName.set(upstream.name, upstream);
  }

  /** Forget an upstream's listing (it said its lists changed, a pin was accepted): the next request lists anew. */
  invalidate(upstream?: string): void {
    this.#generation++;
    if (upstream === undefined) this.#listings.clear();
    else this.#listings.delete(upstream);
    for (const w of [...this.#watchers]) w();
  }

  /** Whether the policy offers `kind` to anyone: discovery says so only then. */
  offers(kind: SurfaceKind): boolean {
    return this.options.policy().covers(kind);
  }

  async listPrompts(caller: CatalogCaller): Promise<PromptEntry[]> {
    const listings = await this.#all(caller);
    return listings.flatMap((l) =>
      [...l.prompts.values()].filter((p) => this.#allowed(caller, 'prompt', p)).map((p) => p.entry),
    );
  }

  async findPrompt(name: string, caller: CatalogCaller): Promise<PromptEntry | undefined> {
    const split = splitExposedName(name);
    const upstream = split && this.#byName.get(split.upstream);
    if (!upstream || this.options.starting(upstream.name)) return undefined;
    const prompt = (await this.#listing(upstream, caller)).prompts.get(name);
    if (!prompt || !this.#allowed(caller, 'prompt', prompt)) return undefined;
    return {
      ...prompt.entry,
      completions: this.#completers(caller, prompt.upstream, 'ref/prompt', prompt.own),
    };
  }

  async listResources(caller: CatalogCaller): Promise<ResourceEntry[]> {
    const listings = await this.#all(caller);
    return listings.flatMap((l) =>
      [...l.resources.values()].filter((r) => this.#allowed(caller, 'resource', r)).map((r) => r.entry),
    );
  }

  async listResourceTemplates(caller: CatalogCaller): Promise<ResourceTemplateEntry[]> {
    const listings = await this.#all(caller);
    return listings.flatMap((l) =>
      l.templates.filter((t) => this.#allowed(caller, 'resource', t)).map((t) => t.entry),
    );
  }

  /**
   * What resources/read runs for an exposed URI. A read is judged by the URI itself (a template's reads too), so a
   * rule on `docs/file:///handbook/*` covers every page a template makes there, and a deny on one page holds.
   */
  async findResource(uri: string, caller: CatalogCaller): Promise<FoundResource | undefined> {
    const split = splitExposedUri(uri);
    const upstream = split && this.#byName.get(split.upstream);
    if (!(split && upstream) || this.options.starting(upstream.name)) return undefined;
    // Judged and sent in one spelling: another (`x/../secret`, `%73ecret`) is answered as unknown.
    const own = canonicalResourceUri(split.uri);
    if (own === undefined) return undefined;
    const listing = await this.#listing(upstream, caller);
    if (listing.withheld.has(own)) return undefined;
    if (!this.#allowed(caller, 'resource', { upstream, own })) return undefined;
    const fixed = own === split.uri ? listing.resources.get(uri) : undefined;
    if (fixed) return { mrtr: fixed.entry.mrtr, handler: fixed.entry.handler, variables: {} };
    // Not listed (a link a tool returned, a template's page): the upstream answers, or says it has no such thing.
    const handler = this.#reader(upstream, own);
    return { mrtr: {}, handler, variables: {} };
  }

  async findResourceTemplate(
    uriTemplate: string,
    caller: CatalogCaller,
  ): Promise<ResourceTemplateEntry | undefined> {
    const split = splitExposedUri(uriTemplate);
    const upstream = split && this.#byName.get(split.upstream);
    if (!upstream || this.options.starting(upstream.name)) return undefined;
    const template = (await this.#listing(upstream, caller)).templates.find(
      (t) => t.entry.definition.uriTemplate === uriTemplate,
    );
    if (!template || !this.#allowed(caller, 'resource', template)) return undefined;
    return {
      ...template.entry,
      completions: this.#completers(caller, template.upstream, 'ref/resource', template.own),
    };
  }

  /** Tells `changed` of a change to what this caller sees of prompts or of resources (a signal is information). */
  watch(caller: CatalogCaller, changed: (kind: CatalogKind) => void): () => void {
    const seen: Partial<Record<'prompts' | 'resources', string>> = {};
    const look = () => {
      void this.#seen(caller).then(
        (now) => {
          for (const kind of ['prompts', 'resources'] as const) {
            if (seen[kind] !== undefined && seen[kind] !== now[kind]) changed(kind);
            seen[kind] = now[kind];
          }
        },
        () => {},
      );
    };
    look();
    this.#watchers.add(look);
    return () => this.#watchers.delete(look);
  }

  /** What a caller sees, as text to compare: names and definition digests (a changed definition is a change). */
  async #seen(caller: CatalogCaller): Promise<Record<'prompts' | 'resources', string>> {
    const listings = await this.#all(caller);
    const line = (l: Listed<unknown>) => `${l.upstream.name} ${l.own} ${l.digest}`;
    const prompts = listings.flatMap((l) => [...l.prompts.values()]);
    const resources = listings.flatMap((l) => [...l.resources.values(), ...l.templates]);
    return {
      prompts: prompts
        .filter((p) => this.#allowed(caller, 'prompt', p))
        .map(line)
        .join('\n'),
      resources: resources
        .filter((r) => this.#allowed(caller, 'resource', r))
        .map(line)
        .join('\n'),
    };
  }

  #allowed(caller: CatalogCaller, kind: SurfaceKind, item: { upstream: Upstream; own: string }): boolean {
    const who = callerOf(caller.principal);
    return (
      who !== undefined &&
      this.options.policy().allows(who, { kind, upstream: item.upstream.name, name: item.own }).allow
    );
  }

  /** The caller's completers for one prompt or template: each argument is completed by the upstream. */
  #completers(
    caller: CatalogCaller,
    upstream: Upstream,
    type: 'ref/prompt' | 'ref/resource',
    own: string,
  ): Completers {
    const egress = egressCallerOf(caller, this.options.tokenOf);
    const ref = type === 'ref/prompt' ? { type, name: own } : { type, uri: own };
    return {
      get: (argument) => async (value, context) => {
        const answer = await completeUpstream(
          upstream,
          egress,
          { ref, argument: { name: argument, value }, context: { arguments: context } },
          caller.signal,
        );
        const completion = answer.completion as { values?: unknown } | undefined;
        // The server checks the shape; an upstream that answers none suggests nothing.
        const offered = (Array.isArray(completion?.values) ? completion : { values: [] }) as {
          values: string[];
        };
        if (type === 'ref/prompt') return offered;
        // A template's value names a page: one the caller may not read is not suggested either.
        const readable = (v: unknown) => {
          const page =
            typeof v === 'string' ? canonicalResourceUri(fillTemplate(own, argument, v)) : undefined;
          return page !== undefined && this.#allowed(caller, 'resource', { upstream, own: page });
        };
        return { ...offered, values: offered.values.filter(readable) };
      },
    };
  }

  #reader(upstream: Upstream, own: string): ResourceEntry['handler'] {
    return async (_uri, ctx) => {
      const egress = egressCallerOf(ctx, this.options.tokenOf);
      const result = await relaySurface(
        ctx,
        upstream.name,
        `resource ${own}`,
        (requestState, inputResponses) =>
          surfaceRound(
            upstream,
            egress,
            'resources/read',
            { uri: own },
            { requestState, inputResponses, holder: holderOf(ctx), signal: ctx.signal },
          ),
      );
      return { ...result, contents: exposedContents(upstream.name, result.contents) } as never;
    };
  }

  async #all(caller: CatalogCaller): Promise<SurfaceListing[]> {
    // A policy that names no prompt or resource shows none: the upstreams are not asked for them at all.
    if (!this.offers('prompt') && !this.offers('resource')) return [];
    const up = this.options.upstreams.filter((u) => !this.options.starting(u.name));
    return Promise.all(up.map((u) => this.#listing(u, caller)));
  }

  async #listing(upstream: Upstream, caller: CatalogCaller): Promise<SurfaceListing> {
    const cached = this.#listings.get(upstream.name);
    if (cached && this.#now() - cached.at < this.options.refreshMs) return cached;
    let loading = this.#loading.get(upstream.name);
    if (!loading) {
      loading = this.#load(upstream, caller).finally(() => this.#loading.delete(upstream.name));
      this.#loading.set(upstream.name, loading);
    }
    return loading;
  }

  async #load(upstream: Upstream, caller: CatalogCaller): Promise<SurfaceListing> {
    const at = this.#now();
    const generation = this.#generation;
    let lists: Awaited<ReturnType<typeof listSurface>>;
    try {
      lists = await listSurface(upstream, egressCallerOf(caller, this.options.tokenOf), caller.signal);
    } catch (error) {
      this.options.log(
        `upstream ${upstream.name}: cannot list its prompts and resources: ${(error as Error).message}`,
      );
      return this.#listings.get(upstream.name) ?? { ...EMPTY, at };
    }
    const listed = (kind: 'prompt' | 'resource' | 'template', own: string, definition: object): SeenTool => ({
      upstream: surfacePinUpstream(upstream.name, kind),
      tool: own,
      definition: definition as JsonObject,
    });
    const settled = await (this.options.settlePins?.([
      ...lists.prompts.map((d) => listed('prompt', d.name, d)),
      ...lists.resources.map((d) => listed('resource', d.uri, d)),
      ...lists.templates.map((d) => listed('template', d.uriTemplate, d)),
    ]) ?? true);
    // Why a definition never pinned is withheld from this listing, if it is.
    const unpinned = !settled
      ? "not pinned, and the fleet's pins cannot be read"
      : this.options.locked
        ? 'not in the lock file'
        : undefined;
    const pins = { changed: false, unpinned };
    const withheld = new Set<string>();
    const prompts = new Map<string, Listed<PromptEntry>>();
    for (const definition of lists.prompts) {
      const name = exposedName(upstream.name, definition.name);
      if (!this.#kept(upstream, 'prompt', definition.name, definition, name, pins)) continue;
      prompts.set(name as string, this.#prompt(upstream, definition, name as string));
    }
    const resources = new Map<string, Listed<ResourceEntry>>();
    for (const definition of lists.resources) {
      const uri = exposedUri(upstream.name, definition.uri);
      if (!this.#kept(upstream, 'resource', definition.uri, definition, uri, pins)) {
        withheld.add(definition.uri);
        continue;
      }
      const entry: ResourceEntry = {
        definition: { ...definition, uri: uri as string },
        mrtr: {},
        handler: this.#reader(upstream, definition.uri),
      };
      resources.set(uri as string, { upstream, own: definition.uri, digest: digestOf(definition), entry });
    }
    const templates: Listed<ResourceTemplateEntry>[] = [];
    for (const definition of lists.templates) {
      const uriTemplate = exposedUri(upstream.name, definition.uriTemplate);
      if (!this.#kept(upstream, 'template', definition.uriTemplate, definition, uriTemplate, pins)) continue;
      const built = this.#template(upstream, definition, uriTemplate as string);
      if (built) templates.push(built);
    }
    if (pins.changed) this.options.pins().save();
    const listing = { prompts, resources, templates, withheld, at };
    if (generation === this.#generation) this.#listings.set(upstream.name, listing);
    return listing;
  }

  /** Whether a listed definition is served: a name the gateway can give it, and pinned (or pinned now). */
  #kept(
    upstream: Upstream,
    kind: 'prompt' | 'resource' | 'template',
    own: string,
    definition: object,
    exposed: string | undefined,
    pins: { changed: boolean; readonly unpinned: string | undefined },
  ): exposed is string {
    const what = `${kind} ${own}`;
    if (exposed === undefined) {
      this.options.log(`upstream ${upstream.name}: ${what} withheld: the gateway cannot name it`);
      return false;
    }
    const book = this.options.pins();
    const pinAs = surfacePinUpstream(upstream.name, kind);
    const check = book.check(pinAs, own, definition as JsonObject);
    if (check.status === 'changed') {
      this.options.log(
        `upstream ${upstream.name}: ${what} withheld: its definition changed since it was pinned (mrtr gateway pin --diff shows how; --accept serves it)`,
      );
      return false;
    }
    if (check.status === 'new') {
      if (pins.unpinned !== undefined) {
        this.options.log(`upstream ${upstream.name}: ${what} withheld: ${pins.unpinned}`);
        return false;
      }
      book.pin(pinAs, own, definition as JsonObject);
      pins.changed = true;
    }
    return true;
  }

  #prompt(upstream: Upstream, definition: PromptDefinition, name: string): Listed<PromptEntry> {
    const own = definition.name;
    const entry: PromptEntry = {
      definition: { ...definition, name },
      mrtr: {},
      completions: new Map(),
      handler: async (args, ctx) => {
        const egress = egressCallerOf(ctx, this.options.tokenOf);
        return (await relaySurface(ctx, upstream.name, `prompt ${own}`, (requestState, inputResponses) =>
          surfaceRound(
            upstream,
            egress,
            'prompts/get',
            { name: own, arguments: args },
            { requestState, inputResponses, holder: holderOf(ctx), signal: ctx.signal },
          ),
        )) as never;
      },
    };
    return { upstream, own, digest: digestOf(definition), entry };
  }

  #template(
    upstream: Upstream,
    definition: ResourceTemplateDefinition,
    uriTemplate: string,
  ): Listed<ResourceTemplateEntry> | undefined {
    try {
      // resources/read finds its reader through findResource; this one reads the same way if asked directly.
      const built = resourceTemplateEntry({ uriTemplate, name: definition.name }, (uri, ctx, variables) =>
        this.#reader(upstream, splitExposedUri(uri)?.uri ?? uri)(uri, ctx, variables),
      );
      const entry: ResourceTemplateEntry = { ...built, definition: { ...definition, uriTemplate } };
      return { upstream, own: definition.uriTemplate, digest: digestOf(definition), entry };
    } catch (error) {
      this.options.log(
        `upstream ${upstream.name}: template ${definition.uriTemplate} withheld: ${(error as Error).message}`,
      );
      return undefined;
    }
  }
}

function digestOf(definition: PromptDefinition | ResourceDefinition | ResourceTemplateDefinition): string {
  return definitionDigest(definition as unknown as JsonObject, 'surface');
}

/** A read's contents with each of the upstream's URIs named as the gateway names them. */
function exposedContents(upstream: string, contents: unknown): unknown {
  if (!Array.isArray(contents)) return [];
  return contents.map((c) =>
    c && typeof c === 'object' && typeof (c as { uri?: unknown }).uri === 'string'
      ? { ...c, uri: exposedUri(upstream, (c as { uri: string }).uri) ?? (c as { uri: string }).uri }
      : c,
  );
}
