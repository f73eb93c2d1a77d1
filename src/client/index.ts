// mrtr/client: an MCP 2026-07-28 client whose MRTR driver is bounded, abortable and isolated per call.

export {
  capabilitiesFor,
  type DetailedTask,
  declaredKinds,
  INPUT_KINDS,
  type InputKind,
  LEGACY_PROTOCOL_VERSIONS,
  MrtrError,
  type MrtrErrorCode,
  TASKS_EXTENSION,
  type TaskStatus,
} from '../protocol/index.js';
export {
  type CallOptions,
  CLIENT_NAME,
  CLIENT_VERSION,
  type DiscoverResult,
  describeOutcome,
  type FollowTaskOptions,
  McpClient,
  type McpClientOptions,
  type RejectedTool,
  type RequestOptions,
  unwrapOutcome,
} from './client.js';
export {
  CLIENT_DEFAULTS,
  type DeclinedAnswer,
  type DriverOptions,
  type DriverTarget,
  type MrtrEvent,
  type MrtrOutcome,
  type PendingQuestion,
  type TaskEvent,
  type TaskWire,
} from './driver.js';
export {
  CallIncompleteError,
  HeldCallError,
  type HeldCallErrorCode,
  ProtocolViolation,
  RemoteError,
  RequestAborted,
  SessionExpired,
  TransportFailure,
} from './errors.js';
export type { HeldCallLimits } from './held-calls.js';
export { HttpClientTransport, type HttpClientTransportOptions } from './http-transport.js';
export {
  type InputQuestion,
  type ParsedInputRequired,
  type PersonReason,
  parseInputRequired,
} from './input.js';
export { inspectLink, type LinkVerdict } from './link.js';
export { type BearerChallenge, parseBearerChallenge } from './oauth/challenge.js';
export { canonicalResource, OAuthClient, type OAuthClientOptions, OAuthError } from './oauth/oauth-client.js';
export {
  defaultTokenFile,
  fileTokenStore,
  memoryTokenStore,
  type ServerCredentials,
  type StoredClient,
  type StoredTokens,
  type TokenStore,
} from './oauth/token-store.js';
export {
  type AgentPolicyOptions,
  agentPolicyResolver,
  type InputResolver,
  type PolicyRule,
  pickResolver,
  type ResolveContext,
  rootsResolver,
  type ScriptedAnswer,
  type ScriptedResolverOptions,
  samplingResolver,
  scriptedResolver,
} from './resolvers.js';
export type { RoundOptions, RoundResult } from './round-args.js';
export { driveMrtr } from './round-loop.js';
export {
  afterLabel,
  joinSafe,
  QUOTE,
  quoteLines,
  type SafeBlock,
  type SafeText,
  safe,
  safeLine,
  safeLines,
  safeText,
} from './safe-text.js';
export { INHERITED_ENV_VARS, minimalEnvironment } from './stdio-env.js';
export { StdioClientTransport, type StdioClientTransportOptions } from './stdio-transport.js';
export { POLL_BOUNDS, pollDelayMs, readTask, taskState } from './task-shape.js';
export { type TerminalResolver, type TerminalResolverOptions, terminalResolver } from './terminal.js';
export { type HeaderBinding, paramHeaders, planToolHeaders, type ToolHeaderPlan } from './tool-headers.js';
export type { ClientTransport, TransportRequest } from './transport.js';
