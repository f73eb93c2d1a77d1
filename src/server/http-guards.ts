// Checks a Streamable HTTP request must pass before its body is dispatched: Host/Origin against DNS rebinding,
// and the standard headers that mirror the body (streamable-http.mdx "Server Validation").
import {
  argumentAt,
  decodeHeaderValue,
  ErrorCode,
  HEADER_METHOD,
  HEADER_NAME,
  HEADER_PROTOCOL_VERSION,
  type JsonObject,
  type JsonRpcRequest,
  McpError,
  META_PROTOCOL_VERSION,
  nameHeaderField,
  paramHeaderMatches,
  paramHeaderName,
} from '../protocol/index.js';
import type { HeaderParam } from './header-params.js';
import type { WireRequest } from './http/wire.js';
import type { MaybePromise } from './maybe-async.js';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Host part of a Host header or an Origin's authority, lower-cased, without the port. */
export function hostnameOf(authority: string): string {
  const a = authority.trim().toLowerCase();
  if (a.startsWith('[')) {
    const end = a.indexOf(']');
    return end < 0 ? a : a.slice(0, end + 1);
  }
  const colon = a.indexOf(':');
  return colon < 0 ? a : a.slice(0, colon);
}

export interface OriginPolicy {
  /** Host names (no port) accepted in the Host header; undefined disables the check. */
  allowedHosts: ReadonlySet<string> | undefined;
  /** Origins (scheme://host[:port]) accepted besides same-host loopback origins. */
  allowedOrigins: ReadonlySet<string>;
}

/** Loopback binds only accept loopback Host names: a rebinding page's Host is its own domain. */
export function defaultOriginPolicy(
  bindHost: string,
  allowedHosts?: string[],
  allowedOrigins?: string[],
): OriginPolicy {
  const loopback = LOOPBACK_HOSTS.has(bindHost === '::1' ? '[::1]' : bindHost);
  const hosts = allowedHosts?.map((h) => h.toLowerCase());
  return {
    allowedHosts: hosts ? new Set(hosts) : loopback ? LOOPBACK_HOSTS : undefined,
    allowedOrigins: new Set(allowedOrigins ?? []),
  };
}

/** Returns a reason when the request must be refused with 403, undefined when it may proceed. */
export function checkOrigin(headers: WireRequest['headers'], policy: OriginPolicy): string | undefined {
  const host = one(headers.host);
  if (policy.allowedHosts) {
    if (host === undefined || !policy.allowedHosts.has(hostnameOf(host)))
      return `Host ${host ?? '(none)'} is not allowed`;
  }
  const origin = one(headers.origin);
  if (origin === undefined) return undefined;
  if (policy.allowedOrigins.has(origin)) return undefined;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return `Origin ${origin} is not allowed`;
  }
  // A same-host Origin only proves something when the Host itself was checked against a list: in a rebinding
  // attack the attacker names both. Without a host list, only explicitly allowed origins pass.
  const originHost = url.hostname === '::1' ? '[::1]' : url.hostname.toLowerCase();
  const sameHost = host !== undefined && hostnameOf(host) === originHost;
  if (sameHost && policy.allowedHosts?.has(originHost)) return undefined;
  return `Origin ${origin} is not allowed`;
}

/** node gives Host and Origin as one string; a web Headers too. */
const one = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

const headerMismatch = (message: string) =>
  new McpError(ErrorCode.HeaderMismatch, `Header mismatch: ${message}`);

/**
 * One header's value. node joins repeated custom headers with ", ", so a joined-looking value is checked against the
 * raw list: two `Mcp-Name` headers must not pass as one ("greet, admin") while a proxy routes on the first.
 */
function single(headers: WireRequest['headers'], name: string, rawHeaders: readonly string[] | undefined) {
  const v = headers[name];
  const value = Array.isArray(v) ? v.join(', ') : v;
  if (value !== undefined && rawHeaders !== undefined && value.includes(', ')) {
    let count = 0;
    for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === name) count++;
    if (count > 1) throw headerMismatch(`the ${name} header is sent ${count} times; send it once`);
  }
  return value;
}

/**
 * Check the standard headers against the body. Order matters for the spec's error codes: missing `_meta` keys are
 * -32602 (checked by the dispatcher), so only compare the version header when the body states a version. A promise
 * only when the tool's header parameters are (a catalog that looks its tools up elsewhere); it rejects as this throws.
 */
export function checkRequestHeaders(
  headers: WireRequest['headers'],
  request: JsonRpcRequest,
  headerParams: (toolName: string) => MaybePromise<HeaderParam[] | undefined>,
  /** The request's raw header list (`req.rawHeaders`), to refuse a repeated Mcp-* header. */
  rawHeaders?: readonly string[],
): MaybePromise<void> {
  const read = (name: string) => single(headers, name, rawHeaders);
  const version = read(HEADER_PROTOCOL_VERSION);
  if (version === undefined) throw headerMismatch('the MCP-Protocol-Version header is required');
  const meta = request.params?._meta as JsonObject | undefined;
  const bodyVersion = meta?.[META_PROTOCOL_VERSION];
  if (typeof bodyVersion === 'string' && bodyVersion !== version.trim()) {
    throw headerMismatch(
      `MCP-Protocol-Version header '${version}' does not match _meta protocolVersion '${bodyVersion}'`,
    );
  }
  const method = read(HEADER_METHOD);
  if (method === undefined) throw headerMismatch('the Mcp-Method header is required');
  if (method.trim() !== request.method) {
    throw headerMismatch(
      `Mcp-Method header value '${method}' does not match body method '${request.method}'`,
    );
  }
  const nameField = nameHeaderField(request.method);
  if (nameField === undefined) return;
  const bodyName = request.params?.[nameField];
  const rawName = read(HEADER_NAME);
  if (rawName === undefined) throw headerMismatch('the Mcp-Name header is required for this method');
  const name = decodeHeaderValue(rawName.trim());
  if (name === undefined) throw headerMismatch('the Mcp-Name header value is malformed');
  if (typeof bodyName === 'string' && name !== bodyName) {
    throw headerMismatch(`Mcp-Name header value '${name}' does not match body value '${bodyName}'`);
  }
  if (request.method === 'tools/call' && typeof bodyName === 'string') {
    const params = headerParams(bodyName);
    if (params instanceof Promise)
      return params.then((found) => checkParamHeaders(read, request.params?.arguments, found));
    checkParamHeaders(read, request.params?.arguments, params);
  }
}

function checkParamHeaders(
  read: (name: string) => string | undefined,
  args: unknown,
  params: HeaderParam[] | undefined,
): void {
  if (!params) return;
  for (const { header, path } of params) {
    // Own keys only, exactly as the client reads them: an absent `constructor` is absent, not Object's.
    const value = argumentAt(args, path);
    const raw = read(paramHeaderName(header));
    if (value === undefined || value === null) {
      // A header with no value behind it disagrees with the body: whoever routes on the header sees another request.
      if (raw !== undefined)
        throw headerMismatch(`the Mcp-Param-${header} header is sent but ${path.join('.')} is not set`);
      continue;
    }
    if (raw === undefined)
      throw headerMismatch(`the Mcp-Param-${header} header is required when ${path.join('.')} is set`);
    const decoded = decodeHeaderValue(raw.trim());
    if (decoded === undefined) throw headerMismatch(`the Mcp-Param-${header} header value is malformed`);
    if (!paramHeaderMatches(decoded, value))
      throw headerMismatch(`Mcp-Param-${header} header value does not match ${path.join('.')}`);
  }
}
