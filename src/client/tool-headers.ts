// `x-mcp-header` (streamable-http.mdx "Custom Headers from Tool Parameters"): validate a tool's annotations and
// mirror the annotated argument values into `Mcp-Param-{Name}` headers.
import { encodeHeaderValue, HEADER_PARAM_PREFIX, isJsonObject } from '../protocol/index.js';

export interface HeaderBinding {
  /** The `x-mcp-header` value: the `{Name}` in `Mcp-Param-{Name}`. */
  header: string;
  /** The chain of `properties` keys from the schema root to the annotated property. */
  path: string[];
}

export type ToolHeaderPlan = { ok: true; bindings: HeaderBinding[] } | { ok: false; reason: string };

const ANNOTATION = 'x-mcp-header';
// RFC 9110 field-name token: 1*tchar.
const TCHAR = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const PRIMITIVE_TYPES = new Set(['string', 'integer', 'boolean']);
// Keywords whose values are data, not schemas: an "x-mcp-header" key inside them is not an annotation.
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'example']);

/**
 * Find every `x-mcp-header` annotation of a tool's inputSchema and check the spec's constraints. A tool with any
 * invalid annotation must be excluded from tools/list by the client.
 */
export function planToolHeaders(inputSchema: unknown): ToolHeaderPlan {
  const bindings: HeaderBinding[] = [];
  const problems: string[] = [];

  const visit = (schema: unknown, path: string[] | undefined, depth: number): void => {
    if (depth > 64) {
      problems.push('inputSchema is nested too deeply');
      return;
    }
    if (Array.isArray(schema)) {
      for (const item of schema) visit(item, undefined, depth + 1);
      return;
    }
    if (!isJsonObject(schema)) return;
    if (ANNOTATION in schema) {
      const value = schema[ANNOTATION];
      const where = path ? path.join('.') : '(not a property)';
      if (!path || path.length === 0) {
        problems.push(`x-mcp-header at ${where} is not on a property reachable through "properties" alone`);
      } else if (typeof value !== 'string' || value === '') {
        problems.push(`x-mcp-header of ${where} must be a non-empty string`);
      } else if (!TCHAR.test(value)) {
        problems.push(`x-mcp-header "${value}" of ${where} is not a valid HTTP field-name token`);
      } else if (typeof schema.type !== 'string' || !PRIMITIVE_TYPES.has(schema.type)) {
        problems.push(
          `x-mcp-header "${value}" of ${where} must annotate a string, integer or boolean property`,
        );
      } else {
        bindings.push({ header: value, path });
      }
    }
    for (const [keyword, child] of Object.entries(schema)) {
      if (keyword === ANNOTATION || DATA_KEYWORDS.has(keyword)) continue;
      if (keyword === 'properties' && isJsonObject(child)) {
        for (const [name, sub] of Object.entries(child))
          visit(sub, path ? [...path, name] : undefined, depth + 1);
        continue;
      }
      // Any other keyword (items, anyOf, $defs, $ref targets, if/then/else, …) breaks the static chain.
      visit(child, undefined, depth + 1);
    }
  };
  visit(inputSchema, [], 0);

  const seen = new Map<string, string>();
  for (const b of bindings) {
    const lower = b.header.toLowerCase();
    const other = seen.get(lower);
    if (other !== undefined)
      problems.push(`x-mcp-header "${b.header}" duplicates "${other}" (case-insensitive)`);
    else seen.set(lower, b.header);
  }
  if (problems.length > 0) return { ok: false, reason: problems.join('; ') };
  return { ok: true, bindings };
}

function valueAt(args: unknown, path: string[]): unknown {
  let cur: unknown = args;
  for (const key of path) {
    if (!isJsonObject(cur) || !Object.hasOwn(cur, key)) return undefined;
    cur = cur[key];
  }
  return cur;
}

/** The `Mcp-Param-*` headers for one call. Absent and null values produce no header. */
export function paramHeaders(bindings: readonly HeaderBinding[], args: unknown): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const b of bindings) {
    const v = valueAt(args, b.path);
    let text: string;
    if (typeof v === 'string') text = v === '' ? '' : encodeHeaderValue(v);
    else if (typeof v === 'number' && Number.isFinite(v)) text = String(v);
    else if (typeof v === 'boolean') text = v ? 'true' : 'false';
    else continue;
    headers[`${HEADER_PARAM_PREFIX}${b.header.toLowerCase()}`] = text;
  }
  return headers;
}
