// The console's live view: server-sent events that tell open pages a topic changed (a new request, a vote, a new
// round in the trail). A page then fetches itself again and swaps the parts marked `data-live`: the stream carries
// no data of its own, so it can never show a person what their roles do not let them see.
import type { PageResponse } from '../protocol/index.js';
import type { ConsoleRole } from './panel.js';

export type LiveTopic = 'approvals' | 'flows';

/** Who hears of a topic: the same roles that may open its panel. */
const TOPIC_ROLES: Readonly<Record<LiveTopic, readonly ConsoleRole[]>> = {
  approvals: ['approver', 'admin'],
  flows: ['auditor', 'admin'],
};

export const LIVE_DEFAULTS = Object.freeze({
  /** Open streams in all: each is a socket held open. */
  maxStreams: 200,
  /** Open streams per person (a few tabs). */
  maxStreamsPerPerson: 5,
  /** A comment line this often keeps proxies from closing an idle stream. */
  keepAliveMs: 25_000,
  /** Changes within this time are told once: a burst of rounds is one refresh, not hundreds. */
  coalesceMs: 250,
});

interface Stream {
  res: PageResponse;
  person: string;
  roles: ReadonlySet<ConsoleRole>;
}

export interface LiveLimits {
  /** Open streams in all (default 200). */
  maxStreams?: number;
  /** Open streams per person (default 5). */
  maxStreamsPerPerson?: number;
}

export class LiveHub {
  private readonly streams = new Set<Stream>();
  private readonly maxStreams: number;
  private readonly maxPerPerson: number;
  private readonly pending = new Set<LiveTopic>();
  private flushTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly keepAlive: ReturnType<typeof setInterval>;

  constructor(limits: LiveLimits = {}) {
    this.maxStreams = limits.maxStreams ?? LIVE_DEFAULTS.maxStreams;
    this.maxPerPerson = limits.maxStreamsPerPerson ?? LIVE_DEFAULTS.maxStreamsPerPerson;
    this.keepAlive = setInterval(() => {
      for (const s of this.streams) s.res.write(': keep-alive\n\n');
    }, LIVE_DEFAULTS.keepAliveMs);
    // Deno and workerd give a number: nothing to unref there.
    (this.keepAlive as { unref?: () => void }).unref?.();
  }

  /** Open a stream for a person; false (answered 429) when they, or everyone, hold too many. */
  open(res: PageResponse, person: string, roles: ReadonlySet<ConsoleRole>): boolean {
    const theirs = [...this.streams].filter((s) => s.person === person).length;
    if (this.streams.size >= this.maxStreams || theirs >= this.maxPerPerson) {
      res.writeHead(429, { 'retry-after': '30', 'content-type': 'text/plain', 'cache-control': 'no-store' });
      res.end('too many live views open: close a tab of the console\n');
      return false;
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      // nginx buffers responses by default: a live view must not wait for a buffer to fill.
      'x-accel-buffering': 'no',
    });
    res.write(': live\n\n');
    const stream: Stream = { res, person, roles };
    this.streams.add(stream);
    res.on('close', () => this.streams.delete(stream));
    return true;
  }

  /** A topic changed: open pages that may see it are told, once per burst. */
  changed(topic: LiveTopic): void {
    this.pending.add(topic);
    this.flushTimer ??= setTimeout(() => this.flush(), LIVE_DEFAULTS.coalesceMs);
    (this.flushTimer as { unref?: () => void }).unref?.();
  }

  get size(): number {
    return this.streams.size;
  }

  private flush(): void {
    this.flushTimer = undefined;
    const topics = [...this.pending];
    this.pending.clear();
    for (const s of this.streams)
      for (const topic of topics)
        if (TOPIC_ROLES[topic].some((r) => s.roles.has(r))) s.res.write(`event: changed\ndata: ${topic}\n\n`);
  }

  close(): void {
    clearInterval(this.keepAlive);
    if (this.flushTimer) clearTimeout(this.flushTimer);
    for (const s of this.streams) s.res.end();
    this.streams.clear();
  }
}
