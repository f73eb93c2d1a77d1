// How an upstream's tool is named to the gateway's callers: `<upstream>__<tool>`, e.g. `files__write_file`. Tool
// names may hold letters, digits, `_`, `-` and `.` (tools.mdx), so the separator must be one a tool name can hold;
// upstream names hold no `_` at all (config.ts), so the first `__` always splits a name back the one way.

/** The separator between the upstream's name and its tool's. */
export const NAME_SEPARATOR = '__';

/** The longest name a client is promised to handle (tools.mdx: 1 to 128 characters). */
const MAX_NAME = 128;

/** The name the gateway's callers see, or undefined when it would be longer than MCP allows. */
export function exposedName(upstream: string, tool: string): string | undefined {
  const name = `${upstream}${NAME_SEPARATOR}${tool}`;
  return name.length <= MAX_NAME ? name : undefined;
}

/** The upstream and tool an exposed name stands for; undefined for a name that is not one. */
export function splitExposedName(name: string): { upstream: string; tool: string } | undefined {
  const at = name.indexOf(NAME_SEPARATOR);
  if (at <= 0 || at + NAME_SEPARATOR.length >= name.length) return undefined;
  return { upstream: name.slice(0, at), tool: name.slice(at + NAME_SEPARATOR.length) };
}
