// How a connection's OAuth client reaches the third party: only https (plain http only on this machine), every
// document capped, every request timed; and what any failure becomes — a ConnectionRefused whose message names
// what went wrong and never carries a token, a code or a secret.
import * as oauth from 'oauth4webapi';
import { OAuthError, safeLine } from '../client/index.js';
import { checkOAuthUrl, deadline, documentFetch, isLoopback } from '../client/internal.js';
import { ConnectionRefused, type ConnectionRefusedReason, ConnectionsUsageError } from './errors.js';

export interface Reach {
  readonly fetch: typeof fetch;
  readonly timeoutMs: number;
  readonly maxDocumentBytes: number;
  readonly allowHttpLoopback: boolean;
}

/** The URL, if https or (when allowed) http on loopback; `fail` makes the error (usage at construction, else refusal). */
export function reachableUrl(raw: string, what: string, reach: Reach, fail: (message: string) => Error): URL {
  try {
    return checkOAuthUrl(raw, what, (url) => reach.allowHttpLoopback && isLoopback(url));
  } catch (error) {
    throw fail((error as Error).message);
  }
}

export const usage = (message: string) => new ConnectionsUsageError(message);
export const unavailable = (message: string) => new ConnectionRefused('unavailable', message);

/** A metadata document by GET: JSON asked for, no redirect followed, capped, within the time. */
export function getDocument(url: URL, what: string, reach: Reach, signal?: AbortSignal): Promise<Response> {
  return documentFetch(
    what,
    reach.maxDocumentBytes,
    reach.fetch,
  )(url, {
    headers: { accept: 'application/json' },
    redirect: 'error',
    signal: deadline(signal, reach.timeoutMs),
  });
}

/** oauth4webapi's options for one request to `endpoint` (already checked by reachableUrl). */
export function requestOptions(
  endpoint: URL,
  what: string,
  reach: Reach,
  signal?: AbortSignal,
): { [oauth.allowInsecureRequests]?: boolean; [oauth.customFetch]: typeof fetch; signal: AbortSignal } {
  return {
    ...(endpoint.protocol === 'http:' ? { [oauth.allowInsecureRequests]: true } : {}),
    [oauth.customFetch]: documentFetch(what, reach.maxDocumentBytes, reach.fetch) as typeof fetch,
    signal: deadline(signal, reach.timeoutMs),
  };
}

/** Third-party text for a message: one line, no control or invisible characters, no secret of ours, clipped. */
export function cleanText(text: unknown, secrets: readonly (string | undefined)[], max = 200): string {
  let out = safeLine(text) as string;
  for (const secret of secrets) if (secret && secret.length >= 4) out = out.split(secret).join('[redacted]');
  return out.length > max ? `${out.slice(0, max)}…` : out;
}

/**
 * What `error` from a request to `where` becomes. An OAuth error answer gets `oauthReason` (what it means depends on
 * the grant); the caller's own abort is rethrown as it came.
 */
export function refusal(
  error: unknown,
  where: string,
  reach: Reach,
  signal: AbortSignal | undefined,
  secrets: readonly (string | undefined)[],
  oauthReason: (code: string) => ConnectionRefusedReason = () => 'denied',
): unknown {
  if (error instanceof ConnectionRefused) return error;
  if (signal?.aborted) return signal.reason ?? error;
  const text = (s: unknown) => cleanText(s, secrets);
  if (error instanceof oauth.ResponseBodyError) {
    const description = error.error_description ? `: ${text(error.error_description)}` : '';
    return new ConnectionRefused(
      oauthReason(error.error),
      `${where} answered ${text(error.error)} (HTTP ${error.status})${description}`,
    );
  }
  if (error instanceof oauth.WWWAuthenticateChallengeError) {
    const code = error.cause[0]?.parameters.error;
    return new ConnectionRefused(
      'denied',
      `${where} refused this server's client (HTTP ${error.status}${code ? ` ${text(code)}` : ''}): check its client id and secret`,
    );
  }
  if ((error as Error)?.name === 'TimeoutError')
    return unavailable(`${where} did not answer within ${reach.timeoutMs} ms`);
  if (error instanceof OAuthError) return unavailable(text((error as Error).message));
  if (error instanceof oauth.OperationProcessingError || error instanceof oauth.UnsupportedOperationError)
    return unavailable(`${where} gave an answer that is not usable OAuth: ${text(error.message)}`);
  return unavailable(`${where} could not be reached: ${text((error as Error)?.message ?? error)}`);
}
