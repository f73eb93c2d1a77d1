// mrtr/gateway: mrtr's controls in front of MCP servers it did not write — policy, consent, step-up, four-eyes
// approval, rate limits, replay guards and the audit trail — for upstreams over Streamable HTTP or stdio.
export { GatewayCatalog, type GatewayTool } from './catalog.js';
export { type GatewayConfig, GatewayConfigError, loadGatewayConfig, parseGatewayConfig } from './config.js';
export { connectionConfigs, needsConnections } from './connection-configs.js';
export { GatewayPanel, type GatewayPanelOptions } from './console-panel.js';
export {
  type Egress,
  type EgressCaller,
  type EgressConfig,
  EgressRefused,
  egressFor,
  type RememberingVerifier,
  rememberingVerifier,
  type UpstreamConnections,
} from './egress/index.js';
export { GATEWAY_DEFAULTS, Gateway, type GatewayOptions } from './gateway.js';
export { exposedName, NAME_SEPARATOR, splitExposedName } from './names.js';
export type { DefinitionChange, GatewayObserver, UpstreamRoundEvent } from './observer.js';
export { normalizePathArguments } from './paths.js';
export { definitionDigest, PinBook, pinCommandPlan, type SeenTool } from './pins/index.js';
export { GatewayPinsError } from './pins/lock-file.js';
export type { Control, Decision, Policy, PolicyCaller, PolicyRule, ToolRef } from './policy/index.js';
export { unknownArgumentWarnings } from './policy/index.js';
export { RateLimiter } from './rate-limit.js';
export { Upstream, type UpstreamSpec } from './upstream.js';
