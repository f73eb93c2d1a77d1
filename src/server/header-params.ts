// Tool arguments mirrored into `Mcp-Param-{name}` headers: the x-mcp-header annotations of an inputSchema.
import type { JsonObject } from '../protocol/index.js';

/** Where a tool argument is mirrored into an `Mcp-Param-{name}` header (x-mcp-header in its inputSchema). */
export interface HeaderParam {
  header: string;
  path: string[];
}

/** Collect x-mcp-header annotations reachable through `properties` chains only (tools.mdx x-mcp-header). */
export function headerParamsOf(inputSchema: JsonObject): HeaderParam[] {
  const out: HeaderParam[] = [];
  const walk = (schema: JsonObject, path: string[]) => {
    const props = schema.properties;
    if (typeof props !== 'object' || props === null) return;
    for (const [key, sub] of Object.entries(props as Record<string, JsonObject>)) {
      if (typeof sub !== 'object' || sub === null) continue;
      const header = sub['x-mcp-header'];
      if (typeof header === 'string') out.push({ header, path: [...path, key] });
      walk(sub, [...path, key]);
    }
  };
  walk(inputSchema, []);
  return out;
}
