// A resource URI as the gateway judges it and sends it upstream: one spelling per resource. An upstream may resolve
// `..`, decode `%73`, or fold a scheme's case; had the policy judged the raw string, `handbook/x/../secret.md` would
// pass an allow on `handbook/*` and a deny on `handbook/secret*` would not see it.

/** Characters RFC 3986 never needs to escape, and the path's separators: escaped, they only hide a spelling. */
const NEVER_ESCAPED = /^[A-Za-z0-9\-._~/\\]$/;

/**
 * The canonical spelling of `uri` (scheme and authority lower-case), or undefined when it has another spelling the
 * upstream could read differently: dot or empty path segments, a backslash, an escaped unreserved character or
 * separator, a malformed escape.
 */
export function canonicalResourceUri(uri: string): string | undefined {
  const colon = uri.indexOf(':');
  const scheme = uri.slice(0, Math.max(colon, 0)).toLowerCase();
  if (!/^[a-z][a-z0-9+.-]*$/.test(scheme)) return undefined;
  let rest = uri.slice(colon + 1);
  if (rest.includes('\\') || /%(?![0-9A-Fa-f]{2})/.test(rest)) return undefined;
  for (const escaped of rest.matchAll(/%([0-9A-Fa-f]{2})/g))
    if (NEVER_ESCAPED.test(String.fromCharCode(Number.parseInt(escaped[1] as string, 16)))) return undefined;
  const end = rest.search(/[?#]/);
  let path = end < 0 ? rest : rest.slice(0, end);
  if (path.startsWith('//')) {
    const slash = path.indexOf('/', 2);
    const authority = slash < 0 ? path.slice(2) : path.slice(2, slash);
    rest = `//${authority.toLowerCase()}${rest.slice(2 + authority.length)}`;
    path = slash < 0 ? '' : path.slice(slash);
  }
  const segments = path.split('/');
  // A leading '' is the path's root; a trailing '' is a folder. Any other empty segment is a second spelling.
  const inner = segments.slice(path.startsWith('/') ? 1 : 0, -1);
  if (inner.includes('') || segments.some((s) => s === '.' || s === '..')) return undefined;
  return `${scheme}:${rest}`;
}

/** `template` with `{name}` (and `{+name}`) set to `value`: the page a completion's value would read. */
export function fillTemplate(template: string, name: string, value: string): string {
  return template.split(`{${name}}`).join(value).split(`{+${name}}`).join(value);
}
