// The `WWW-Authenticate: Bearer …` challenge of a 401 or 403 (RFC 6750 §3, RFC 9728 §5.1): the protected resource
// metadata URL, the scope the server wants, and the error. Hand-written: it is one small grammar, and the parsers
// that exist come with a whole HTTP framework.

export interface BearerChallenge {
  resourceMetadata: string | undefined;
  scope: string | undefined;
  error: string | undefined;
}

/** Read the Bearer challenge among a header's challenges (auth-params may be quoted strings or tokens). */
export function parseBearerChallenge(header: string | undefined): BearerChallenge {
  const out: BearerChallenge = { resourceMetadata: undefined, scope: undefined, error: undefined };
  if (!header) return out;
  const at = header.search(/(^|[\s,])bearer(\s|$)/i);
  if (at === -1) return out;
  const rest = header.slice(at).replace(/^[\s,]*bearer/i, '');
  const param = /\s*([A-Za-z0-9_-]+)\s*=\s*("((?:[^"\\]|\\.)*)"|[^\s,"]+)\s*,?/y;
  let i = 0;
  for (;;) {
    param.lastIndex = i;
    const m = param.exec(rest);
    if (!m) break;
    i = param.lastIndex;
    const name = (m[1] ?? '').toLowerCase();
    const value = m[3] !== undefined ? m[3].replace(/\\(.)/g, '$1') : (m[2] ?? '');
    if (name === 'resource_metadata') out.resourceMetadata = value;
    else if (name === 'scope') out.scope = value;
    else if (name === 'error') out.error = value;
  }
  return out;
}
