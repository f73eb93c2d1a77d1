// One Streamable HTTP request as the dispatcher sees it: who asked, a cancellation signal, a notification channel
// that upgrades the response to SSE, and the final answer.
import { httpStatusForError, type JsonRpcNotification, type JsonRpcResponse } from '../protocol/index.js';
import type { Principal } from './context.js';
import type { RequestEnvironment } from './environment.js';
import type { WireResponse } from './http-wire.js';
import { serializeNotification, serializeResponse } from './message.js';

const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
};

/** Answer with one JSON body (no-op once the head went out, e.g. after an SSE upgrade). */
export function sendJson(res: WireResponse, status: number, body: JsonRpcResponse): void {
  if (res.headersSent) return;
  const text = serializeResponse(body);
  // The raw [name, value, …] form skips node's per-call header object processing.
  res.writeHead(status, ['content-type', 'application/json', 'content-length', String(byteLength(text))]);
  res.end(text);
}

/** UTF-8 length: node's Buffer where there is one (fastest), else a TextEncoder. */
const byteLength: (text: string) => number =
  typeof Buffer === 'function'
    ? (text) => Buffer.byteLength(text)
    : (text) => encoder.encode(text).byteLength;
const encoder = new TextEncoder();

/*
 * A class rather than an object literal on purpose: a literal with a `get signal()` accessor is built on V8's slow
 * path for every request, and that measured ~15 µs per request under load. Here the accessor lives on the prototype.
 */
export class HttpExchange implements RequestEnvironment {
  #abort: AbortController | undefined;
  #streaming = false;
  #statusOverride: { status: number; headers: Readonly<Record<string, string>> } | undefined;
  /** The request's headers, for the caller's trace context (set by the endpoint; read only when tracing is on). */
  traceHeaders: Readonly<Record<string, string | string[] | undefined>> | undefined = undefined;

  constructor(
    private readonly res: WireResponse,
    readonly principal: Principal | undefined,
    /** True once the server is closing: the answer then asks the client not to reuse the connection. */
    private readonly draining: () => boolean,
    /** Aborted when the server starts closing: a subscriptions/listen stream then ends with its answer. */
    readonly closing?: AbortSignal,
  ) {}

  /** The client closed the response before it was finished. */
  get gone(): boolean {
    return this.res.destroyed && !this.res.writableFinished;
  }

  /**
   * Aborted when the client closes the response early (streamable-http.mdx "Cancellation"). The AbortController and
   * its close listener are made only when a handler looks: most never do, and this runs for every request.
   */
  get signal(): AbortSignal {
    if (this.#abort === undefined) {
      const controller = new AbortController();
      this.#abort = controller;
      const res = this.res;
      if (this.gone) controller.abort();
      else
        res.on('close', () => {
          if (!res.writableFinished) controller.abort();
        });
    }
    return this.#abort.signal;
  }

  notify(notification: JsonRpcNotification): void {
    // After the answer (a handler still running past its time limit), nothing more belongs on this response.
    if (this.gone || this.res.writableEnded) return;
    if (!this.#streaming) {
      this.#streaming = true;
      if (this.draining()) this.res.setHeader('connection', 'close');
      this.res.writeHead(200, SSE_HEADERS);
    }
    const text = serializeNotification(notification);
    if (text !== undefined) this.res.write(`event: message\ndata: ${text}\n\n`);
  }

  overrideHttpStatus(status: number, headers: Readonly<Record<string, string>>): void {
    this.#statusOverride = { status, headers };
  }

  /** The final response: the last event of the stream once upgraded, otherwise a JSON body with its status. */
  finish(response: JsonRpcResponse): void {
    if (this.gone) return;
    if (this.#streaming) {
      this.res.end(`event: message\ndata: ${serializeResponse(response)}\n\n`);
      return;
    }
    if (this.draining()) this.res.setHeader('connection', 'close');
    let status = 200;
    if ('error' in response) {
      const override = this.#statusOverride;
      for (const [name, value] of Object.entries(override?.headers ?? {})) this.res.setHeader(name, value);
      status = override?.status ?? httpStatusForError(response.error.code);
    }
    sendJson(this.res, status, response);
  }
}
