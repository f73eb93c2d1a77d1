// The people's connections of a gateway whose upstreams need each person's own account (`credentials: type:
// oauth`): built from the gateway's shared store and keyring, attached to its server (the connect pages and the
// callback). Behind a factory so the wiring is one place: the connections room's `Connections`, with its vault.

import { checkOAuthUrl, isLoopback } from '../client/internal.js';
import {
  type ConnectionConfig,
  type ConnectionEvent,
  Connections,
  oauthFlow,
  storeVault,
} from '../connections/index.js';
import type { ConsoleConnections } from '../console/index.js';
import type { UpstreamConnections } from '../gateway/index.js';
import type { McpServer } from '../server/index.js';
import { createEphemeralKeyring, type Keyring } from '../state/index.js';
import type { SharedStore } from '../stores/index.js';

export interface GatewayConnectionsInput {
  /** The gateway's shared store: connect records, pending authorizations, the vault's sealed grants. */
  readonly store: SharedStore;
  /** The gateway's keyring (--state-keys): grants and authorization requests are sealed with it. */
  readonly keyring: Keyring | undefined;
  /** One per oauth upstream (connectionConfigs), client secrets read. */
  readonly connections: readonly ConnectionConfig[];
  /** Told what happened to each person's connection (the audit trail records it): never a token. */
  readonly onEvent?: (event: ConnectionEvent) => void;
}

/**
 * What the gateway uses of the connections, what the console's connections panel shows, and how they join its server
 * (pages at /mrtr/connect/…).
 */
export interface GatewayConnections extends UpstreamConnections, ConsoleConnections {
  attach(server: McpServer): unknown;
}

export type GatewayConnectionsFactory = (input: GatewayConnectionsInput) => GatewayConnections;

/**
 * The connections `mrtr gateway` composes: grants sealed in the shared store with the gateway's keyring. Without
 * --state-keys the keyring lives as long as the process, and so do the connections (say so at start).
 */
export const gatewayConnections: GatewayConnectionsFactory = (input) => {
  const keyring = input.keyring ?? createEphemeralKeyring();
  return new Connections({
    store: input.store,
    vault: storeVault(input.store, keyring),
    keyring,
    connections: input.connections,
    flowFor: gatewayFlowFor,
    ...(input.onEvent ? { onEvent: input.onEvent } : {}),
  });
};

/**
 * The OAuth client of one upstream's connection. Plain http only to an upstream on this machine (the demo, tests): an
 * https upstream whose metadata named a loopback endpoint would aim the gateway's client secret at a local service.
 */
export const gatewayFlowFor = (config: ConnectionConfig) =>
  oauthFlow(config, { allowHttpLoopback: upstreamOnLoopback(config) });

/**
 * Why people could never connect `config` through `redirectUri`, or undefined when they can: the gateway's flow sends
 * a person back to plain http only when the upstream is on this machine too (gatewayFlowFor).
 */
export function redirectUriRefusal(config: ConnectionConfig, redirectUri: string): string | undefined {
  const upstreamLocal = upstreamOnLoopback(config);
  try {
    checkOAuthUrl(redirectUri, 'redirect URI', (url) => upstreamLocal && isLoopback(url));
    return undefined;
  } catch {
    return `upstream ${config.name}: its authorization server must send people back to https, and this gateway's redirect URI would be ${redirectUri}: give --resource with the gateway's public https URL`;
  }
}

/** Plain http is allowed only to an upstream on this machine (the demo, tests). */
const upstreamOnLoopback = (config: ConnectionConfig): boolean =>
  onLoopback(config.resource ?? config.issuer);

const onLoopback = (url: string | undefined): boolean => {
  try {
    return ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(url ?? '').hostname);
  } catch {
    return false;
  }
};
