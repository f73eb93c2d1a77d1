// A stand-in for what the gateway will put behind a server: an in-memory "upstream" whose tools change at run time
// and whose calls are answered "upstream", and a catalog over it that a policy filters per caller — built only on
// mrtr/server's public API, the way the gateway will build its own.
import type { JsonObject } from '../../src/protocol/index.js';
import {
  type Catalog,
  type CatalogCaller,
  type CatalogKind,
  type FoundResource,
  offerOf,
  type PromptEntry,
  promptEntry,
  type ResourceTemplateEntry,
  resourceTemplateEntry,
  type ToolEntry,
  type ToolResult,
  toolEntry,
} from '../../src/server/index.js';

export interface UpstreamTool {
  name: string;
  description: string;
  inputSchema?: JsonObject;
  /** Ask the caller to confirm (an MRTR round) before the call goes upstream. */
  confirmFirst?: boolean;
}

/** The upstream server: its tools, the calls it answered, and who is told when its tools change. */
export class FakeUpstream {
  readonly tools = new Map<string, UpstreamTool>();
  readonly calls: Array<{ tool: string; args: unknown }> = [];
  private readonly listeners = new Set<() => void>();

  constructor(tools: UpstreamTool[]) {
    for (const t of tools) this.tools.set(t.name, t);
  }

  add(tool: UpstreamTool): void {
    this.tools.set(tool.name, tool);
    for (const l of [...this.listeners]) l();
  }

  remove(name: string): void {
    this.tools.delete(name);
    for (const l of [...this.listeners]) l();
  }

  /** What the upstream answers a call with; a promise, as a network call would be. */
  async call(tool: string, args: unknown): Promise<ToolResult> {
    this.calls.push({ tool, args });
    return { content: [{ type: 'text', text: `upstream ${tool} ran with ${JSON.stringify(args)}` }] };
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** Which names each subject may see; anything not named is hidden. Anonymous callers see nothing. */
export type Policy = Readonly<Record<string, readonly string[]>>;

/**
 * A gateway-like catalog: upstream tools as entries (their handlers call upstream), plus a prompt and a resource
 * template of the gateway's own (unless `ownEntries` is false: then none exist at all), every list filtered by
 * `policy` for the caller. With `async`, every answer is a promise, as a catalog that looks upstream up would give.
 */
export function gatewayCatalog(
  upstream: FakeUpstream,
  policy: Policy,
  options: { async?: boolean; ownEntries?: boolean } = {},
): Catalog {
  const own = options.ownEntries ?? true;
  const answer = <T>(value: T) => (options.async ? Promise.resolve(value) : value);
  const may = (caller: CatalogCaller, name: string) =>
    caller.principal !== undefined && (policy[caller.principal.subject] ?? []).includes(name);
  // Entries are built once per upstream definition, as the registry builds its own.
  const built = new Map<UpstreamTool, ToolEntry>();
  const entryOf = (tool: UpstreamTool): ToolEntry => {
    let entry = built.get(tool);
    if (!entry) {
      entry = toolEntry(
        { name: tool.name, description: tool.description, input: tool.inputSchema },
        async (args, ctx) => {
          if (tool.confirmFirst && !(await ctx.ask.confirm(`Run ${tool.name} upstream?`, { key: 'go' })))
            return { content: [{ type: 'text', text: 'declined' }] };
          return upstream.call(tool.name, args);
        },
      );
      built.set(tool, entry);
    }
    return entry;
  };
  const prompts: PromptEntry[] = [
    promptEntry(
      {
        name: 'summarize',
        description: 'Summarize a document',
        arguments: [{ name: 'style' }],
        complete: { style: (v) => ({ values: ['brief', 'bullet'].filter((s) => s.startsWith(v)) }) },
      },
      (args) => ({
        messages: [{ role: 'user', content: { type: 'text', text: `Summarize ${args.style}` } }],
      }),
    ),
  ];
  const templates: ResourceTemplateEntry[] = [
    resourceTemplateEntry(
      {
        uriTemplate: 'upstream://docs/{name}',
        name: 'docs',
        complete: { name: (v) => ({ values: ['intro', 'limits'].filter((s) => s.startsWith(v)) }) },
      },
      (uri) => ({ contents: [{ uri, text: `doc at ${uri}` }] }),
    ),
  ];
  if (!own) {
    prompts.length = 0;
    templates.length = 0;
  }
  const visibleTools = (caller: CatalogCaller) =>
    [...upstream.tools.values()].filter((t) => may(caller, t.name)).map(entryOf);
  const visiblePrompts = (caller: CatalogCaller) => prompts.filter((p) => may(caller, p.definition.name));
  const visibleTemplates = (caller: CatalogCaller) => templates.filter((t) => may(caller, t.definition.name));
  return {
    sameForEveryone: false,
    offers: (caller) =>
      answer(
        offerOf({
          tools: visibleTools(caller),
          prompts: visiblePrompts(caller),
          resources: [],
          templates: visibleTemplates(caller),
        }),
      ),
    listTools: (caller) => answer(visibleTools(caller)),
    findTool: (name, caller) => {
      const tool = upstream.tools.get(name);
      return answer(tool && may(caller, name) ? entryOf(tool) : undefined);
    },
    listPrompts: (caller) => answer(visiblePrompts(caller)),
    findPrompt: (name, caller) => answer(visiblePrompts(caller).find((p) => p.definition.name === name)),
    listResources: () => answer([]),
    listResourceTemplates: (caller) => answer(visibleTemplates(caller)),
    findResource: (uri, caller) => {
      for (const t of visibleTemplates(caller)) {
        const variables = t.template.match(uri);
        if (variables)
          return answer<FoundResource | undefined>({ handler: t.handler, variables, mrtr: t.mrtr });
      }
      return answer<FoundResource | undefined>(undefined);
    },
    findResourceTemplate: (uriTemplate, caller) =>
      answer(visibleTemplates(caller).find((t) => t.definition.uriTemplate === uriTemplate)),
    // A caller is told only when its own list changed: a change to tools it cannot see says nothing to it.
    watch(caller, changed: (kind: CatalogKind) => void) {
      let seen = visibleTools(caller)
        .map((t) => t.definition.name)
        .join('\n');
      return upstream.onChange(() => {
        const now = visibleTools(caller)
          .map((t) => t.definition.name)
          .join('\n');
        if (now !== seen) changed('tools');
        seen = now;
      });
    },
  };
}
