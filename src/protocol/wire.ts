// Wire types for MCP revision 2026-07-28, written from ../../schema/2026-07-28.json.
// Only what mrtr reads or writes is typed precisely; everything else stays open (`[key: string]: unknown`).

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: unknown };

export type RequestId = string | number;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: RequestId;
  method: string;
  params?: JsonObject;
}

export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: JsonObject;
}

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcErrorResponse {
  jsonrpc: '2.0';
  id?: RequestId;
  error: JsonRpcError;
}

export interface JsonRpcResultResponse {
  jsonrpc: '2.0';
  id: RequestId;
  result: Result;
}

export type JsonRpcResponse = JsonRpcResultResponse | JsonRpcErrorResponse;

export interface Implementation {
  name: string;
  version: string;
  title?: string;
  [key: string]: unknown;
}

export interface ClientCapabilities {
  elicitation?: { form?: JsonObject; url?: JsonObject };
  sampling?: { context?: JsonObject; tools?: JsonObject };
  roots?: JsonObject;
  experimental?: Record<string, JsonObject>;
  extensions?: Record<string, JsonObject>;
  [key: string]: unknown;
}

export interface ServerCapabilities {
  tools?: { listChanged?: boolean };
  prompts?: { listChanged?: boolean };
  resources?: { subscribe?: boolean; listChanged?: boolean };
  completions?: JsonObject;
  logging?: JsonObject;
  extensions?: Record<string, JsonObject>;
  experimental?: Record<string, JsonObject>;
}

export type ResultType = 'complete' | 'input_required';

export interface Result {
  resultType: ResultType | (string & {});
  _meta?: JsonObject;
  [key: string]: unknown;
}

// --- content -------------------------------------------------------------------------------------------------

export interface TextContent {
  type: 'text';
  text: string;
  annotations?: JsonObject;
  _meta?: JsonObject;
}
export interface ImageContent {
  type: 'image';
  data: string;
  mimeType: string;
  annotations?: JsonObject;
  _meta?: JsonObject;
}
export interface AudioContent {
  type: 'audio';
  data: string;
  mimeType: string;
  annotations?: JsonObject;
  _meta?: JsonObject;
}
export interface TextResourceContents {
  uri: string;
  mimeType?: string;
  text: string;
  _meta?: JsonObject;
}
export interface BlobResourceContents {
  uri: string;
  mimeType?: string;
  blob: string;
  _meta?: JsonObject;
}
export type ResourceContents = TextResourceContents | BlobResourceContents;
export interface EmbeddedResource {
  type: 'resource';
  resource: ResourceContents;
  annotations?: JsonObject;
  _meta?: JsonObject;
}
export interface ResourceLink {
  type: 'resource_link';
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  _meta?: JsonObject;
}
export type ContentBlock = TextContent | ImageContent | AudioContent | EmbeddedResource | ResourceLink;

// --- MRTR ----------------------------------------------------------------------------------------------------

export interface ElicitFormRequest {
  method: 'elicitation/create';
  params: {
    mode?: 'form';
    message: string;
    requestedSchema: {
      type: 'object';
      properties: Record<string, JsonObject>;
      required?: string[];
      $schema?: string;
    };
    _meta?: JsonObject;
  };
}
export interface ElicitUrlRequest {
  method: 'elicitation/create';
  params: { mode: 'url'; message: string; url: string; _meta?: JsonObject };
}
export interface CreateMessageRequest {
  method: 'sampling/createMessage';
  params: {
    messages: Array<{ role: 'user' | 'assistant'; content: unknown }>;
    maxTokens: number;
    systemPrompt?: string;
    [key: string]: unknown;
  };
}
export interface ListRootsRequest {
  method: 'roots/list';
  params?: JsonObject;
}
export type InputRequest = ElicitFormRequest | ElicitUrlRequest | CreateMessageRequest | ListRootsRequest;
export type InputRequests = Record<string, InputRequest>;

export interface ElicitResult {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, string | number | boolean | string[]>;
  _meta?: JsonObject;
}
export interface CreateMessageResult {
  role: 'user' | 'assistant';
  content: unknown;
  model: string;
  stopReason?: string;
  _meta?: JsonObject;
}
export interface ListRootsResult {
  roots: Array<{ uri: string; name?: string; _meta?: JsonObject }>;
  _meta?: JsonObject;
}
export type InputResponse = ElicitResult | CreateMessageResult | ListRootsResult;
export type InputResponses = Record<string, InputResponse>;

export interface InputRequiredResult extends Result {
  resultType: 'input_required';
  inputRequests?: InputRequests;
  requestState?: string;
}

/** The three methods on which a server may answer `input_required` (MRTR "Supported Requests"). */
export const MRTR_METHODS = ['tools/call', 'prompts/get', 'resources/read'] as const;
export type MrtrMethod = (typeof MRTR_METHODS)[number];

// --- definitions -------------------------------------------------------------------------------------------

export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface ToolDefinition {
  name: string;
  title?: string;
  description?: string;
  inputSchema: JsonObject;
  outputSchema?: JsonObject;
  annotations?: ToolAnnotations;
  _meta?: JsonObject;
}

export interface CallToolResult extends Result {
  content: ContentBlock[];
  structuredContent?: JsonObject;
  isError?: boolean;
}

export interface PromptArgument {
  name: string;
  title?: string;
  description?: string;
  required?: boolean;
}
export interface PromptDefinition {
  name: string;
  title?: string;
  description?: string;
  arguments?: PromptArgument[];
  _meta?: JsonObject;
}
export interface PromptMessage {
  role: 'user' | 'assistant';
  content: ContentBlock;
}
export interface GetPromptResult extends Result {
  description?: string;
  messages: PromptMessage[];
}

export interface ResourceDefinition {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
  _meta?: JsonObject;
}
export interface ResourceTemplateDefinition {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  _meta?: JsonObject;
}
export interface ReadResourceResult extends Result {
  contents: ResourceContents[];
}
