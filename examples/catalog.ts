// The catalog example of docs/architecture.md: a server built over a catalog it did not register — tools that come
// and go while it runs, each seen only by callers with its role. It runs as it is; test/docs/examples-run.test.ts
// lists and calls its tools as two callers and listens for a change.
// #region catalog
import {
  type Catalog,
  type CatalogCaller,
  type CatalogKind,
  McpServer,
  type ToolEntry,
  text,
  toolEntry,
} from 'mrtr/server';

/** Tools added at run time, each for one role; a caller finds only those of its roles, as if no others existed. */
export class RoleTools implements Catalog {
  readonly sameForEveryone = false; // lists differ per caller: never cached as public
  private readonly tools: Array<{ role: string; entry: ToolEntry }> = [];
  private readonly watchers = new Set<() => void>();

  add(role: string, name: string, answer: string): void {
    this.tools.push({ role, entry: toolEntry({ name, description: `For ${role}` }, () => text(answer)) });
    for (const watcher of this.watchers) watcher();
  }

  listTools(caller: CatalogCaller): ToolEntry[] {
    const roles = caller.principal?.roles ?? [];
    return this.tools.filter((t) => roles.includes(t.role)).map((t) => t.entry);
  }
  findTool(name: string, caller: CatalogCaller): ToolEntry | undefined {
    return this.listTools(caller).find((t) => t.definition.name === name);
  }
  // Tools may appear for anyone at any time, so everyone is offered tools: that says nothing of hidden ones.
  offers() {
    return { tools: true, prompts: false, resources: false, completions: false };
  }
  // A caller is told only when its own list changed: a signal is itself information.
  watch(caller: CatalogCaller, changed: (kind: CatalogKind) => void): () => void {
    let seen = this.listTools(caller).length;
    const watcher = () => {
      if (this.listTools(caller).length !== seen) changed('tools');
      seen = this.listTools(caller).length;
    };
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }
  listPrompts = () => [];
  findPrompt = () => undefined;
  listResources = () => [];
  listResourceTemplates = () => [];
  findResource = () => undefined;
  findResourceTemplate = () => undefined;
}

export const tools = new RoleTools();
tools.add('ops', 'restart', 'restarted');
export const server = new McpServer({ name: 'role-tools', version: '1.0.0', catalog: tools });
// #endregion
