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

// Resources are named by URI: the gateway puts the upstream's name in front of the URI's scheme, `docs+file:///a.md`
// for docs' `file:///a.md` (a URI template the same way). Upstream names hold no `+`, so the first `+` splits it back.

/** The URI the gateway's callers see for an upstream's URI (or URI template); undefined when it has no scheme. */
export function exposedUri(upstream: string, uri: string): string | undefined {
  return /^[A-Za-z][A-Za-z0-9+.-]*:/.test(uri) ? `${upstream}+${uri}` : undefined;
}

/** The upstream and its own URI an exposed URI stands for; undefined for a URI that is not one. */
export function splitExposedUri(uri: string): { upstream: string; uri: string } | undefined {
  const at = uri.indexOf('+');
  const colon = uri.indexOf(':');
  if (at <= 0 || colon < at) return undefined;
  return { upstream: uri.slice(0, at), uri: uri.slice(at + 1) };
}
