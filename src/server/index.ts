// mrtr/server: a stateless MCP 2026-07-28 server whose multi-round calls are sealed, bound and bounded.
// A curated list: what is not named here is internal and may change between releases.

// The 2025 revisions the bridge speaks: protocol's list, under the name this entry point has always exported.
export {
  INVALID_REQUEST_STATE,
  LEGACY_PROTOCOL_VERSIONS as LEGACY_VERSIONS,
  MrtrError,
  type MrtrErrorCode,
  RoundRefused,
} from '../protocol/index.js';
export {
  type Catalog,
  type CatalogCaller,
  type CatalogKind,
  type CatalogOffer,
  offerOf,
} from './catalog/catalog.js';
export {
  type Completers,
  type FoundResource,
  type PromptEntry,
  promptEntry,
  type ResourceEntry,
  type ResourceTemplateEntry,
  resourceEntry,
  resourceTemplateEntry,
  type ToolEntry,
  toolEntry,
} from './catalog/entries.js';
export { text } from './content.js';
export {
  type AskConnector,
  type AuditNotes,
  type InputKind,
  InputRequired,
  inputRequired,
  type LogLevel,
  type Principal,
  type ProgressUpdate,
  type RequestContext,
  type ServerAsk,
} from './context.js';
export { HandlerTimeoutError } from './deadline.js';
export { SERVER_DEFAULTS } from './defaults.js';
export { type Logger, type RequestEnvironment, stderrLogger } from './environment.js';
export { InvalidOptionError, ServerError, type ServerErrorCode } from './errors.js';
export type {
  CompletionHandler,
  HandlerOptions,
  PromptHandler,
  PromptOptions,
  PromptResult,
  ResourceHandler,
  ResourceResult,
  TaskSupport,
  ToolHandler,
  ToolOptions,
  ToolResult,
  ToolTaskOptions,
} from './handlers.js';
export type { HeaderParam } from './header-params.js';
export {
  type HttpEndpoint,
  HttpServerTransport,
  type HttpServerTransportOptions,
  type PageRoutes,
} from './http.js';
export type { HttpEdgeSettings, LegacyClientOptions, SignInSetup } from './http-edge.js';
export type { AnswerRelay, RelayedAnswer } from './legacy/answer-relay.js';
export {
  LEGACY_DEFAULTS,
  LegacyBridge,
  type LegacyBridgeOptions,
  type LegacyOutbound,
} from './legacy/bridge.js';
export type { LegacyHttpOptions } from './legacy/http-front.js';
export { type FetchPeer, type McpFetchHandler, type McpHttpOptions, mcpHttp } from './mcp-http.js';
export type { RequestHandler, ServerCore } from './request-handler.js';
export {
  type OpenedRound,
  type RequestStateCodec,
  SealedStateCodec,
  type StateBinding,
  type StateEnvelope,
  type StateOpenFailure,
  type StateOpenResult,
} from './request-state.js';
export type { GuardedRound, GuardResult, RoundGuard, RoundTool } from './round/guard.js';
export { composeRound, type RoundLink } from './round/link.js';
export type { RoundEvent, RoundIntent, RoundObserver, RoundOutcome } from './round/observer.js';
export type { Round } from './round/round.js';
export type { RoundCall, RoundEntry, RoundRunnerOptions } from './round/run-options.js';
export { RoundRunner } from './round/runner.js';
export {
  type HttpOptions,
  McpServer,
  type McpServerOptions,
} from './server.js';
export type {
  ReplayOptions,
  ServerRoundOptions,
  ServerStateOptions,
  TaskOptions,
} from './server-options.js';
export { type StdioOptions, serveStdio } from './stdio.js';
export { HookTimeoutError } from './time-bound.js';
export { UNREAD_METHOD } from './transport-refusal.js';
