// The auth room's defaults, each with its reason. Frozen: a caller changes them per instance, never globally.

export const AUTH_DEFAULTS = Object.freeze({
  /** Clock skew tolerated on `exp` and `nbf`: issuers and servers drift by seconds, not minutes. */
  clockToleranceSec: 5,
  /**
   * Asymmetric algorithms only: with a JWKS, an HS* token would be checked against a *public* key anyone can read
   * (the classic algorithm-confusion attack). HS* needs an explicitly configured shared secret.
   */
  asymmetricAlgorithms: Object.freeze([
    'RS256',
    'RS384',
    'RS512',
    'PS256',
    'PS384',
    'PS512',
    'ES256',
    'ES384',
    'ES512',
    'EdDSA',
    'Ed25519',
  ]),
  /** A JWKS is refetched at most this often for an unknown `kid`: forged kids cannot make us hammer the issuer. */
  jwksCooldownMs: 30_000,
  /** How long a fetched JWKS is trusted before it is fetched again (a removed key stops working within this). */
  jwksCacheMaxAgeMs: 600_000,
  /** How long fetching the issuer's metadata or JWKS may take before the round is answered 503. */
  fetchTimeoutMs: 5_000,
  /**
   * A token whose signature was verified is remembered this long (never past its `exp`), so the second round of a
   * flow does not pay for the signature again. Kept well under the JWKS cache age, so it widens no window.
   */
  verifiedTokenCacheMs: 60_000,
  /** Most verified tokens remembered at once: a flood of distinct valid tokens cannot grow memory without bound. */
  verifiedTokenCacheSize: 10_000,
  /** Longest one token check may take (a hung introspection call, a stuck custom verifier) before 503. */
  verifyTimeoutMs: 10_000,
  /** After the issuer's metadata failed to load, wait this long before asking it again. */
  discoveryRetryMs: 5_000,
  /** Where scopes are read from (RFC 8693 / RFC 9068: a space-separated `scope`; some issuers send an `scp` array). */
  scopeClaims: Object.freeze(['scope', 'scp']),
  /** Where roles are read from (a dotted path reaches nested claims, e.g. `realm_access.roles`). */
  rolesClaim: 'roles',
});
