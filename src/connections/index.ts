// mrtr/connections: "connect your account" — a server (or a gateway) acts at a third party for each person with
// that person's own OAuth tokens. The person connects once through a URL-mode question to the server's own page;
// the tokens stay in the server's vault, encrypted, and never pass through the MCP client.
export { OAUTH_FLOW_DEFAULTS, type OAuthFlowOptions, oauthFlow } from './authorization-flow.js';
export { CONNECTIONS_DEFAULTS, type ConnectionAction, type ConnectionEvent } from './connect-events.js';
export { connectRedirectUri } from './connect-pages.js';
export { type ConnectionHost, Connections, type ConnectionsOptions } from './connections.js';
export { ConnectionRefused, type ConnectionRefusedReason, ConnectionsUsageError } from './errors.js';
export type {
  AuthorizationFlow,
  ConnectionConfig,
  ConnectionOwner,
  ConnectionPages,
  ConnectionSummary,
  HeldTokens,
  PendingAuthorization,
  TokenGrant,
  TokenVault,
} from './types.js';
export { DEFAULT_VAULT_TTL_MS, StoreVault, type StoreVaultOptions, storeVault } from './vault.js';
