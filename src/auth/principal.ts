// Who is calling, as the auth room establishes it. Structurally a state Principal (subject, issuer, client id —
// what requestState binds) plus what handlers and guards decide on (name, roles, scopes).

export interface AuthPrincipal {
  /** The token's `sub`. */
  readonly subject: string;
  /** The token's `iss` (for development tokens: `urn:mrtr:dev-tokens`). */
  readonly issuer: string;
  /** The OAuth client the token was issued to (`client_id`, else `azp`), when the token names one. */
  readonly clientId?: string;
  /** A display name (`name`, else `preferred_username`), for pages and logs; never used to decide. */
  readonly name?: string;
  readonly roles: readonly string[];
  readonly scopes: readonly string[];
  /** When the token expires (ms since the epoch), when it says. */
  readonly expiresAt?: number;
}

/** The issuer every development token's principal carries: never a URL, so it cannot collide with a real issuer. */
export const DEV_TOKEN_ISSUER = 'urn:mrtr:dev-tokens';
