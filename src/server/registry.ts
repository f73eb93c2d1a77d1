// The static catalog: what `McpServer.tool()`, `.prompt()`, `.resource()` and `.resourceTemplate()` register, in
// registration order, the same for every caller and fixed once the server serves.

import type { ResourceDefinition, ResourceTemplateDefinition } from '../protocol/index.js';
import { type Catalog, type CatalogOffer, offerOf } from './catalog/catalog.js';
import {
  type FoundResource,
  type PromptEntry,
  promptEntry,
  type ResourceEntry,
  type ResourceTemplateEntry,
  resourceEntry,
  resourceTemplateEntry,
  type ToolEntry,
  toolEntry,
} from './catalog/entries.js';
import { registrationError } from './errors.js';
import type {
  CompletionHandler,
  HandlerOptions,
  PromptHandler,
  PromptOptions,
  ResourceHandler,
  ToolHandler,
  ToolOptions,
} from './handlers.js';
import type { ArgumentSchema } from './schema-input.js';

export class Registry implements Catalog {
  readonly sameForEveryone = true;
  private readonly tools = new Map<string, ToolEntry>();
  private readonly prompts = new Map<string, PromptEntry>();
  private readonly resources = new Map<string, ResourceEntry>();
  private readonly templates: ResourceTemplateEntry[] = [];
  /** The lists as arrays, made once per registration rather than once per request. */
  private lists:
    | {
        tools: ToolEntry[];
        prompts: PromptEntry[];
        resources: ResourceEntry[];
        templates: ResourceTemplateEntry[];
        offer: CatalogOffer;
      }
    | undefined;

  addTool<S extends ArgumentSchema | undefined>(options: ToolOptions<S>, handler: ToolHandler<S>): void {
    if (this.tools.has(options.name)) throw registrationError(`tool ${options.name} is already registered`);
    this.tools.set(options.name, toolEntry(options, handler));
    this.lists = undefined;
  }

  addPrompt(
    options: PromptOptions & { complete?: Record<string, CompletionHandler> },
    handler: PromptHandler,
  ): void {
    if (this.prompts.has(options.name))
      throw registrationError(`prompt ${options.name} is already registered`);
    this.prompts.set(options.name, promptEntry(options, handler));
    this.lists = undefined;
  }

  addResource(options: ResourceDefinition & HandlerOptions, handler: ResourceHandler): void {
    const entry = resourceEntry(options, handler);
    if (this.resources.has(entry.definition.uri))
      throw registrationError(`resource ${entry.definition.uri} is already registered`);
    this.resources.set(entry.definition.uri, entry);
    this.lists = undefined;
  }

  addTemplate(
    options: ResourceTemplateDefinition & HandlerOptions & { complete?: Record<string, CompletionHandler> },
    handler: ResourceHandler,
  ): void {
    this.templates.push(resourceTemplateEntry(options, handler));
    this.lists = undefined;
  }

  /** Whether any handler declared requiredScopes (the server then adds the scope guard). */
  requiresScopes(): boolean {
    const { tools, prompts, resources, templates } = this.listed();
    const all: Array<{ mrtr: HandlerOptions }> = [...tools, ...prompts, ...resources, ...templates];
    return all.some((entry) => (entry.mrtr.requiredScopes?.length ?? 0) > 0);
  }

  offers(): CatalogOffer {
    return this.listed().offer;
  }

  listTools(): readonly ToolEntry[] {
    return this.listed().tools;
  }

  findTool(name: string): ToolEntry | undefined {
    return this.tools.get(name);
  }

  listPrompts(): readonly PromptEntry[] {
    return this.listed().prompts;
  }

  findPrompt(name: string): PromptEntry | undefined {
    return this.prompts.get(name);
  }

  listResources(): readonly ResourceEntry[] {
    return this.listed().resources;
  }

  listResourceTemplates(): readonly ResourceTemplateEntry[] {
    return this.templates;
  }

  /** A fixed resource first, then the first template that matches. */
  findResource(uri: string): FoundResource | undefined {
    const fixed = this.resources.get(uri);
    if (fixed) return { handler: fixed.handler, variables: {}, mrtr: fixed.mrtr };
    for (const t of this.templates) {
      const variables = t.template.match(uri);
      if (variables) return { handler: t.handler, variables, mrtr: t.mrtr };
    }
    return undefined;
  }

  findResourceTemplate(uriTemplate: string): ResourceTemplateEntry | undefined {
    return this.templates.find((t) => t.definition.uriTemplate === uriTemplate);
  }

  private listed(): NonNullable<Registry['lists']> {
    if (this.lists === undefined) {
      const lists = {
        tools: [...this.tools.values()],
        prompts: [...this.prompts.values()],
        resources: [...this.resources.values()],
        templates: this.templates,
      };
      this.lists = { ...lists, offer: offerOf(lists) };
    }
    return this.lists;
  }
}
