// JSON-RPC and MCP error codes (basic/index.mdx "Error Codes") and the error type handlers throw.

export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  HeaderMismatch: -32020,
  MissingRequiredClientCapability: -32021,
  UnsupportedProtocolVersion: -32022,
} as const;
export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];

/**
 * An error that becomes a JSON-RPC error response with this exact code, message and data. Not an MrtrError: its
 * numeric `code` is the protocol's JSON-RPC code, the one that goes on the wire (RoundRefused and the server's
 * HookTimeoutError are McpErrors for that reason).
 */
export class McpError extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = 'McpError';
    this.code = code;
    this.data = data;
  }
}

export const invalidParams = (message: string, data?: unknown): McpError =>
  new McpError(ErrorCode.InvalidParams, message, data);

/** HTTP status for an error response (streamable-http.mdx and basic/index.mdx give these). */
export function httpStatusForError(code: number): number {
  switch (code) {
    case ErrorCode.ParseError:
    case ErrorCode.InvalidRequest:
    case ErrorCode.InvalidParams:
    case ErrorCode.HeaderMismatch:
    case ErrorCode.MissingRequiredClientCapability:
    case ErrorCode.UnsupportedProtocolVersion:
      return 400;
    case ErrorCode.MethodNotFound:
      return 404;
    case ErrorCode.InternalError:
      return 500;
    default:
      return 200;
  }
}
