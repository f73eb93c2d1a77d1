// Delivering approval requests to webhooks without ever holding up a round: `notify` only queues. Each delivery is
// retried with back-off (honouring Retry-After) a few times, never follows a redirect, and gives up with a warning.
// A stopping server closes the notifier: deliveries go on for a bounded time, and each one still left is named in
// the log, so no request goes unsent without a word.
import type { ControlEvent } from '../controls/index.js';
import { untilAborted } from '../protocol/internal.js';
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
  /** How long a stopping server goes on delivering, at most (less when its --drain-ms is shorter). */
  closeMs: 5_000,
});

export interface WebhookNotifierOptions {
  targets: readonly WebhookTarget[];
  log?: (line: string) => void;
  /** Waits between tries (tests give one that returns at once and records the delay). */
  wait?: (ms: number) => Promise<void>;
  /** The timer of close's deadline, cleared when `cancel` aborts (tests give one they end themselves). */
  deadline?: (ms: number, cancel: AbortSignal) => Promise<void>;
  now?: () => number;
  random?: () => number;
  attempts?: number;
  timeoutMs?: number;
}

/**
 * Close's deadline. Unlike the pauses between tries, its timer holds the process: a stopping server whose only
 * pending work is a delivery waiting to retry would otherwise end at once, naming nothing and closing nothing after.
 */
function untilDeadline(ms: number, cancel: AbortSignal): Promise<void> {
  return new Promise((done) => {
    const timer = setTimeout(done, ms);
    cancel.addEventListener('abort', () => {
      clearTimeout(timer);
      done();
    });
  });
}

interface Delivery {
  target: WebhookTarget;
  request: ApprovalRequested;
  /** The try being made (0 before the first). */
  attempt: number;
  /** A try is in flight (else it waits for its turn or for its next try). */
  inTry?: boolean;
  /** Given up by stop(): its end says nothing more. */
  givenUp?: boolean;
}

export class WebhookNotifier {
  private readonly queue: Delivery[] = [];
  /** Deliveries being tried or waiting to be tried again. */
  private readonly running = new Set<Delivery>();
  private idle: Array<() => void> = [];
  private readonly wait: (ms: number) => Promise<void>;
  private readonly deadline: (ms: number, cancel: AbortSignal) => Promise<void>;
  /** Aborted when close's deadline passes: tries in flight end, back-off waits end, nothing new starts. */
  private readonly stopped = new AbortController();
  private closing: Promise<void> | undefined;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly log: (line: string) => void;
  /** What happened to deliveries, for the operator and the tests. */
  readonly stats = { delivered: 0, failed: 0, dropped: 0, abandoned: 0 };

  constructor(private readonly options: WebhookNotifierOptions) {
    this.log = options.log ?? (() => {});
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.wait = options.wait ?? ((ms) => new Promise((done) => setTimeout(done, ms).unref()));
    this.deadline = options.deadline ?? untilDeadline;
  }

  /** Deliveries not done yet: waiting for their turn, being tried, or waiting to be tried again. */
  get pending(): number {
    return this.queue.length + this.running.size;
  }

  /** Queue the deliveries an event calls for (only new approval requests); returns at once, never throws. */
  notify(event: ControlEvent): void {
    const request = requestedOf(event);
    if (!request) return;
    for (const target of this.options.targets) {
      if (!target.roles.includes('*') && !target.roles.includes(request.role)) continue;
      if (this.stopped.signal.aborted) {
        this.giveUp({ target, request, attempt: 0 }, 'the server stopped before it was sent');
        continue;
      }
      if (this.queue.length >= NOTIFY_DEFAULTS.maxQueued) {
        const oldest = this.queue.shift()!;
        this.stats.dropped++;
        this.log(
          `webhook queue full (${NOTIFY_DEFAULTS.maxQueued}): approval ${oldest.request.id} not delivered to ${oldest.target.name}, the oldest waiting`,
        );
      }
      this.queue.push({ target, request, attempt: 0 });
    }
    this.pump();
  }

  /** Resolves once every queued delivery has been delivered or given up (tests; a clean shutdown). */
  settled(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((done) => this.idle.push(done));
  }

  /**
   * A server stopping: deliveries go on (and requests still arriving are queued) for up to `withinMs`; then every
   * delivery not done is given up, each named in the log with its approval id (the request waits in the approvals
   * inbox all the same). Resolves when nothing is left running.
   */
  close(withinMs: number): Promise<void> {
    this.closing ??= (async () => {
      if (this.pending > 0) {
        const deadline = new AbortController();
        await Promise.race([this.settled(), this.deadline(withinMs, deadline.signal)]);
        deadline.abort();
      }
      this.stop();
      await this.settled();
    })();
    return this.closing;
  }

