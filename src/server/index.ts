export { text } from './content.js';
export {
  type InputKind,
  InputRequired,
  inputRequired,
  type LogLevel,
  type Principal,
  type ProgressUpdate,
  type RequestContext,
} from './context.js';
export { HandlerTimeoutError } from './deadline.js';
export type { Logger, RequestEnvironment } from './dispatch.js';
export { Dispatcher } from './dispatch.js';
export type { HttpEndpoint, HttpTransportOptions } from './http.js';
export { HttpTransport } from './http.js';
export { INVALID_REQUEST_STATE } from './mrtr.js';
export type {
  CompletionHandler,
  MrtrOptions,
  PromptHandler,
  PromptOptions,
  PromptResult,
  ResourceHandler,
  ResourceResult,
  ToolHandler,
  ToolOptions,
  ToolResult,
} from './registry.js';
export {
  type OpenedRound,
  type RequestStateCodec,
  SealedStateCodec,
  type StateBinding,
  type StateEnvelope,
  type StateOpenFailure,
  type StateOpenResult,
} from './request-state.js';
export { McpServer, type McpServerOptions, stderrLogger } from './server.js';
export type { StdioOptions } from './stdio.js';
