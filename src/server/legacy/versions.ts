// The 2025 revisions the bridge speaks to clients that open with `initialize` (basic/lifecycle.mdx "Version
// Negotiation": the server answers with the version asked for when it speaks it, else the latest it speaks).
export const LEGACY_VERSIONS: readonly string[] = Object.freeze(['2025-11-25', '2025-06-18', '2025-03-26']);

export const LATEST_LEGACY_VERSION = '2025-11-25';

export function isLegacyVersion(version: unknown): version is string {
  return typeof version === 'string' && LEGACY_VERSIONS.includes(version);
}

export function negotiateLegacyVersion(requested: unknown): string {
  return isLegacyVersion(requested) ? requested : LATEST_LEGACY_VERSION;
}

/** SSE priming events (an id with empty data, and `retry`) arrived in 2025-11-25; older clients may choke on them. */
export function primesStreams(version: string): boolean {
  return version >= '2025-11-25';
}
