// `x-mcp-header` (streamable-http.mdx "Custom Headers from Tool Parameters", tools.mdx "x-mcp-header"): which tool
// annotations are valid, how an argument becomes its `Mcp-Param-{Name}` header, and when a header matches the body.
// The server refuses at registration every tool this plan rejects, and a conforming client excludes exactly those,
// so the two sides can only agree if both use this one function.
import { encodeHeaderValue } from './headers.js';
import { isJsonObject } from './json.js';
import { HEADER_PARAM_PREFIX } from './meta.js';
import { InvalidArgumentError } from './mrtr-error.js';

export const X_MCP_HEADER = 'x-mcp-header';

/** One annotated argument: its header name and where its value sits in the call's arguments. */
export interface HeaderBinding {
  /** The `x-mcp-header` value: the `{Name}` in `Mcp-Param-{Name}`, as the tool wrote it. */
  header: string;
  /** The chain of `properties` keys from the schema root to the annotated property. */
  path: string[];
}

export type ToolHeaderPlan =
  | { ok: true; bindings: HeaderBinding[] }
  | { ok: false; reason: string; problems: string[] };

// RFC 9110 §5.1 field-name: 1*tchar. Excludes space, colon, control characters and anything outside ASCII.
const TCHAR = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// "MUST only be applied to parameters with primitive types (integer, string, boolean). Parameters with type
// `number` are not permitted."
const HEADER_TYPES: ReadonlySet<string> = new Set(['string', 'integer', 'boolean']);
// Keywords whose values are instance data, not schemas: an "x-mcp-header" key inside them is not an annotation.
const DATA_KEYWORDS: ReadonlySet<string> = new Set(['enum', 'const', 'default', 'examples', 'example']);
// Deeper schemas are refused rather than walked: the walk is recursive and the schema may come from a peer.
const MAX_DEPTH = 64;

/** Whether a value is a valid `x-mcp-header` name: a non-empty HTTP field-name token. */
export const isHeaderToken = (name: unknown): name is string => typeof name === 'string' && TCHAR.test(name);

/** The lower-case HTTP header name that carries an annotated argument. */
export const paramHeaderName = (header: string): string => `${HEADER_PARAM_PREFIX}${header.toLowerCase()}`;

// A JSON Pointer segment (RFC 6901) for messages: where in the inputSchema a problem sits.
const pointer = (at: string, key: string | number): string =>
  `${at}/${String(key).replaceAll('~', '~0').replaceAll('/', '~1')}`;

/**
 * Find every `x-mcp-header` annotation of a tool's inputSchema and check it against the spec's constraints:
 * - it sits on a property reached from the root through a chain of `properties` keys only — never through
 *   `items`, `anyOf`/`oneOf`/`allOf`/`not`, `if`/`then`/`else`, `$ref`, `$defs` or any other keyword, and not on
 *   the root itself ("An x-mcp-header annotation anywhere else makes … the tool definition invalid");
 * - its value is a non-empty HTTP token (no space, colon, control character or non-ASCII);
 * - the property states `type` as exactly "string", "integer" or "boolean" (no `number`, no type list, no
 *   untyped property: only a stated type tells both sides how the value is written);
 * - no two values are equal ignoring case.
 * A tool with any problem is invalid as a whole: the server must not register it, a client must not list it.
 */
export function planToolHeaders(inputSchema: unknown): ToolHeaderPlan {
  const bindings: HeaderBinding[] = [];
  const problems: string[] = [];

  // `path` is the properties chain while the walk is still on one; undefined once any other keyword was crossed.
  const visit = (schema: unknown, path: string[] | undefined, at: string, depth: number): void => {
    if (depth > MAX_DEPTH) {
      problems.push(`inputSchema is nested more than ${MAX_DEPTH} levels deep at ${at || '/'}`);
      return;
    }
    if (Array.isArray(schema)) {
      for (const [i, item] of schema.entries()) visit(item, undefined, pointer(at, i), depth + 1);
      return;
    }
    if (!isJsonObject(schema)) return;
    if (Object.hasOwn(schema, X_MCP_HEADER)) {
      const value = schema[X_MCP_HEADER];
      const property = path?.join('.');
      if (!path || path.length === 0) {
        problems.push(
          `x-mcp-header at ${at || '/'} is not on a property reachable from the root through "properties" alone`,
        );
      } else if (!isHeaderToken(value)) {
        problems.push(
          `x-mcp-header of property ${property} must be a non-empty HTTP token (letters, digits and ` +
            `!#$%&'*+-.^_\`|~), got ${JSON.stringify(value)}`,
        );
      } else if (typeof schema.type !== 'string' || !HEADER_TYPES.has(schema.type)) {
        problems.push(
          `x-mcp-header "${value}" of property ${property} needs type string, integer or boolean, ` +
            `got ${schema.type === undefined ? 'no type' : JSON.stringify(schema.type)}`,
        );
      } else {
        bindings.push({ header: value, path });
      }
    }
    for (const [keyword, child] of Object.entries(schema)) {
      if (keyword === X_MCP_HEADER || DATA_KEYWORDS.has(keyword)) continue;
      const here = pointer(at, keyword);
      if (keyword === 'properties' && isJsonObject(child)) {
        for (const [name, sub] of Object.entries(child))
          visit(sub, path ? [...path, name] : undefined, pointer(here, name), depth + 1);
        continue;
      }
      // Any other keyword (items, anyOf, $defs, if/then/else, patternProperties, …) breaks the static chain.
      visit(child, undefined, here, depth + 1);
    }
  };
  visit(inputSchema, [], '', 0);

  const seen = new Map<string, HeaderBinding>();
  for (const b of bindings) {
    const lower = b.header.toLowerCase();
    const first = seen.get(lower);
    if (first === undefined) seen.set(lower, b);
    else
      problems.push(
        `x-mcp-header "${b.header}" of property ${b.path.join('.')} is used twice (names are case-insensitive; ` +
          `"${first.header}" is on ${first.path.join('.')})`,
      );
  }
  if (problems.length > 0) return { ok: false, reason: problems.join('; '), problems };
  return { ok: true, bindings };
}

