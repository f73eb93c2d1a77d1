// What a pin binds: the parts of a tool's definition that the model reads or that say what a call does. A server
// that changes any of them after people approved the tool ("rug pull") changes the digest, and the tool is withheld
// until an admin accepts the change.
import { createHash } from 'node:crypto';
import type { JsonObject } from '../../protocol/index.js';
import { canonicalJson } from '../../state/index.js';

/**
 * The fields a pin binds, every field of the 2026-07-28 Tool except two:
 * - `_meta` is the protocol's out-of-band channel: servers put tracing ids, timestamps and client hints there that
 *   may differ on every listing, and neither the model nor the call's meaning depends on it. Binding it would turn
 *   every harmless listing into "drift" and train admins to accept blindly.
 * - `icons` are presentation only (often signed or rotated CDN URLs); no model reads them.
 * Fields a future revision adds are not bound either until they are listed here, on purpose: a pin must not change
 * meaning under an unchanged lock file.
 */
export const PINNED_FIELDS = Object.freeze([
  'name',
  'title',
  'description',
  'inputSchema',
  'outputSchema',
  'annotations',
] as const);

/**
 * The fields a prompt's, resource's or template's pin binds: what the model reads, the arguments a prompt takes,
 * and what a URI is said to hold. A list of its own, so a tool's digest never changes because of them.
 */
export const SURFACE_PINNED_FIELDS = Object.freeze([
  'name',
  'title',
  'description',
  'arguments',
  'uri',
  'uriTemplate',
  'mimeType',
  'annotations',
] as const);

/** What is pinned: a tool, or a prompt, resource or template (the surface). */
export type PinnedKind = 'tool' | 'surface';

/**
 * A prompt's, resource's or template's pins are kept under `<upstream>#<kind>`: upstream names hold no `#`, so they
 * never meet a tool's pin, whatever the tool is called.
 */
export function surfacePinUpstream(upstream: string, kind: 'prompt' | 'resource' | 'template'): string {
  return `${upstream}#${kind}`;
}

/** Which fields a pin kept under `upstream` (a key's first part) binds. */
export const pinnedKindOf = (upstream: string): PinnedKind => (upstream.includes('#') ? 'surface' : 'tool');

/** The definition as pinned: only the bound fields, absent ones left out (not written as null). */
export function pinnedDefinition(tool: JsonObject, kind: PinnedKind = 'tool'): JsonObject {
  const kept: JsonObject = {};
  for (const field of kind === 'tool' ? PINNED_FIELDS : SURFACE_PINNED_FIELDS) {
    if (Object.hasOwn(tool, field) && tool[field] !== undefined) kept[field] = tool[field];
  }
  return kept;
}

/**
 * SHA-256, base64url, of the canonical JSON (sorted keys) of the definition's bound fields: the same for any key
 * order and any `_meta` or `icons`. Consents and approvals bind it too, so an accepted change re-asks.
 * @throws NotJsonError when the definition holds something JSON cannot carry (it came from JSON, so only a bug).
 */
export function definitionDigest(tool: JsonObject, kind: PinnedKind = 'tool'): string {
  return createHash('sha256')
    .update(canonicalJson(pinnedDefinition(tool, kind)))
    .digest('base64url');
}
