// What a bearer-token checker is: the transport asks it who a token belongs to, and nothing else.
import type { AuthPrincipal } from './principal.js';

export interface TokenVerifier {
  /** The issuers whose tokens this verifier accepts: the Protected Resource Metadata's `authorization_servers`. */
  readonly authorizationServers: readonly string[];
  /** The token's principal; throws AuthRefusal for a token that is not valid here. Synchronous when it can be. */
  verify(token: string): AuthPrincipal | Promise<AuthPrincipal>;
}
