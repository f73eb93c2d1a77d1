// The seam between the methods and what a server serves: every method finds its tools, prompts and resources
// through a Catalog, for one caller. The registry is the static one; a gateway's catalog holds upstream entries that
// change at run time and filters them per caller.

import type { JsonObject } from '../../protocol/index.js';
import type { Principal } from '../context.js';
import type { MaybePromise } from '../maybe-async.js';
import type {
  FoundResource,
  PromptEntry,
  ResourceEntry,
  ResourceTemplateEntry,
  ToolEntry,
} from './entries.js';

/**
 * The request as a catalog sees it: who is calling, and a signal that aborts when the client goes away (an upstream
 * lookup may stop then). A `RequestEnvironment` is one, so the methods pass theirs as it is.
 */
export interface CatalogCaller {
  readonly principal: Principal | undefined;
  readonly signal: AbortSignal;
  /** Set when the request came from a 2025 client through the bridge: the revision that client speaks. */
  readonly bridged?: string | undefined;
}

/** The lists a change signal names: `resources` covers fixed resources and templates (resources/list_changed). */
export type CatalogKind = 'tools' | 'prompts' | 'resources';

/** What server/discover announces to one caller: the kinds of entries it can find here. */
export interface CatalogOffer {
  readonly tools: boolean;
  readonly prompts: boolean;
  /** Fixed resources or templates. */
  readonly resources: boolean;
  /** Completers: any prompt or resource template. */
  readonly completions: boolean;
}

/**
 * Lists and finds what a server serves, for one caller. Every answer may be a promise; a synchronous catalog (the
 * registry) answers at once, so its requests stay free of promises and microtasks.
 *
 * A catalog that filters per caller must answer as if a hidden entry did not exist: `find*` returns undefined for it
 * (the methods then answer exactly as for an unknown name), `list*` leaves it out (pages are cut from the caller's
 * own list), `offers` shows nothing only hidden entries would show, and `watch` tells a caller only of changes to
 * what that caller sees — a signal is itself information.
 */
export interface Catalog {
  /**
   * True when every caller gets the same lists and discovery: they are then marked `cacheScope: "public"`, and
   * shared caches may serve one caller's listing to another. A catalog that filters per caller says false.
   */
  readonly sameForEveryone: boolean;
  offers(caller: CatalogCaller): MaybePromise<CatalogOffer>;
  /** The caller's tools, in a stable order (tools/list pages over it). */
  listTools(caller: CatalogCaller): MaybePromise<readonly ToolEntry[]>;
  findTool(name: string, caller: CatalogCaller): MaybePromise<ToolEntry | undefined>;
  listPrompts(caller: CatalogCaller): MaybePromise<readonly PromptEntry[]>;
  findPrompt(name: string, caller: CatalogCaller): MaybePromise<PromptEntry | undefined>;
  listResources(caller: CatalogCaller): MaybePromise<readonly ResourceEntry[]>;
  listResourceTemplates(caller: CatalogCaller): MaybePromise<readonly ResourceTemplateEntry[]>;
  /** What resources/read runs for `uri`: a fixed resource first, then the first template that matches. */
  findResource(uri: string, caller: CatalogCaller): MaybePromise<FoundResource | undefined>;
  /** The template whose URI template is exactly `uriTemplate` (completion/complete's `ref/resource`). */
  findResourceTemplate(
    uriTemplate: string,
    caller: CatalogCaller,
  ): MaybePromise<ResourceTemplateEntry | undefined>;
  /**
   * Only on a catalog whose lists can change: calls `changed(kind)` whenever what `caller` sees of `kind` may have
   * changed, until the returned function is called. The server then announces `listChanged` and tells clients
   * listening on `subscriptions/listen`.
   */
  watch?(caller: CatalogCaller, changed: (kind: CatalogKind) => void): () => void;
  /**
   * Only on a catalog whose lists can be partial for a while (a gateway whose upstream is still starting): the
   * `_meta` a list of `kind` carries to say so, or undefined when it is whole. A partial list is not to be cached.
   */
  listNotice?(kind: CatalogKind, caller: CatalogCaller): JsonObject | undefined;
}

/** What a catalog offers, read off lists (for catalogs whose lists are at hand; the registry's are). */
export function offerOf(lists: {
  tools: readonly unknown[];
  prompts: readonly unknown[];
  resources: readonly unknown[];
  templates: readonly unknown[];
}): CatalogOffer {
  return {
    tools: lists.tools.length > 0,
    prompts: lists.prompts.length > 0,
    resources: lists.resources.length > 0 || lists.templates.length > 0,
    completions: lists.prompts.length > 0 || lists.templates.length > 0,
  };
}
