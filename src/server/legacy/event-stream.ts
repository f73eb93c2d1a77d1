// One SSE stream of a 2025 session (streamable-http.mdx "Resumability and Redelivery"): every event carries an id
// `<stream>_<n>`, the events are kept for a while after they were sent, and a client that lost the connection
// reconnects with GET and Last-Event-ID to get what it missed and the rest. A disconnection is not a cancellation:
// the request goes on and its events wait here.
import type { JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../../protocol/index.js';
import type { WireResponse } from '../http/wire.js';
import { serializeNotification, serializeResponse } from '../message.js';

export const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
} as const;

/** Most events one stream keeps for a resuming client; older ones are dropped (a resume from them is refused). */
const MAX_KEPT_EVENTS = 1000;

export class EventStream {
  private seq = 0;
  private readonly kept: string[] = [];
  private dropped = 0;
  private res: WireResponse | undefined;
  done = false;

  constructor(
    readonly id: string,
    /** The session key it belongs to: only that session may resume it. */
    readonly session: string,
  ) {}

  /** Start writing to `res`: the head, and for clients that expect one, the priming event that names the stream. */
  attach(res: WireResponse, headers: Record<string, string>, primeRetryMs: number | undefined): void {
    res.writeHead(200, { ...SSE_HEADERS, ...headers });
    if (primeRetryMs !== undefined) res.write(`id: ${this.id}_0\nretry: ${primeRetryMs}\ndata: \n\n`);
    this.follow(res);
  }

  send(message: JsonRpcNotification | JsonRpcRequest): void {
    const text = serializeNotification(message);
    if (text !== undefined) this.push(text);
  }

  finish(response: JsonRpcResponse): void {
    if (this.done) return;
    this.push(serializeResponse(response));
    this.done = true;
    this.res?.end();
    this.res = undefined;
  }

  /**
   * Close the connection but not the stream (2025-11-25 SSE polling): the client reconnects with Last-Event-ID
   * after the `retry` it was given and gets the rest.
   */
  disconnect(): void {
    const res = this.res;
    this.res = undefined;
    res?.end();
  }

  /** End the stream without an answer (the session ended, the server stops). */
  close(): void {
    this.done = true;
    this.res?.end();
    this.res = undefined;
  }

  /**
   * Go on writing to a reconnected client: the events after `after`, then whatever comes. False when the events
   * it missed are no longer kept.
   */
  resume(res: WireResponse, headers: Record<string, string>, after: number): boolean {
    if (after < this.dropped) return false;
    res.writeHead(200, { ...SSE_HEADERS, ...headers });
    for (let i = after - this.dropped; i < this.kept.length; i++) res.write(this.kept[i]!);
    if (this.done) {
      res.end();
      return true;
    }
    // One writer at a time: a second reconnection takes over from the first.
    this.res?.end();
    this.follow(res);
    return true;
  }

  private follow(res: WireResponse): void {
    this.res = res;
    res.on('close', () => {
      if (this.res === res) this.res = undefined;
    });
  }

  private push(json: string): void {
    const text = `id: ${this.id}_${++this.seq}\nevent: message\ndata: ${json}\n\n`;
    this.kept.push(text);
    if (this.kept.length > MAX_KEPT_EVENTS) {
      this.kept.shift();
      this.dropped++;
    }
    const res = this.res;
    if (res && !res.destroyed && !res.writableEnded) res.write(text);
  }
}
