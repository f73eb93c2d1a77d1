// The key an upstream may use to run a call's effect once. A round taken over after its gateway instance died sends
// the upstream the same request again; only the upstream can tell that it already ran it, and this key lets it.
// The same flow and the same upstream round give the same key on every instance; anything else gives another.
import { createHash } from 'node:crypto';

/** The `_meta` key the gateway sends on every upstream `tools/call`. */
export const IDEMPOTENCY_META_KEY = 'dev.mrtr/idempotencyKey';

export function idempotencyMeta(flowId: string, upstreamRound: number): Record<string, string> {
  const key = createHash('sha256').update(`${flowId}\n${upstreamRound}`).digest('base64url');
  return { [IDEMPOTENCY_META_KEY]: key };
}
