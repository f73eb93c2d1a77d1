// Which bearer token a refusal was for, without the token: a short digest both sides of a 401 can compute. A gateway
// told "401" this way drops a person's token only when it is the one refused, not one refreshed since.
import { createHash } from 'node:crypto';

/** 16 base64url characters of the token's SHA-256 (96 bits): names the token, cannot be turned back into it. */
export function bearerDigest(token: string): string {
  return createHash('sha256').update(token).digest('base64url').slice(0, 16);
}
