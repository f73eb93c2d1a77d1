// The WWW-Authenticate challenge (RFC 6750 §3, RFC 9728 §5.1) a refused request gets.
import type { AuthRefusal } from './errors.js';

/** A quoted-string per RFC 9110: backslash-escape `"` and `\`; drop control characters a header cannot carry. */
const quoted = (value: string): string =>
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point.
  `"${value.replace(/[\u0000-\u001f\u007f]/g, '').replace(/["\\]/g, '\\$&')}"`;

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
