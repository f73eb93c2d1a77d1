// The 2025 revisions and their rules (src/protocol/legacy.ts), read by the server's 2025 bridge and the client's
// legacy fallback alike: both sides speak the same versions and spell a 2025 response the same way.
import { describe, expect, it } from 'vitest';
import { LEGACY_PROTOCOL_VERSIONS as clientVersions } from '../../src/client/index.js';
import {
  isLegacyVersion,
  knowsElicitationModes,
  LATEST_LEGACY_PROTOCOL_VERSION,
  LEGACY_PROTOCOL_VERSIONS,
  legacyResponse,
  negotiateLegacyVersion,
  primesStreams,
} from '../../src/protocol/index.js';
import { LEGACY_VERSIONS as serverVersions } from '../../src/server/index.js';

describe('the 2025 revisions', () => {
  it('are one frozen list, newest first, that the server and the client entry points both name', () => {
    expect(LEGACY_PROTOCOL_VERSIONS).toEqual(['2025-11-25', '2025-06-18', '2025-03-26']);
    expect(Object.isFrozen(LEGACY_PROTOCOL_VERSIONS)).toBe(true);
    expect(LATEST_LEGACY_PROTOCOL_VERSION).toBe(LEGACY_PROTOCOL_VERSIONS[0]);
    expect(serverVersions).toBe(LEGACY_PROTOCOL_VERSIONS);
    expect(clientVersions).toBe(LEGACY_PROTOCOL_VERSIONS);
  });

  it('a version is legacy only when it is one of them (2026-07-28, other strings and non-strings are not)', () => {
    for (const v of LEGACY_PROTOCOL_VERSIONS) expect(isLegacyVersion(v)).toBe(true);
    for (const v of ['2026-07-28', '2024-11-05', '', 20251125, undefined])
      expect(isLegacyVersion(v)).toBe(false);
  });

  it('negotiation answers with the version asked for when it is spoken, else the latest', () => {
    expect(negotiateLegacyVersion('2025-03-26')).toBe('2025-03-26');
    expect(negotiateLegacyVersion('2024-11-05')).toBe('2025-11-25');
    expect(negotiateLegacyVersion(undefined)).toBe('2025-11-25');
  });

  it('elicitation modes and SSE priming arrived in 2025-11-25', () => {
    expect(LEGACY_PROTOCOL_VERSIONS.map(knowsElicitationModes)).toEqual([true, false, false]);
    expect(LEGACY_PROTOCOL_VERSIONS.map(primesStreams)).toEqual([true, false, false]);
  });

  it('a 2025 response is the result as given, with no resultType added', () => {
    expect(legacyResponse(4, { action: 'cancel' })).toEqual({
      jsonrpc: '2.0',
      id: 4,
      result: { action: 'cancel' },
    });
  });
});
