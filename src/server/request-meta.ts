// Per-request `_meta` (basic/index.mdx): protocol version and client capabilities are required on every request.
import {
  type ClientCapabilities,
  ErrorCode,
  type Implementation,
  isJsonObject,
  type JsonObject,
  McpError,
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_LOG_LEVEL,
  META_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '../protocol/index.js';
import { LOG_LEVELS, type LogLevel } from './context.js';

export interface RequestMeta {
  protocolVersion: string;
  clientCapabilities: ClientCapabilities;
  clientInfo: Implementation | undefined;
  progressToken: string | number | undefined;
  logLevel: LogLevel | undefined;
}

/** Read and check `_meta`; throws McpError -32602 (missing/malformed) or -32022 (unsupported version). */
export function readRequestMeta(params: JsonObject | undefined): RequestMeta {
  const meta = params?._meta;
  if (!isJsonObject(meta)) throw new McpError(ErrorCode.InvalidParams, 'Invalid params: _meta is required');
  const version = meta[META_PROTOCOL_VERSION];
  if (typeof version !== 'string') {
    throw new McpError(
      ErrorCode.InvalidParams,
      `Invalid params: _meta["${META_PROTOCOL_VERSION}"] is required`,
    );
  }
  const caps = meta[META_CLIENT_CAPABILITIES];
  if (!isJsonObject(caps)) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `Invalid params: _meta["${META_CLIENT_CAPABILITIES}"] is required`,
    );
  }
  if (!SUPPORTED_PROTOCOL_VERSIONS.includes(version)) throw unsupportedVersion(version);
  const info = meta[META_CLIENT_INFO];
  const token = meta.progressToken;
  const level = meta[META_LOG_LEVEL];
  return {
    logLevel: LOG_LEVELS.includes(level as LogLevel) ? (level as LogLevel) : undefined,
    protocolVersion: version,
    clientCapabilities: caps as ClientCapabilities,
    clientInfo: isJsonObject(info) ? (info as Implementation) : undefined,
    progressToken: typeof token === 'string' || typeof token === 'number' ? token : undefined,
  };
}

/** The longest client-supplied version string echoed back; longer ones are cut (it is shown to a person). */
const MAX_SHOWN_VERSION = 64;
const shownVersion = (v: string): string =>
  v.length <= MAX_SHOWN_VERSION ? v : `${v.slice(0, MAX_SHOWN_VERSION)}…`;

export function unsupportedVersion(requested: string): McpError {
  return new McpError(ErrorCode.UnsupportedProtocolVersion, 'Unsupported protocol version', {
    supported: [...SUPPORTED_PROTOCOL_VERSIONS],
    requested: shownVersion(requested),
  });
}

/**
 * The answer to a legacy `initialize` handshake (2025-11-25 and earlier). A modern-only server SHOULD name the
 * versions it speaks in any error to `initialize` (versioning.mdx: a legacy client has no fall-forward, and this
 * message may be all its user sees). The code is the one the request earns anyway: -32601 for the removed method
 * (404 over HTTP, which the conformance suite checks), or over HTTP the header error (-32020, 400) that a legacy
 * client's handshake, sent without the modern headers, meets first — `cause` carries that error.
 */
export function legacyInitializeError(params: JsonObject | undefined, cause?: McpError): McpError {
  const requested =
    typeof params?.protocolVersion === 'string' ? shownVersion(params.protocolVersion) : 'unknown';
  const supported = SUPPORTED_PROTOCOL_VERSIONS.join(', ');
  const first = cause ? cause.message : 'Method not found: initialize';
  return new McpError(
    cause ? cause.code : ErrorCode.MethodNotFound,
    `${first}. This server speaks only MCP ${supported}, which has no initialize handshake (the client asked ` +
      `for ${requested}; send _meta with every request instead)`,
    { supported: [...SUPPORTED_PROTOCOL_VERSIONS], requested },
  );
}
