// How a connection tells a 2026-07-28 server from a 2025 one before and while it speaks to it: the era a forced
// `protocol` starts in, and how to read an answer (basic/versioning.mdx "Backward Compatibility").
import {
  InvalidOptionError,
  isJsonObject,
  isLegacyVersion,
  LEGACY_PROTOCOL_VERSIONS,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '../protocol/index.js';
import { LEGACY_HINT_STATUSES } from './legacy.js';
import type { ClientTransport } from './transport.js';

/**
 * The era before the first request: a forced version's (checked), else modern for a transport that cannot carry a
 * 2025 session, else unknown (the first request probes).
 */
export function startingEra(
  forced: string | undefined,
  transport: ClientTransport,
): { era: 'unknown' | 'modern' | 'legacy'; version?: string } {
  if (forced === undefined) return { era: transport.legacy ? 'unknown' : 'modern' };
  if (isLegacyVersion(forced)) {
    if (!transport.legacy)
      throw new InvalidOptionError(`this transport cannot carry the legacy protocol ${forced}`);
    return { era: 'legacy', version: forced };
  }
  if (SUPPORTED_PROTOCOL_VERSIONS.includes(forced)) return { era: 'modern', version: forced };
  throw new InvalidOptionError(
    `protocol ${JSON.stringify(forced)} is not one this client speaks (${[...SUPPORTED_PROTOCOL_VERSIONS, ...LEGACY_PROTOCOL_VERSIONS].join(', ')})`,
  );
}

/** A 4xx that, without a modern error in the body, means a 2025 server. */
export const isLegacyStatus = (status: number | undefined): boolean => LEGACY_HINT_STATUSES.has(status ?? 0);

/** The versions an UnsupportedProtocolVersion error offers (`data.supported`). */
export function offeredVersions(data: unknown): unknown[] {
  return isJsonObject(data) && Array.isArray(data.supported) ? data.supported : [];
}

/** A DiscoverResult, or at least a 2026-07-28 result: legacy servers never send `resultType`. */
export function isDiscoverResult(result: unknown): boolean {
  return isJsonObject(result) && (Array.isArray(result.supportedVersions) || result.resultType !== undefined);
}
