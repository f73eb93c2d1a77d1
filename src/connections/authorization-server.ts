// Finding a connection's authorization server: its metadata from the configured issuer (RFC 8414, then OpenID
// discovery, the issuer in the document checked), or, with no issuer configured, from the resource's Protected
// Resource Metadata (RFC 9728, the path-aware well-known URI first), which names it.
import * as oauth from 'oauth4webapi';
import { getDocument, type Reach, reachableUrl, refusal, unavailable } from './authorization-reach.js';
import { ConnectionRefused } from './errors.js';

/** Where discovery starts: the issuer when configured, else the protected resource. */
export type DiscoveryStart = { issuer: URL } | { resource: URL };

export async function discoverAuthorizationServer(
  start: DiscoveryStart,
  reach: Reach,
  signal?: AbortSignal,
): Promise<oauth.AuthorizationServer> {
  const issuer = 'issuer' in start ? start.issuer : await issuerOfResource(start.resource, reach, signal);
  return authorizationServerMetadata(issuer, reach, signal);
}

/** The path-aware well-known URI first, then the origin's (RFC 9728 §3.1, as MCP clients try them). */
function wellKnown(url: URL, suffix: string, pathFirst: boolean): URL[] {
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  const root = new URL(`/.well-known/${suffix}`, url.origin);
  return path ? [new URL(`/.well-known/${suffix}${path}`, url.origin), ...(pathFirst ? [root] : [])] : [root];
}

async function jsonObject(response: Response, what: string): Promise<Record<string, unknown>> {
  const body = (await response.json().catch(() => undefined)) as unknown;
  if (body && typeof body === 'object' && !Array.isArray(body)) return body as Record<string, unknown>;
  throw unavailable(`the ${what} at ${response.url || 'its URL'} is not a JSON object`);
}

/** RFC 9728: the resource's metadata must name the resource itself (or its origin) and an authorization server. */
async function issuerOfResource(resource: URL, reach: Reach, signal?: AbortSignal): Promise<URL> {
  const what = 'protected resource metadata';
  for (const url of wellKnown(resource, 'oauth-protected-resource', true)) {
    let response: Response;
    try {
      response = await getDocument(url, what, reach, signal);
    } catch (error) {
      throw refusal(error, `the resource ${resource.origin}`, reach, signal, []);
    }
    if (!response.ok) continue;
    const prm = await jsonObject(response, what);
    if (prm.resource !== resource.href && prm.resource !== resource.origin)
      throw new ConnectionRefused(
        'mismatch',
        `the ${what} at ${url.href} is for ${JSON.stringify(String(prm.resource).slice(0, 200))}, not ${resource.href}`,
      );
    const named = Array.isArray(prm.authorization_servers) ? prm.authorization_servers : [];
    const first = named.find((s): s is string => typeof s === 'string');
    if (!first) throw unavailable(`the ${what} of ${resource.href} names no authorization server`);
    return reachableUrl(first, 'authorization server', reach, unavailable);
  }
  throw unavailable(
    `${resource.href} publishes no ${what} (tried the well-known URIs at its path and its root)`,
  );
}

/** RFC 8414 and OpenID discovery in the order MCP gives; a document that names another issuer is never used. */
async function authorizationServerMetadata(
  issuer: URL,
  reach: Reach,
  signal?: AbortSignal,
): Promise<oauth.AuthorizationServer> {
  const what = 'authorization server metadata';
  const path = issuer.pathname === '/' ? '' : issuer.pathname.replace(/\/$/, '');
  const urls = [
    ...wellKnown(issuer, 'oauth-authorization-server', false),
    ...wellKnown(issuer, 'openid-configuration', false),
    ...(path ? [new URL(`${path}/.well-known/openid-configuration`, issuer.origin)] : []),
  ];
  const where = `the authorization server ${issuer.href}`;
  for (const url of urls) {
    try {
      const response = await getDocument(url, what, reach, signal);
      if (response.status !== 200) {
        await response.body?.cancel().catch(() => {});
        continue;
      }
      const as = await oauth.processDiscoveryResponse(issuer, response);
      if (typeof as.authorization_endpoint !== 'string' || typeof as.token_endpoint !== 'string')
        throw unavailable(`${where} names no authorization_endpoint or token_endpoint in its metadata`);
      return as;
    } catch (error) {
      if (error instanceof oauth.OperationProcessingError && error.code === oauth.JSON_ATTRIBUTE_COMPARISON)
        throw new ConnectionRefused(
          'mismatch',
          `the metadata at ${url.href} names another issuer than ${issuer.href}: not used`,
        );
      throw refusal(error, where, reach, signal, []);
    }
  }
  throw unavailable(`no ${what} found for ${issuer.href}`);
}
