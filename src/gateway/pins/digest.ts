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

/** The definition as pinned: only the bound fields, absent ones left out (not written as null). */
export function pinnedDefinition(tool: JsonObject): JsonObject {
  const kept: JsonObject = {};
  for (const field of PINNED_FIELDS) {
    if (Object.hasOwn(tool, field) && tool[field] !== undefined) kept[field] = tool[field];
  }
  return kept;
}

/**
 * SHA-256, base64url, of the canonical JSON (sorted keys) of the definition's bound fields: the same for any key
 * order and any `_meta` or `icons`. Consents and approvals bind it too, so an accepted change re-asks.
 * @throws NotJsonError when the definition holds something JSON cannot carry (it came from JSON, so only a bug).
 */
export function definitionDigest(tool: JsonObject): string {
  return createHash('sha256')
    .update(canonicalJson(pinnedDefinition(tool)))
    .digest('base64url');
}
