// mrtr/auth: who is calling. Bearer tokens verified on every request (JWT access tokens against an OAuth issuer's
// JWKS, or development tokens from a file), the resource server's answers (401/403 + WWW-Authenticate, Protected
// Resource Metadata) and scope checks.
export {
  BearerAuth,
  BearerAuthConfigError,
  type BearerAuthOptions,
  insufficientScope,
} from './bearer-auth.js';
export { bearerChallenge } from './challenge.js';
export { AUTH_DEFAULTS } from './defaults.js';
export { type DevTokenEntry, DevTokens, DevTokensError, parseDevTokens } from './dev-tokens.js';
export { AuthConfigError, type AuthErrorCode, AuthRefusal } from './errors.js';
export {
  fetchIssuerMetadata,
  type IssuerMetadata,
  IssuerMetadataError,
  metadataUrls,
} from './issuer-metadata.js';
export { JwtVerifier, JwtVerifierConfigError, type JwtVerifierOptions } from './jwt-verifier.js';
export { type AuthPrincipal, DEV_TOKEN_ISSUER } from './principal.js';
export { metadataPaths, PRM_PATH, type ProtectedResourceMetadata } from './resource-metadata.js';
export { expandScopes, missingScopes, type ScopeImplications } from './scopes.js';
export {
  BrowserSignIn,
  type BrowserSignInOptions,
  type ExpectedPrincipal,
  FormError,
  isSamePrincipal,
  type OidcSignInOptions,
  type PageSession,
  SIGNIN_DEFAULTS,
  SignInConfigError,
  type SigningKey,
} from './signin/index.js';
export type { TokenVerifier } from './verifier.js';
