// Signed webhook deliveries, the way Stripe and Standard Webhooks sign theirs: an HMAC-SHA256 over the timestamp and
// the exact body, so a receiver can tell a delivery of ours from a forged one, and an old one replayed from a new one.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { MrtrError } from '../protocol/index.js';

export const SIGNATURE_HEADER = 'mrtr-webhook-signature';
export const TIMESTAMP_HEADER = 'mrtr-webhook-timestamp';
export const ID_HEADER = 'mrtr-webhook-id';

/** `v1=<hex>`: HMAC-SHA256 with `secret` over `<timestamp>.<body>`. */
export function signatureOf(secret: string, timestamp: number, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

export type WebhookRefusal = 'missing_header' | 'stale' | 'bad_signature';

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
  /** How far the timestamp may be from now (default 300 s): an old delivery replayed is refused. */
  toleranceSeconds?: number;
  now?: () => number;
}

const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/** For receivers: throws WebhookVerifyError unless the delivery is ours, unchanged and recent. */
export function verifyWebhook(input: VerifyWebhookInput): void {
  const signature = one(input.headers[SIGNATURE_HEADER]);
  const stamp = one(input.headers[TIMESTAMP_HEADER]);
  if (!signature || !stamp || !/^\d{1,12}$/.test(stamp))
    throw new WebhookVerifyError(
      'missing_header',
      `a delivery carries ${SIGNATURE_HEADER} and ${TIMESTAMP_HEADER}`,
    );
  const now = Math.floor((input.now ?? Date.now)() / 1000);
  const tolerance = input.toleranceSeconds ?? 300;
  if (Math.abs(now - Number(stamp)) > tolerance)
    throw new WebhookVerifyError('stale', `the delivery's timestamp is more than ${tolerance} s from now`);
  const expected = Buffer.from(signatureOf(input.secret, Number(stamp), input.body));
  // Several signatures may be sent while a secret is rotated: any one that matches will do.
  const matches = signature.split(/\s*,\s*/).some((s) => {
    const given = Buffer.from(s);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new WebhookVerifyError('bad_signature', 'the signature does not match the body');
}
