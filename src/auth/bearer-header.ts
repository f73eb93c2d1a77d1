// Reading the access token from a request: the Authorization header only (OAuth 2.1 §5.1.1), exactly once.
import { AuthRefusal, MissingToken } from './errors.js';

// RFC 6750 §2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
// OAuth 2.1 forbids tokens in the URI: a query naming one is refused, never read.
const QUERY_TOKEN = /[?&]access_token=/i;

/**
 * The bearer token of a request. `authorization` is every Authorization header the request carried (node keeps
 * only the first of duplicates, so the caller passes them all from rawHeaders). Throws AuthRefusal.
 */
export function bearerToken(authorization: readonly string[], url: string): string {
  if (QUERY_TOKEN.test(url)) {
    throw new AuthRefusal(
      'invalid_request',
      'token_in_query',
      'Unauthorized: access tokens are not accepted in the query string; send Authorization: Bearer <token>',
    );
  }
  if (authorization.length === 0) throw new MissingToken();
  if (authorization.length > 1) {
    throw new AuthRefusal(
      'invalid_request',
      'repeated_authorization',
      'Unauthorized: the request carries more than one Authorization header',
    );
  }
  const match = BEARER.exec(authorization[0]!);
  if (!match) {
    throw new AuthRefusal(
      'invalid_request',
      'malformed_authorization',
      'Unauthorized: the Authorization header must be "Bearer <token>"',
    );
  }
  return match[1]!;
}

/** Every Authorization header value in a node rawHeaders list (name/value pairs). */
export function authorizationHeaders(rawHeaders: readonly string[]): string[] {
  const values: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.length === 13 && rawHeaders[i]!.toLowerCase() === 'authorization')
      values.push(rawHeaders[i + 1]!);
  }
  return values;
}
