// The gateway's egress: what it presents to each upstream (nothing, its own secret, or a token exchanged for the
// caller), and the seam that lets it read the caller's verified token without widening the principal.
export { type EgressOptions, egressFor } from './egress-for.js';
export { type EgressRefusalReason, EgressRefused, GatewayConfigError } from './errors.js';
export { connectionOwner, oauthEgress, type UpstreamConnections } from './oauth.js';
export { type RememberingVerifier, rememberingVerifier } from './remembering-verifier.js';
export {
  ACCESS_TOKEN_TYPE,
  TOKEN_EXCHANGE_DEFAULTS,
  TOKEN_EXCHANGE_GRANT,
  type TokenExchangeOptions,
} from './token-exchange.js';
export type { Egress, EgressCaller, EgressConfig } from './types.js';
