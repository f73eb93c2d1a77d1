// Every OAuth document the client reads (resource metadata, authorization server metadata, registration and token
// responses) comes through here: only from https (or loopback http) URLs, never bigger than the cap MCP responses
// have, and never past the caller's deadline. A hostile server must not fill memory, stall the command, or hand the
// client an inline `data:` document.
import { OAuthError } from './oauth-error.js';

/** Loopback hosts, where plain http is what tests and local demos use. */
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

export const isLoopback = (url: URL): boolean => LOOPBACK.has(url.hostname);

/**
 * Refuse a URL the client would fetch or send a person to: https, or http where `allowHttp` says so (loopback by
 * default). `data:`, `file:`, `javascript:` and every other scheme name no server.
 */
export function checkOAuthUrl(raw: string, what: string, allowHttp: (url: URL) => boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OAuthError(`the ${what} ${JSON.stringify(raw.slice(0, 200))} is not a URL`, 401);
  }
  if (url.protocol === 'https:' || (url.protocol === 'http:' && allowHttp(url))) return url;
  const scheme = url.protocol.replace(/:$/, '');
  throw new OAuthError(
    scheme === 'http'
      ? `the ${what} ${url.href} is plain http on a host that is not this machine: refused (https only)`
      : `the ${what} is a ${scheme}: URL: refused (only https, or http on this machine)`,
    401,
  );
}

/** A signal that fires at the caller's deadline or after `perRequestMs`, whichever comes first. */
export function deadline(signal: AbortSignal | undefined, perRequestMs: number): AbortSignal {
  const own = AbortSignal.timeout(perRequestMs);
  return signal ? AbortSignal.any([signal, own]) : own;
}

const mib = (n: number) => (n % (1024 * 1024) === 0 ? `${n / (1024 * 1024)} MiB` : `${n} bytes`);

/**
 * Read a response's body into memory, stopping (and cancelling the stream) once it passes `maxBytes`, and give
 * back an equivalent response whose body is that buffer: oauth4webapi and our own parsers then read a bounded copy.
 */
export async function capBody(response: Response, what: string, maxBytes: number): Promise<Response> {
  const declared = Number(response.headers.get('content-length'));
  const tooBig = () =>
    new OAuthError(
      `the ${what} from ${new URL(response.url || 'http://unknown').host} is larger than ${mib(maxBytes)} (the cap on OAuth documents): refused`,
      401,
    );
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw tooBig();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (response.body) {
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => {});
        throw tooBig();
      }
      chunks.push(value);
    }
  }
  // 204, 205 and 304 may not carry a body, even an empty one.
  const bodyless = response.status === 204 || response.status === 205 || response.status === 304;
  const copy = new Response(bodyless ? null : Buffer.concat(chunks), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  // `url` is read-only on a constructed Response; oauth4webapi and error messages read it.
  Object.defineProperty(copy, 'url', { value: response.url });
  return copy;
}

/**
 * fetch() for OAuth documents: the URL checked, redirects refused, the body capped, the deadline obeyed. `what`
 * names the document in errors ("protected resource metadata", "token response", …); `fetchImpl` is whose fetch.
 */
export function documentFetch(
  what: string,
  maxBytes: number,
  fetchImpl: typeof fetch = fetch,
): (url: string | URL | Request, init?: RequestInit) => Promise<Response> {
  return async (url, init) => {
    const response = await fetchImpl(url, init).catch((error: unknown) => {
      const signal = init?.signal;
      if (signal?.aborted) throw signal.reason ?? error;
      throw new OAuthError(
        `could not fetch the ${what} from ${String(url instanceof Request ? url.url : url)}: ${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message}`,
        401,
      );
    });
    return capBody(response, what, maxBytes);
  };
}
