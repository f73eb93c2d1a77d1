// From a verified JWT's claims to the principal: which claims mean what is configurable, because issuers differ
// (Auth0 and oidc-provider send `scope`, Azure AD `scp`, Keycloak nests roles under `realm_access.roles`).
import type { AuthPrincipal } from './principal.js';

export interface ClaimNames {
  /** Claims holding scopes, first present wins: a space-separated string or an array of strings. */
  scopeClaims: readonly string[];
  /** The claim holding roles; a dotted path reaches a nested one. An array of strings or a space-separated string. */
  rolesClaim: string;
}

/** Own property only: a claim named `constructor` or `__proto__` must never read Object.prototype. */
function claimAt(payload: Record<string, unknown>, path: string): unknown {
  let value: unknown = payload;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** A list of non-empty strings from a string (space-separated) or an array; anything else is no list. */
function stringList(value: unknown): string[] {
  if (typeof value === 'string') return value.split(' ').filter((s) => s !== '');
  if (Array.isArray(value)) return value.filter((s): s is string => typeof s === 'string' && s !== '');
  return [];
}

/** The roles `path` (a claim, or a dotted path to a nested one) holds in `payload`: an ID token's or an access token's. */
export function rolesOf(payload: Record<string, unknown>, path: string): string[] {
  return stringList(claimAt(payload, path));
}

const stringClaim = (payload: Record<string, unknown>, name: string): string | undefined => {
  const value = claimAt(payload, name);
  return typeof value === 'string' && value !== '' ? value : undefined;
};

/** The principal a verified payload names. The caller has checked `sub` and `iss` are strings. */
export function principalFromClaims(payload: Record<string, unknown>, names: ClaimNames): AuthPrincipal {
  let scopes: string[] = [];
  for (const claim of names.scopeClaims) {
    const value = claimAt(payload, claim);
    if (value !== undefined) {
      scopes = stringList(value);
      break;
    }
  }
  const principal: {
    -readonly [K in keyof AuthPrincipal]: AuthPrincipal[K];
  } = {
    subject: payload.sub as string,
    issuer: payload.iss as string,
    roles: rolesOf(payload, names.rolesClaim),
    scopes,
  };
  const clientId = stringClaim(payload, 'client_id') ?? stringClaim(payload, 'azp');
  if (clientId !== undefined) principal.clientId = clientId;
  const name = stringClaim(payload, 'name') ?? stringClaim(payload, 'preferred_username');
  if (name !== undefined) principal.name = name;
  if (typeof payload.exp === 'number') principal.expiresAt = payload.exp * 1000;
  return principal;
}
