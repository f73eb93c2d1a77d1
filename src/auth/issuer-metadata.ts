// Finding an issuer's JWKS: its metadata document (RFC 8414, with OpenID Connect Discovery as the fallback). Written
// here rather than with openid-client because that library's discovery needs an OAuth client, which a resource
// server is not; this is one fetch and two checks.
import { MrtrError } from '../protocol/index.js';

export interface IssuerMetadata {
  issuer: string;
  jwks_uri: string;
  [key: string]: unknown;
}

/** The metadata URLs to try, in the order authorization-server-discovery.mdx gives for issuers with and without a path. */
export function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/$/, '');
  const origin = url.origin;
  if (path === '') {
    return [`${origin}/.well-known/oauth-authorization-server`, `${origin}/.well-known/openid-configuration`];
  }
  return [
    `${origin}/.well-known/oauth-authorization-server${path}`,
    `${origin}/.well-known/openid-configuration${path}`,
    `${origin}${path}/.well-known/openid-configuration`,
  ];
}

const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\])$/i;

/**
 * Where keys and metadata may come from: https, or plain http on this machine only (anyone on the path of a plain
 * http fetch could hand us their own keys, and every token they mint would pass). Undefined when fine.
 */
export function checkFetchUrl(value: string, what: string, allowInsecureHttp = false): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `${what} ${JSON.stringify(value)} is not a URL`;
  }
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && (allowInsecureHttp || LOOPBACK.test(url.hostname))) return undefined;
  return `${what} ${value} must be https (plain http only on loopback)`;
}

export class IssuerMetadataError extends MrtrError {
  override readonly name = 'IssuerMetadataError';
  declare readonly code: 'ERR_AUTH_ISSUER_METADATA';
  constructor(message: string, options?: ErrorOptions) {
    super('ERR_AUTH_ISSUER_METADATA', message, options);
  }
}

/**
 * Fetch and check the issuer's metadata: the document must name exactly this issuer (RFC 8414 §3.3, the mix-up
 * defence) and a jwks_uri. Redirects are not followed: metadata served from elsewhere is not the issuer's.
 */
export async function fetchIssuerMetadata(
  issuer: string,
  timeoutMs: number,
  fetchImpl: typeof fetch = fetch,
): Promise<IssuerMetadata> {
  const problems: string[] = [];
  for (const url of metadataUrls(issuer)) {
    let response: Response;
    try {
      response = await fetchImpl(url, {
        redirect: 'manual',
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      problems.push(`${url}: ${(error as Error).message}`);
      continue;
    }
    if (response.status !== 200) {
      problems.push(`${url}: HTTP ${response.status}`);
      await response.body?.cancel();
      continue;
    }
    let document: unknown;
    try {
      document = await response.json();
    } catch {
      problems.push(`${url}: not JSON`);
      continue;
    }
    const metadata = document as Partial<IssuerMetadata> | null;
    if (metadata === null || typeof metadata !== 'object' || metadata.issuer !== issuer) {
      throw new IssuerMetadataError(
        `the metadata at ${url} names issuer ${JSON.stringify(metadata?.issuer)}, not ${issuer}`,
      );
    }
    if (typeof metadata.jwks_uri !== 'string') {
      throw new IssuerMetadataError(`the metadata at ${url} has no jwks_uri`);
    }
    const problem = checkFetchUrl(metadata.jwks_uri, 'jwks_uri');
    if (problem) throw new IssuerMetadataError(`the metadata at ${url}: ${problem}`);
    return metadata as IssuerMetadata;
  }
  throw new IssuerMetadataError(`no metadata for issuer ${issuer} (${problems.join('; ')})`);
}
