// The webhook receiver of docs/human-controls.md: it checks each signed delivery with verifyWebhook before it trusts
// anything, and remembers the deliveries it accepted in a shared store, so the same delivery sent again is refused.
// test/notify/webhook-replay.test.ts sends it a real delivery, then the same one again.
// #region receiver

import { createServer, type IncomingMessage, type Server } from 'node:http';
import { type ApprovalRequested, verifyWebhook, WebhookVerifyError } from 'mrtr/notify';
import type { SharedStore } from 'mrtr/stores';

export interface ReceiverOptions {
  /** The webhook's secret (the `secretEnv` of the notifications file). */
  secret: string;
  /** Shared by every instance of the receiver: `new SqliteStore(path)` on one machine, `RedisStore` for several. */
  seen: SharedStore;
  onRequest: (approval: ApprovalRequested) => void;
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > 1024 * 1024) throw new RangeError('body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function webhookReceiver(options: ReceiverOptions): Server {
  return createServer(async (req, res) => {
    try {
      const body = await bodyOf(req);
      await verifyWebhook({ secret: options.secret, headers: req.headers, body, seen: options.seen });
      options.onRequest((JSON.parse(body) as { approval: ApprovalRequested }).approval);
      res.writeHead(204).end();
    } catch (error) {
      // 4xx: a delivery that is forged, changed, stale or replayed will not be tried again.
      if (error instanceof WebhookVerifyError) res.writeHead(error.reason === 'replayed' ? 409 : 401).end();
      // Anything else (the store cannot be reached, say): 503, and mrtr tries the delivery again later.
      else res.writeHead(503).end();
    }
  });
}
// #endregion
