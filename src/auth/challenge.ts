// The WWW-Authenticate challenge (RFC 6750 §3, RFC 9728 §5.1) a refused request gets.
import type { AuthRefusal } from './errors.js';

/**
 * A quoted-string per RFC 9110, keeping only what RFC 6750 §3 allows in its values (printable ASCII): a typographic
 * quote or an accented letter would make node refuse the whole header, and the 401 would become a 500.
 */
const quoted = (value: string): string =>
  `"${value
    .replace(/[’‘]/g, "'")
    .replace(/[^\x20-\x7e]/g, '')
    .replace(/["\\]/g, '\\$&')}"`;

export interface ChallengeParams {
  resourceMetadata: string | undefined;
  /** The scopes to ask for: those the operation needs, else the server's `scopes_supported`. */
  scope: readonly string[] | undefined;
  refusal: AuthRefusal | undefined;
}

export function bearerChallenge({ resourceMetadata, scope, refusal }: ChallengeParams): string {
  const params: string[] = [];
  // A request with no credentials gets no error code (RFC 6750 §3.1); every other refusal names one.
  if (refusal && refusal.reason !== 'no_token' && refusal.error !== 'unavailable') {
    params.push(`error=${quoted(refusal.error)}`);
    params.push(`error_description=${quoted(refusal.message.replace(/^(Unauthorized|Forbidden): /, ''))}`);
  }
  if (scope && scope.length > 0) params.push(`scope=${quoted(scope.join(' '))}`);
  if (resourceMetadata) params.push(`resource_metadata=${quoted(resourceMetadata)}`);
  return params.length === 0 ? 'Bearer' : `Bearer ${params.join(', ')}`;
}
