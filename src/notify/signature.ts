// Signed webhook deliveries, the way Stripe and Standard Webhooks sign theirs: an HMAC-SHA256 over the timestamp and
// the exact body, so a receiver can tell a delivery of ours from a forged one, and an old one replayed from a new one.
// A delivery replayed inside the time window is caught by the store the receiver passes: each accepted one is
// remembered there until its window closes.
import { createHash } from 'node:crypto';
import { InvalidArgumentError, MrtrError } from '../protocol/index.js';
import { hmacSha256, macMatches } from '../state/internal.js';
import type { SharedStore } from '../stores/index.js';

export const SIGNATURE_HEADER = 'mrtr-webhook-signature';
export const TIMESTAMP_HEADER = 'mrtr-webhook-timestamp';
export const ID_HEADER = 'mrtr-webhook-id';

/** `v1=<hex>`: HMAC-SHA256 with `secret` (its UTF-8 bytes) over `<timestamp>.<body>`, by state's one signer. */
export function signatureOf(secret: string, timestamp: number, body: string): string {
  return `v1=${hmacSha256(Buffer.from(secret, 'utf8'), `${timestamp}.${body}`).toString('hex')}`;
}

export type WebhookRefusal = 'missing_header' | 'stale' | 'bad_signature' | 'replayed';

/** Why a delivery was not accepted: `code` says which check refused it. */
export class WebhookVerifyError extends MrtrError {
  override readonly name = 'WebhookVerifyError';
  declare readonly code: 'ERR_WEBHOOK_REFUSED';
  constructor(
    readonly reason: WebhookRefusal,
    message: string,
  ) {
    super('ERR_WEBHOOK_REFUSED', message);
  }
}

export interface VerifyWebhookInput {
  secret: string;
  /** The request's headers (names in lower case, as node:http gives them). */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The body exactly as received: parse it only after it verified. */
  body: string;
  /**
   * Where accepted deliveries are remembered until their time window closes, so the same delivery sent again is
   * refused. Every instance of a receiver must share it (SQLite on one machine, Redis for several).
   */
  seen: SharedStore;
  /** How far the timestamp may be from now (default 300 s): an old delivery replayed is refused. */
  toleranceSeconds?: number;
  now?: () => number;
}

const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/**
 * For receivers: resolves when the delivery is ours, unchanged, recent and not seen before; otherwise rejects with
 * WebhookVerifyError naming the check that refused it. A store that cannot be reached rejects with
 * StoreUnavailableError: answer 5xx, and the delivery is tried again.
 */
export async function verifyWebhook(input: VerifyWebhookInput): Promise<void> {
  if (input.seen === undefined || typeof input.seen?.create !== 'function')
    throw new InvalidArgumentError(
      'verifyWebhook needs `seen`, a shared store (mrtr/stores) that remembers the deliveries it accepted',
    );
  const signature = one(input.headers[SIGNATURE_HEADER]);
  const stamp = one(input.headers[TIMESTAMP_HEADER]);
  if (!signature || !stamp || !/^\d{1,12}$/.test(stamp))
    throw new WebhookVerifyError(
      'missing_header',
      `a delivery carries ${SIGNATURE_HEADER} and ${TIMESTAMP_HEADER}`,
    );
  const nowMs = (input.now ?? Date.now)();
  const now = Math.floor(nowMs / 1000);
  const tolerance = input.toleranceSeconds ?? 300;
  if (Math.abs(now - Number(stamp)) > tolerance)
    throw new WebhookVerifyError('stale', `the delivery's timestamp is more than ${tolerance} s from now`);
  const expected = Buffer.from(signatureOf(input.secret, Number(stamp), input.body));
  // Several signatures may be sent while a secret is rotated: any one that matches will do.
  const matches = signature.split(/\s*,\s*/).some((s) => macMatches(Buffer.from(s), expected));
  if (!matches) throw new WebhookVerifyError('bad_signature', 'the signature does not match the body');
  // Only a verified delivery is remembered, so no forger can spend a real one's place. The key is what was signed
  // (the body names the delivery's id): the id header alone is not signed, and a retry of ours is signed anew. The
  // timestamp as signed (a number), not as spelt: `01800000000` is the same delivery as `1800000000`.
  const signed = `${Number(stamp)}.${input.body}`;
  const key = `mrtr/webhook-seen/${createHash('sha256').update(signed).digest('base64url')}`;
  // Kept until the last second the timestamp rule would still accept it; after that, "stale" refuses it.
  const ttlMs = (Number(stamp) + tolerance + 1) * 1000 - nowMs;
  if (!(await input.seen.create(key, '1', Math.max(1, Math.ceil(ttlMs)))))
    throw new WebhookVerifyError(
      'replayed',
      `this delivery (${one(input.headers[ID_HEADER]) ?? 'no id'}) was accepted before: a replay`,
    );
}
