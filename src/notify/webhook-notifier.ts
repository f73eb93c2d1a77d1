// Delivering approval requests to webhooks without ever holding up a round: `notify` only queues. Each delivery is
// retried with back-off (honouring Retry-After) a few times, never follows a redirect, and gives up with a warning.
import type { ControlEvent } from '../controls/index.js';
import { type ApprovalRequested, requestedOf, signedJsonBody, slackBody } from './bodies.js';
import type { WebhookTarget } from './config.js';
import { ID_HEADER, SIGNATURE_HEADER, signatureOf, TIMESTAMP_HEADER } from './signature.js';

export const NOTIFY_DEFAULTS = Object.freeze({
  /** Tries per delivery: a receiver down for a minute still hears of the request. */
  attempts: 5,
  /** The first back-off; each next one doubles, with up to half again of jitter. */
  backoffMs: 1_000,
  /** No wait is longer than this, whatever Retry-After asks. */
  maxBackoffMs: 5 * 60_000,
  /** One try's time limit. */
  timeoutMs: 10_000,
  /** Deliveries waiting in memory at most; the oldest is dropped (and counted) past it. */
  maxQueued: 1_000,
});

export interface WebhookNotifierOptions {
  targets: readonly WebhookTarget[];
  log?: (line: string) => void;
  /** Waits between tries (tests give one that returns at once and records the delay). */
  wait?: (ms: number) => Promise<void>;
  now?: () => number;
  random?: () => number;
  attempts?: number;
  timeoutMs?: number;
}

interface Delivery {
  target: WebhookTarget;
  request: ApprovalRequested;
}

export class WebhookNotifier {
  private readonly queue: Delivery[] = [];
  private running = 0;
  private idle: Array<() => void> = [];
  private readonly wait: (ms: number) => Promise<void>;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly log: (line: string) => void;
  /** What happened to deliveries, for the operator and the tests. */
  readonly stats = { delivered: 0, failed: 0, dropped: 0 };

  constructor(private readonly options: WebhookNotifierOptions) {
    this.log = options.log ?? (() => {});
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.wait = options.wait ?? ((ms) => new Promise((done) => setTimeout(done, ms).unref()));
  }

  /** Queue the deliveries an event calls for (only new approval requests); returns at once, never throws. */
  notify(event: ControlEvent): void {
    const request = requestedOf(event);
    if (!request) return;
    for (const target of this.options.targets) {
      if (!target.roles.includes('*') && !target.roles.includes(request.role)) continue;
      if (this.queue.length >= NOTIFY_DEFAULTS.maxQueued) {
        this.queue.shift();
        this.stats.dropped++;
        this.log(`webhook queue full (${NOTIFY_DEFAULTS.maxQueued}): the oldest delivery was dropped`);
      }
      this.queue.push({ target, request });
    }
    this.pump();
  }

  /** Resolves once every queued delivery has been delivered or given up (tests; a clean shutdown). */
  settled(): Promise<void> {
    if (this.running === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((done) => this.idle.push(done));
  }

  private pump(): void {
    // A few at a time: a burst of requests must not open hundreds of connections.
    while (this.running < 4 && this.queue.length > 0) {
      const next = this.queue.shift()!;
      this.running++;
      void this.deliver(next).finally(() => {
        this.running--;
        this.pump();
        if (this.running === 0 && this.queue.length === 0) for (const done of this.idle.splice(0)) done();
      });
    }
  }

  private async deliver({ target, request }: Delivery): Promise<void> {
    const attempts = this.options.attempts ?? NOTIFY_DEFAULTS.attempts;
    const signed = target.format === 'signed-json' ? signedJsonBody(request, this.now()) : undefined;
    const body = signed ? signed.body : slackBody(request);
    for (let attempt = 1; attempt <= attempts; attempt++) {
      let retryAfterMs: number | undefined;
      let problem: string;
      try {
        const timestamp = Math.floor(this.now() / 1000);
        const headers: Record<string, string> = {
          'content-type': 'application/json',
          'user-agent': 'mrtr-webhooks',
        };
        if (signed && target.secret) {
          headers[ID_HEADER] = signed.id;
          headers[TIMESTAMP_HEADER] = String(timestamp);
          headers[SIGNATURE_HEADER] = signatureOf(target.secret, timestamp, body);
        }
        const response = await fetch(target.url, {
          method: 'POST',
          headers,
          body,
          redirect: 'manual',
          signal: AbortSignal.timeout(this.options.timeoutMs ?? NOTIFY_DEFAULTS.timeoutMs),
        });
        await response.arrayBuffer().catch(() => undefined);
        if (response.status >= 200 && response.status < 300) {
          this.stats.delivered++;
          return;
        }
        problem = `HTTP ${response.status}`;
        // A 4xx other than 408 and 429 will not change by trying again (a wrong URL, a refused signature).
        if (response.status < 500 && response.status !== 408 && response.status !== 429) attempt = attempts;
        const after = Number(response.headers.get('retry-after'));
        if (Number.isFinite(after) && after > 0) retryAfterMs = after * 1000;
      } catch (error) {
        problem = (error as Error).name === 'TimeoutError' ? 'timed out' : (error as Error).message;
      }
      if (attempt >= attempts) {
        this.stats.failed++;
        this.log(
          `webhook ${target.name}: approval ${request.id} not delivered after ${attempt} tries (${problem})`,
        );
        return;
      }
      const backoff = NOTIFY_DEFAULTS.backoffMs * 2 ** (attempt - 1) * (1 + this.random() / 2);
      await this.wait(Math.min(NOTIFY_DEFAULTS.maxBackoffMs, Math.round(retryAfterMs ?? backoff)));
    }
  }
}
