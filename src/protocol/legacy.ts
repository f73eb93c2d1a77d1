// The 2025 revisions both sides still speak with a peer that opens with `initialize` (basic/lifecycle.mdx "Version
// Negotiation": the server answers with the version asked for when it speaks it, else the latest it speaks), what
// changed between them, and a response in their shape. Server (the 2025 bridge) and client (the legacy fallback)
// read them here, once.
import type { JsonObject, JsonRpcResponse, RequestId } from './wire.js';

/** The 2025 revisions spoken, newest first (the one a client asks for first). */
export const LEGACY_PROTOCOL_VERSIONS: readonly string[] = Object.freeze([
  '2025-11-25',
  '2025-06-18',
  '2025-03-26',
]);

export const LATEST_LEGACY_PROTOCOL_VERSION = '2025-11-25';

export function isLegacyVersion(version: unknown): version is string {
  return typeof version === 'string' && LEGACY_PROTOCOL_VERSIONS.includes(version);
}

export function negotiateLegacyVersion(requested: unknown): string {
  return isLegacyVersion(requested) ? requested : LATEST_LEGACY_PROTOCOL_VERSION;
}

/** SSE priming events (an id with empty data, and `retry`) arrived in 2025-11-25; older clients may choke on them. */
export function primesStreams(version: string): boolean {
  return version >= '2025-11-25';
}

/** Elicitation modes (`mode: "form" | "url"`) arrived in 2025-11-25; older revisions know only the form. */
export function knowsElicitationModes(version: string): boolean {
  return version >= '2025-11-25';
}

/** A result response in a 2025 revision's shape: its result carries no `resultType`. */
export const legacyResponse = (id: RequestId, result: JsonObject): JsonRpcResponse =>
  ({ jsonrpc: '2.0', id, result }) as unknown as JsonRpcResponse;
