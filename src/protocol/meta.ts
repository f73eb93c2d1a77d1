// Names fixed by the 2026-07-28 revision: versions, reserved `_meta` keys and HTTP header names.

export const LATEST_PROTOCOL_VERSION = '2026-07-28';
/** Versions this implementation speaks. Only the stateless (modern) era is implemented. */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = [LATEST_PROTOCOL_VERSION];

export const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
export const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
export const META_LOG_LEVEL = 'io.modelcontextprotocol/logLevel';
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
/** On every message of a subscriptions/listen stream: the id of the request that opened it. */
export const META_SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

export const HEADER_PROTOCOL_VERSION = 'mcp-protocol-version';
export const HEADER_METHOD = 'mcp-method';
export const HEADER_NAME = 'mcp-name';
export const HEADER_PARAM_PREFIX = 'mcp-param-';

/**
 * mrtr's own `_meta` hint on an input request's params: the question must be answered by a person, never by an
 * agent's policy. Value: why — 'consent', 'second_factor' or 'approval'. Clients without a human resolver end the
 * call with a "needs a person" outcome instead of answering.
 */
export const META_HUMAN_REQUIRED = 'dev.mrtr/humanRequired';
export type HumanRequiredReason = 'consent' | 'second_factor' | 'approval';

/**
 * mrtr's own `_meta` hint on an InputRequiredResult: how long (ms) the client should wait before retrying a
 * state-only round (one with no inputRequests), e.g. while an approval is pending elsewhere.
 */
export const META_RETRY_AFTER_MS = 'dev.mrtr/retryAfterMs';

/**
 * mrtr's own `_meta` hint on a question that waits for a person elsewhere (an approval, a second factor): one short
 * line on what it waits for ("waiting for approval, 0 of 1"), which a task shows as its statusMessage.
 */
export const META_PROGRESS = 'dev.mrtr/progress';

/** The prefix of every `_meta` key mrtr defines: hints that only mrtr's own code sets. */
export const MRTR_META_PREFIX = 'dev.mrtr/';

/** `_meta` keys the spec reserves without a prefix: progress and OpenTelemetry trace context. */
const RESERVED_UNPREFIXED_META_KEYS = new Set(['progressToken', 'traceparent', 'tracestate', 'baggage']);

/**
 * Whether the spec reserves a `_meta` key for MCP (basic/index.mdx "_meta"): a prefix whose second label is
 * `modelcontextprotocol` or `mcp` (`io.modelcontextprotocol/`, `dev.mcp/`), or an unprefixed reserved key.
 */
export function isMcpReservedMetaKey(key: string): boolean {
  const slash = key.indexOf('/');
  if (slash < 0) return RESERVED_UNPREFIXED_META_KEYS.has(key);
  // Labels are DNS-like, so compared without case: `IO.MCP/` is as reserved as `io.mcp/`.
  const second = key.slice(0, slash).split('.')[1]?.toLowerCase();
  return second === 'modelcontextprotocol' || second === 'mcp';
}
