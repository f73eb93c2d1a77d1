// Hearing an HTTP upstream say its lists changed, so a changed definition (a rug pull) is withheld at once rather
// than at the next refresh. A 2026-07-28 upstream is asked with subscriptions/listen; a 2025 one tells on its
// session's GET stream. One connection of its own per upstream, apart from the calls: opened again after it drops,
// ever more slowly while it keeps failing, and never after close(). An upstream that offers no stream is left to
// the refresh.
import { HttpClientTransport, McpClient } from '../client/index.js';
import type { JsonRpcNotification } from '../protocol/index.js';
import type { CatalogKind } from '../server/index.js';
import type { Egress } from './egress/index.js';

export const LISTEN_BACKOFF = Object.freeze({
  /** The pause before listening again after a stream that was up ended. */
  firstMs: 1_000,
  /** The longest pause between attempts while the upstream keeps failing. */
  maxMs: 60_000,
});

/** A listen request stays open as long as the stream lasts: its time limit is the longest a timer takes. */
const FOREVER_MS = 0x7fff_ffff;

const LIST_CHANGED: Readonly<Record<string, CatalogKind>> = {
  'notifications/tools/list_changed': 'tools',
  'notifications/prompts/list_changed': 'prompts',
  'notifications/resources/list_changed': 'resources',
};

export interface UpstreamListenOptions {
  readonly name: string;
  readonly url: string;
  readonly egress: Egress;
  /** The upstream said `kind` changed (or a stream came back, when anything may have changed meanwhile). */
  readonly changed: (kind: CatalogKind) => void;
  readonly log: (line: string) => void;
}

/** How one stream ended: it was up and dropped (listen again), or the upstream offers none (stop). */
type StreamEnd = 'dropped' | 'unsupported';

export class UpstreamListener {
  readonly #stop = new AbortController();
  #client: McpClient | undefined;
  /** Settles when the loop is over (after close()). */
  readonly done: Promise<void>;
  /** Settles once the first stream is up (or listening is given up): changes from then on are heard. */
  readonly listening: Promise<void>;
  #listening: () => void = () => {};

  constructor(private readonly options: UpstreamListenOptions) {
    this.listening = new Promise<void>((resolve) => {
      this.#listening = resolve;
    });
    this.done = this.#run().finally(() => this.#listening());
  }

  async #run(): Promise<void> {
    let failures = 0;
    let heardBefore = false;
    while (!this.#stop.signal.aborted) {
      let end: StreamEnd | 'failed';
      let up = false;
      try {
        end = await this.#listenOnce(() => {
          up = true;
          this.#listening();
          // Back after a drop: whatever changed while nobody listened is listed anew.
          if (heardBefore) for (const kind of Object.values(LIST_CHANGED)) this.options.changed(kind);
          heardBefore = true;
        });
      } catch (error) {
        if (this.#stop.signal.aborted) break;
        end = 'failed';
        if (failures === 0)
          this.options.log(
            `upstream ${this.options.name}: cannot listen for list changes: ${(error as Error).message}; trying again`,
          );
      } finally {
        await this.#client?.close().catch(() => {});
        this.#client = undefined;
      }
      if (this.#stop.signal.aborted) break;
      if (end === 'unsupported') {
        this.options.log(
          `upstream ${this.options.name}: offers no stream of list changes; its lists are refreshed on a timer`,
        );
        return;
      }
      failures = up ? 0 : failures + 1;
      await this.#pause(Math.min(LISTEN_BACKOFF.firstMs * 2 ** failures, LISTEN_BACKOFF.maxMs));
    }
  }

  /** One stream, from connecting to its end; `acknowledged` once it is up. */
  async #listenOnce(acknowledged: () => void): Promise<StreamEnd> {
    const { egress, url } = this.options;
    const transport = new HttpClientTransport({
      url,
      // The gateway's own credential: only upstreams every caller reaches with one credential are listened to.
      token: () => egress.tokenFor({ subject: '' }, this.#stop.signal).then((t) => t ?? ''),
    });
    const client = new McpClient({
      server: transport,
      capabilities: {},
      clientInfo: { name: 'mrtr-gateway', version: '0.1.0' },
    });
    this.#client = client;
    const signal = this.#stop.signal;
    const heard = (n: JsonRpcNotification) => {
      if (n.method === 'notifications/subscriptions/acknowledged') acknowledged();
      const kind = LIST_CHANGED[n.method];
      if (kind) this.options.changed(kind);
    };
    // A 2025 upstream's GET stream opens with its session, during discover: heard from the start.
    let streamEnd: (end: StreamEnd) => void = () => {};
    const streamEnded = new Promise<StreamEnd>((resolve) => {
      streamEnd = resolve;
    });
    transport.onStreamNotification = heard;
    transport.onStreamState = (state) => {
      // A 2025 stream is up once the server accepted it: nothing it tells is missed from then on.
      if (state === 'open') acknowledged();
      else streamEnd(state === 'refused' ? 'unsupported' : 'dropped');
    };
    // Learns the era; a 2025 upstream's session is opened, and with it its GET stream.
    await client.discover({ signal });
    if (client.generation === 'legacy') {
      const stopped = () => streamEnd('dropped');
      signal.addEventListener('abort', stopped, { once: true });
      return streamEnded.finally(() => signal.removeEventListener('abort', stopped));
    }
    let agreed = false;
    await client.request(
      'subscriptions/listen',
      { notifications: { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true } },
      {
        signal,
        timeoutMs: FOREVER_MS,
        onNotification: (n) => {
          if (n.method === 'notifications/subscriptions/acknowledged') {
            const filter = (n.params?.notifications ?? {}) as Record<string, unknown>;
            agreed = Object.values(filter).some((v) => v === true);
          }
          heard(n);
        },
      },
    );
    // Ended by the upstream: at once when it agreed to tell nothing, else a graceful end (a restart) to listen again.
    return agreed ? 'dropped' : 'unsupported';
  }

  #pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      const signal = this.#stop.signal;
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /** Stop listening: the stream is closed and nothing is opened again. */
  async close(): Promise<void> {
    this.#stop.abort();
    await this.#client?.close().catch(() => {});
    await this.done;
  }
}
