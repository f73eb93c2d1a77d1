// What of a 2025 client's capabilities the bridge keeps and passes on as MRTR client capabilities (how MRTR's
// questions are spelled for a client of an older revision is protocol/legacy-requests.ts).
import {
  type ClientCapabilities,
  isJsonObject,
  type JsonObject,
  knowsElicitationModes,
} from '../../protocol/index.js';

const copyObject = (value: unknown, keys: readonly string[]): JsonObject | undefined => {
  if (!isJsonObject(value)) return undefined;
  const out: JsonObject = {};
  for (const k of keys) if (isJsonObject(value[k])) out[k] = {};
  return out;
};

/**
 * The input capabilities a handshake declares (elicitation, sampling, roots), nothing else: they are what the
 * round pipeline checks questions against, and they ride in the session id, so they stay small.
 */
export function keptCapabilities(declared: unknown, version: string): ClientCapabilities {
  const caps: ClientCapabilities = {};
  if (!isJsonObject(declared)) return caps;
  // Before 2025-11-25, `elicitation: {}` was all there was: form mode.
  const elicitation = copyObject(declared.elicitation, knowsElicitationModes(version) ? ['form', 'url'] : []);
  if (elicitation) caps.elicitation = elicitation;
  const sampling = copyObject(declared.sampling, ['context', 'tools']);
  if (sampling) caps.sampling = sampling;
  if (isJsonObject(declared.roots)) {
    caps.roots = declared.roots.listChanged === true ? { listChanged: true } : {};
  }
  return caps;
}