  /**
   * Give up every delivery not done, now, each named in the log before this returns (a second signal: the process
   * exits right after). Tries in flight are aborted.
   */
  stop(): void {
    if (this.stopped.signal.aborted) return;
    for (const delivery of this.queue.splice(0))
      this.giveUp(delivery, 'the server stopped before it was sent');
    for (const delivery of this.running)
      this.giveUp(
        delivery,
        delivery.inTry
          ? `the server stopped during try ${delivery.attempt}: the receiver may have it`
          : `the server stopped after ${delivery.attempt} tries, before the next`,
      );
    this.stopped.abort();
  }

  private giveUp(delivery: Delivery, why: string): void {
    delivery.givenUp = true;
    this.stats.abandoned++;
    this.log(`webhook ${delivery.target.name}: approval ${delivery.request.id} not delivered: ${why}`);
  }

  private pump(): void {
    // A few at a time: a burst of requests must not open hundreds of connections.
    while (this.running.size < 4 && this.queue.length > 0 && !this.stopped.signal.aborted) {
      const next = this.queue.shift()!;
      this.running.add(next);
      void this.deliver(next).finally(() => {
        this.running.delete(next);
        this.pump();
        if (this.pending === 0) for (const done of this.idle.splice(0)) done();
      });
    }
  }

  private async deliver(delivery: Delivery): Promise<void> {
    const { target, request } = delivery;
    const attempts = this.options.attempts ?? NOTIFY_DEFAULTS.attempts;
    const signed = target.format === 'signed-json' ? signedJsonBody(request, this.now()) : undefined;
    const body = signed ? signed.body : slackBody(request);
    for (let attempt = 1; attempt <= attempts; attempt++) {
      let retryAfterMs: number | undefined;
      let problem: string;
      delivery.attempt = attempt;
      delivery.inTry = true;
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
        const response = await this.post(target.url, headers, body);
        if (delivery.givenUp) return;
        if (response.status >= 200 && response.status < 300) {
          this.stats.delivered++;
          // Out of the running set now, not a turn later: a stop() in between must not name it.
          this.running.delete(delivery);
          return;
        }
        problem = `HTTP ${response.status}`;
        // A 4xx other than 408 and 429 will not change by trying again (a wrong URL, a refused signature).
        if (response.status < 500 && response.status !== 408 && response.status !== 429) attempt = attempts;
        const after = Number(response.headers.get('retry-after'));
        if (Number.isFinite(after) && after > 0) retryAfterMs = after * 1000;
      } catch (error) {
        // stop() aborted the try, and has named the delivery already.
        if (delivery.givenUp) return;
        problem = (error as Error).name === 'TimeoutError' ? 'timed out' : (error as Error).message;
      } finally {
        delivery.inTry = false;
      }
      if (attempt >= attempts) {
        this.stats.failed++;
        this.running.delete(delivery);
        this.log(
          `webhook ${target.name}: approval ${request.id} not delivered after ${attempt} tries (${problem})`,
        );
        return;
      }
      const backoff = NOTIFY_DEFAULTS.backoffMs * 2 ** (attempt - 1) * (1 + this.random() / 2);
      const pause = Math.min(NOTIFY_DEFAULTS.maxBackoffMs, Math.round(retryAfterMs ?? backoff));
      // A false: stop() ended the pause, and has named the delivery.
      if (!(await this.waitUnlessStopped(pause))) return;
    }
  }

  /** One try: a POST that ends at its time limit or when the notifier stops, whichever comes first. */
  private async post(url: URL, headers: Record<string, string>, body: string): Promise<Response> {
    const abort = new AbortController();
    const timeoutMs = this.options.timeoutMs ?? NOTIFY_DEFAULTS.timeoutMs;
    const timer = setTimeout(
      () => abort.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError')),
      timeoutMs,
    );
    // stop() has named the delivery before it aborts: the try's error is never shown.
    const onStop = () => abort.abort();
    this.stopped.signal.addEventListener('abort', onStop, { once: true });
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers,
        body,
        redirect: 'manual',
        signal: abort.signal,
      });
      await response.arrayBuffer().catch(() => undefined);
      return response;
    } finally {
      clearTimeout(timer);
      this.stopped.signal.removeEventListener('abort', onStop);
    }
  }

  /** The back-off pause; false when the notifier stopped first. */
  private waitUnlessStopped(ms: number): Promise<boolean> {
    return untilAborted(
      this.wait(ms).then(() => true),
      this.stopped.signal,
      () => false,
    );
  }
}
