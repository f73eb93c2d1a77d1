// mrtr/protocol: the MCP 2026-07-28 wire — types, error codes, header and capability rules, validators — that server
// and client share. A curated list: what is not named here is internal.
export {
  ErrorCode,
  type ErrorCodeValue,
  httpStatusForError,
  invalidParams,
  McpError,
} from './errors.js';
export {
  decodeHeaderValue,
  encodeHeaderValue,
  nameHeaderField,
} from './headers.js';
export {
  type BodyStream,
  type PageRequest,
  type PageResponse,
  readBody,
  readBodyText,
} from './http-body.js';
export {
  capabilitiesFor,
  clientSupports,
  declaredKinds,
  INPUT_KINDS,
  type InputKind,
  kindOfInputRequest,
} from './input-kinds.js';
export {
  emptyRecord,
  isJsonObject,
  nestsDeeperThan,
  ownValue,
  withoutPrototypes,
} from './json.js';
export {
  isLegacyVersion,
  knowsElicitationModes,
  LATEST_LEGACY_PROTOCOL_VERSION,
  LEGACY_PROTOCOL_VERSIONS,
  legacyResponse,
  negotiateLegacyVersion,
  primesStreams,
} from './legacy.js';
export { inputRequestFromLegacy, legacyRequestParams } from './legacy-requests.js';
export { type LineHandlers, LineSplitter } from './line-splitter.js';
export { type LinearPattern, linearRegExp } from './linear-regexp.js';
export { type ClassifiedMessage, classifyMessage, errorResponse } from './message.js';
export {
  HEADER_METHOD,
  HEADER_NAME,
  HEADER_PARAM_PREFIX,
  HEADER_PROTOCOL_VERSION,
  type HumanRequiredReason,
  isMcpReservedMetaKey,
  LATEST_PROTOCOL_VERSION,
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_HUMAN_REQUIRED,
  META_LOG_LEVEL,
  META_PROGRESS,
  META_PROTOCOL_VERSION,
  META_RETRY_AFTER_MS,
  META_SERVER_INFO,
  META_SUBSCRIPTION_ID,
  MRTR_META_PREFIX,
  SUPPORTED_PROTOCOL_VERSIONS,
} from './meta.js';
export {
  ERROR_DEFINITION,
  REQUEST_DEFINITION,
  RESULT_DEFINITION,
} from './methods.js';
export {
  CorruptDataError,
  InvalidArgumentError,
  InvalidOptionError,
  MakeDirectoryError,
  MRTR_ERROR_CODES,
  MrtrError,
  type MrtrErrorCode,
  StoreContendedError,
  TimeLimitError,
} from './mrtr-error.js';
export { INVALID_REQUEST_STATE, invalidRequestState, RoundRefused } from './refusal.js';
export {
  compileJsonSchema,
  compilePeerSchema,
  describeSchemaErrors,
  precompileSchemaValidators,
  schemaValidator,
} from './schema-validator.js';
export {
  type DetailedTask,
  declaresTasks,
  TASK_METHODS,
  TASKS_EXTENSION,
  TASKS_REQUIRED_DATA,
  type TaskMethod,
  type TaskStatus,
  TERMINAL_TASK_STATUSES,
} from './tasks.js';
export {
  type AudioContent,
  type BlobResourceContents,
  type CallToolResult,
  type ClientCapabilities,
  type ContentBlock,
  type CreateMessageRequest,
  type CreateMessageResult,
  type ElicitFormRequest,
  type ElicitResult,
  type ElicitUrlRequest,
  type EmbeddedResource,
  type GetPromptResult,
  type ImageContent,
  type Implementation,
  type InputRequest,
  type InputRequests,
  type InputRequiredResult,
  type InputResponse,
  type InputResponses,
  type JsonObject,
  type JsonRpcError,
  type JsonRpcErrorResponse,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type JsonRpcResultResponse,
  type JsonValue,
  type ListRootsRequest,
  type ListRootsResult,
  MRTR_METHODS,
  type MrtrMethod,
  type PromptArgument,
  type PromptDefinition,
  type PromptMessage,
  type ReadResourceResult,
  type RequestId,
  type ResourceContents,
  type ResourceDefinition,
  type ResourceLink,
  type ResourceTemplateDefinition,
  type Result,
  type ResultType,
  type ServerCapabilities,
  type TextContent,
  type TextResourceContents,
  type ToolAnnotations,
  type ToolDefinition,
} from './wire.js';
export {
  argumentAt,
  type HeaderBinding,
  isHeaderToken,
  paramHeaderMatches,
  paramHeaderName,
  paramHeaders,
  paramHeaderText,
  parseHeaderInteger,
  planToolHeaders,
  type ToolHeaderPlan,
  X_MCP_HEADER,
} from './x-mcp-header.js';
