// Tool arguments mirrored into `Mcp-Param-{name}` headers: the x-mcp-header annotations of an inputSchema.
import type { JsonObject } from '../protocol/index.js';

/** Where a tool argument is mirrored into an `Mcp-Param-{name}` header (x-mcp-header in its inputSchema). */
export interface HeaderParam {
  header: string;
  path: string[];
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HEADER_TYPES = new Set(['string', 'integer', 'boolean']);

/**
 * Collect x-mcp-header annotations reachable through `properties` chains only (tools.mdx x-mcp-header), and refuse
 * at registration an annotation clients would reject: empty or not an HTTP token, on a non-primitive or number
 * property, or a duplicate (case-insensitive).
 */
export function headerParamsOf(inputSchema: JsonObject, where = 'tool'): HeaderParam[] {
  const out: HeaderParam[] = [];
  const walk = (schema: JsonObject, path: string[]) => {
    const props = schema.properties;
    if (typeof props !== 'object' || props === null) return;
    for (const [key, sub] of Object.entries(props as Record<string, JsonObject>)) {
      if (typeof sub !== 'object' || sub === null) continue;
      const header = sub['x-mcp-header'];
      if (header !== undefined) {
        const at = [...path, key].join('.');
        if (typeof header !== 'string' || !TOKEN.test(header)) {
          throw new Error(
            `${where}: x-mcp-header on ${at} must be a non-empty HTTP token (letters, digits, -, _ …)`,
          );
        }
        if (!HEADER_TYPES.has(String(sub.type))) {
          throw new Error(`${where}: x-mcp-header on ${at} needs type string, integer or boolean`);
        }
        if (out.some((p) => p.header.toLowerCase() === header.toLowerCase())) {
          throw new Error(`${where}: x-mcp-header "${header}" is used twice (names are case-insensitive)`);
        }
        out.push({ header, path: [...path, key] });
      }
      walk(sub, [...path, key]);
    }
  };
  walk(inputSchema, []);
  return out;
}
