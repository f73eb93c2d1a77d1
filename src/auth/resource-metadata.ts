// OAuth 2.0 Protected Resource Metadata (RFC 9728): where a client learns which authorization server to ask and
// which scopes to ask for. Served at the well-known URI with the resource's path inserted (§3.1) and at the root.

export const PRM_PATH = '/.well-known/oauth-protected-resource';

export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers?: string[];
  scopes_supported?: string[];
  bearer_methods_supported: ['header'];
  resource_name?: string;
  resource_documentation?: string;
}

/** The metadata paths for a resource URL: path-inserted first (the one the challenge names), then the root one. */
export function metadataPaths(resource: string): string[] {
  const path = new URL(resource).pathname.replace(/\/$/, '');
  return path === '' ? [PRM_PATH] : [`${PRM_PATH}${path}`, PRM_PATH];
}

/** The absolute URL of the metadata a challenge points at. */
export function metadataUrl(resource: string): string {
  const url = new URL(resource);
  return `${url.origin}${metadataPaths(resource)[0]}`;
}

/** Check a resource identifier the way RFC 8707 §2 asks: absolute, http(s), no fragment. */
export function checkResourceUrl(resource: string): string | undefined {
  let url: URL;
  try {
    url = new URL(resource);
  } catch {
    return `resource ${JSON.stringify(resource)} is not an absolute URL`;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `resource ${resource} must be http(s)`;
  if (url.hash !== '' || resource.includes('#')) return `resource ${resource} must not have a fragment`;
  return undefined;
}
