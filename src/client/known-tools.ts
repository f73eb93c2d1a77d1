// What the last tools/list taught about each tool's x-mcp-header annotations: the Mcp-Param-* headers a call of it
// carries, or why it was excluded (streamable-http.mdx: clients MUST exclude a tool whose annotations break the rules).
import { isJsonObject, type JsonObject, type ToolDefinition } from '../protocol/index.js';
import { ProtocolViolation } from './errors.js';
import { type HeaderBinding, paramHeaders, planToolHeaders } from './tool-headers.js';

/** A tool excluded for an invalid x-mcp-header: never called. */
class ExcludedTool extends ProtocolViolation {}

export interface RejectedTool {
  name: string;
  reason: string;
}

export class KnownTools {
  readonly #headers = new Map<string, HeaderBinding[]>();
  readonly #rejected = new Map<string, string>();

  /** Learn a fresh listing: the tools kept, the others remembered with their reason and told to `warn`. */
  learn(all: readonly ToolDefinition[], warn: ((message: string) => void) | undefined): ToolDefinition[] {
    const kept: ToolDefinition[] = [];
    this.#headers.clear();
    this.#rejected.clear();
    for (const tool of all) {
      if (!isJsonObject(tool) || typeof tool.name !== 'string') continue;
      const plan = planToolHeaders(tool.inputSchema);
      if (!plan.ok) {
        this.#rejected.set(tool.name, plan.reason);
        warn?.(`tool "${tool.name}" excluded: ${plan.reason}`);
        continue;
      }
      this.#headers.set(tool.name, plan.bindings);
      kept.push(tool);
    }
    return kept;
  }

  /** Why `name` was excluded, or undefined. */
  rejection(name: string): string | undefined {
    return this.#rejected.get(name);
  }

  get rejected(): RejectedTool[] {
    return [...this.#rejected].map(([name, reason]) => ({ name, reason }));
  }

  /** streamable-http.mdx: on HeaderMismatch the tool's schema may have changed; plan its headers anew. */
  forget(name: string): void {
    this.#headers.delete(name);
  }

  /**
   * The Mcp-Param-* headers a tools/call of `name` with `args` carries, from the tool's x-mcp-header annotations;
   * `refresh` lists the tools when the tool is not known yet. Throws for a tool excluded for a bad annotation, and
   * a TypeError for an argument its header cannot carry.
   */
  async headersFor(
    name: string,
    args: JsonObject,
    signal: AbortSignal,
    refresh: (signal: AbortSignal) => Promise<void>,
  ): Promise<Record<string, string>> {
    if (!this.#headers.has(name)) await refresh(signal);
    const excluded = this.#rejected.get(name);
    if (excluded !== undefined) throw new ExcludedTool(`tool "${name}" was excluded: ${excluded}`);
    return paramHeaders(this.#headers.get(name) ?? [], args);
  }
}