/**
 * The argument value at a binding's path, reading only keys the arguments themselves hold: an absent `constructor`
 * or `__proto__` is absent, not Object.prototype's member.
 */
export function argumentAt(args: unknown, path: readonly string[]): unknown {
  let cur: unknown = args;
  for (const key of path) {
    if (!isJsonObject(cur) || !Object.hasOwn(cur, key)) return undefined;
    cur = cur[key];
  }
  return cur;
}

/**
 * The header text for one argument value (streamable-http.mdx "Value Encoding"): a string as-is or Base64
 * sentinel-encoded, an integer in decimal, a boolean as `true`/`false`. Undefined when no header is sent (the value
 * is absent or null). Throws ERR_INVALID_ARGUMENT for a value no header can carry: an object, an array, or a number that
 * is not an integer within ±(2^53−1) ("Integer values MUST be within the safe range").
 */
export function paramHeaderText(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return encodeHeaderValue(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') {
    if (Number.isSafeInteger(value)) return String(value);
    throw new InvalidArgumentError(`${value} is not an integer within ±(2^53−1)`);
  }
  throw new InvalidArgumentError(
    `a ${Array.isArray(value) ? 'array' : typeof value} cannot be sent in a header`,
  );
}

/**
 * The `Mcp-Param-*` headers for one call, keyed by lower-case header name. Throws ERR_INVALID_ARGUMENT naming the argument
 * when an annotated value cannot be carried (see paramHeaderText): sending the call without that header would
 * only earn a HeaderMismatch.
 */
export function paramHeaders(bindings: readonly HeaderBinding[], args: unknown): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const b of bindings) {
    let text: string | undefined;
    try {
      text = paramHeaderText(argumentAt(args, b.path));
    } catch (error) {
      throw new InvalidArgumentError(
        `argument ${b.path.join('.')} cannot be sent in Mcp-Param-${b.header}: ${(error as Error).message}`,
        { cause: error },
      );
    }
    if (text !== undefined) headers[paramHeaderName(b.header)] = text;
  }
  return headers;
}

// Decimal, no sign on zero, no leading zeros; an all-zero fraction is allowed (streamable-http.mdx "Server
// Validation": compare integers numerically, "42.0 and 42 are considered equal"). At most 16 integer digits,
// so Number() never sees a long string; the safe-range check below does the exact bound.
const DECIMAL_INTEGER = /^(?:0|-?[1-9][0-9]{0,15})(?:\.0+)?$/;

/**
 * The integer a header states, or undefined. Only decimal integers within ±(2^53−1) count: `0x10`, `0o20`, `1e1`,
 * `+16`, `016`, ` 16` and `16.000000000000001` are not 16, and values beyond the safe range cannot be compared
 * exactly at all.
 */
export function parseHeaderInteger(text: string): number | undefined {
  if (!DECIMAL_INTEGER.test(text)) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : undefined;
}

/**
 * Whether a decoded `Mcp-Param-*` header value states the body's value: strings compare exactly, booleans as
 * `true`/`false`, integers numerically (parseHeaderInteger). Any other body value matches no header.
 */
export function paramHeaderMatches(headerText: string, value: unknown): boolean {
  if (typeof value === 'string') return headerText === value;
  if (typeof value === 'boolean') return headerText === (value ? 'true' : 'false');
  if (typeof value === 'number')
    return Number.isSafeInteger(value) && parseHeaderInteger(headerText) === value;
  return false;
}
