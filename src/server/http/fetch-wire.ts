// A web Request and Response behind the wire members the endpoint uses, with web-standard APIs only: the head is
// read from Request.headers, the answer becomes a Response, streamed (SSE) through a ReadableStream.
import { type BodyStream, type PageRequest, type PageResponse, readBody } from '../../protocol/index.js';
import type { BodyReader, WireRequest, WireResponse } from '../http-wire.js';

const encoder = new TextEncoder();

/** The request head of a web Request, in node's shape (lower-cased names; repeated headers already joined). */
export function wireRequestOf(request: Request, url: URL): WireRequest {
  const headers: Record<string, string> = {};
  const rawHeaders: string[] = [];
  request.headers.forEach((value, name) => {
    headers[name] = value;
    rawHeaders.push(name, value);
  });
  return { method: request.method, url: url.pathname + url.search, headers, rawHeaders };
}

/** Read a web Request's body with protocol's one reader, as the endpoint's BodyReader. */
export function fetchBodyReader(request: Request, headers: WireRequest['headers']): BodyReader {
  const stream = new WebBodyStream(headers, request.body);
  return (limit, onBody, tooLarge) => readBody(stream, limit, onBody, tooLarge);
}

/**
 * A page's request from a web Request: the head, the body as a stream, and the peer's address when the runtime
 * gave it (the development sign-in is offered to loopback peers only).
 */
export function pageRequestOf(
  request: Request,
  wire: WireRequest,
  remoteAddress: string | undefined,
): PageRequest {
  const body = new WebBodyStream(wire.headers, request.body);
  return {
    ...wire,
    socket: { remoteAddress },
    on: (event: 'data' | 'end' | 'error', listener: (value: never) => void) => body.on(event, listener),
    resume: () => body.resume(),
  } as PageRequest;
}

/** A web body behind the members of node's IncomingMessage the reader uses: its chunks as 'data' events. */
class WebBodyStream implements BodyStream {
  #data: ((chunk: Uint8Array) => void) | undefined;
  #end: (() => void) | undefined;
  #error: ((error: unknown) => void) | undefined;
  #started = false;
  #dropped = false;
  #reader: ReadableStreamDefaultReader<Uint8Array> | undefined;

  constructor(
    readonly headers: WireRequest['headers'],
    private readonly body: ReadableStream<Uint8Array> | null,
  ) {}

  on(event: 'data' | 'end' | 'error', listener: (value: never) => void): void {
    if (event === 'data') this.#data = listener as (chunk: Uint8Array) => void;
    else if (event === 'end') this.#end = listener as () => void;
    else this.#error = listener as (error: unknown) => void;
    // Read once the reader has said what it listens to (it registers all three in one turn).
    if (!this.#started) {
      this.#started = true;
      queueMicrotask(() => void this.#pump());
    }
  }

  /** A web body need not be drained: stop reading it. */
  resume(): void {
    this.#dropped = true;
    const cancelled = this.#reader ? this.#reader.cancel() : this.body?.cancel();
    void cancelled?.catch(() => {});
  }

  async #pump(): Promise<void> {
    if (this.#dropped) return;
    if (this.body === null) {
      this.#end?.();
      return;
    }
    const reader = this.body.getReader();
    this.#reader = reader;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (this.#dropped) return;
        if (done) break;
        this.#data?.(value);
      }
      this.#end?.();
    } catch (error) {
      if (!this.#dropped) this.#error?.(error);
    }
  }
}

/**
 * Collects what the endpoint writes into one Response: a plain body when the answer is written at once, a
 * ReadableStream once it writes before ending (SSE) or sends an event-stream head.
 */
export class FetchResponseWriter implements WireResponse, PageResponse {
  headersSent = false;
  destroyed = false;
  writableEnded = false;
  writableFinished = false;
  readonly response: Promise<Response>;
  #resolve!: (response: Response) => void;
  #status = 200;
  readonly #headers = new Headers();
  #stream: ReadableStreamDefaultController<Uint8Array> | undefined;
  readonly #onClose: (() => void)[] = [];

  constructor(signal?: AbortSignal) {
    this.response = new Promise((resolve) => {
      this.#resolve = resolve;
    });
    // The client went away (runtimes abort the request's signal): as node's 'close' before the end.
    signal?.addEventListener('abort', () => this.#gone(), { once: true });
  }

  setHeader(name: string, value: string | string[]): void {
    if (typeof value === 'string') this.#headers.set(name, value);
    else {
      this.#headers.delete(name);
      for (const item of value) this.#headers.append(name, item);
    }
  }

  writeHead(status: number, headers?: Readonly<Record<string, string | string[]>> | string[]): void {
    if (this.headersSent) return;
    this.#status = status;
    if (Array.isArray(headers)) {
      for (let i = 0; i < headers.length; i += 2) this.#headers.set(headers[i]!, headers[i + 1]!);
    } else if (headers) {
      for (const name in headers) this.setHeader(name, headers[name]!);
    }
    this.headersSent = true;
    // The body's length is the Response's to set; a stream has none.
    this.#headers.delete('content-length');
    if (this.#headers.get('content-type') === 'text/event-stream') this.#startStream();
  }

  flushHeaders(): void {
    if (!this.headersSent) this.writeHead(this.#status);
    this.#startStream();
  }

  write(chunk: string): void {
    if (this.writableEnded || this.destroyed) return;
    if (!this.headersSent) this.writeHead(this.#status);
    this.#startStream();
    this.#stream?.enqueue(encoder.encode(chunk));
  }

  end(chunk?: string): void {
    if (this.writableEnded) return;
    if (!this.headersSent) this.writeHead(this.#status);
    this.writableEnded = true;
    if (this.#stream) {
      if (!this.destroyed) {
        if (chunk) this.#stream.enqueue(encoder.encode(chunk));
        this.#stream.close();
      }
    } else {
      const body = chunk === undefined || noBody(this.#status) ? null : chunk;
      this.#resolve(new Response(body, { status: this.#status, headers: this.#headers }));
    }
    this.writableFinished = true;
    this.#closed();
  }

  /** Cut the response: a body under way errors, so the client sees it broken rather than complete. */
  destroy(): void {
    if (this.writableFinished || this.destroyed) return;
    if (!this.headersSent) this.writeHead(500);
    this.#startStream();
    this.destroyed = true;
    this.#stream?.error();
    this.#closed();
  }

  on(_event: 'close', listener: () => void): void {
    this.#onClose.push(listener);
  }

  #startStream(): void {
    if (this.#stream) return;
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#stream = controller;
      },
      cancel: () => this.#gone(),
    });
    this.#resolve(new Response(body, { status: this.#status, headers: this.#headers }));
  }

  #gone(): void {
    if (this.writableFinished || this.destroyed) return;
    this.destroyed = true;
    // Nobody reads it, but the handler's promise must settle: a runtime holds each unsettled one.
    this.#resolve(new Response(null, { status: 499 }));
    this.#closed();
  }

  #closed(): void {
    const listeners = this.#onClose.splice(0);
    for (const listener of listeners) listener();
  }
}

/** Statuses a Response may not carry a body with. */
function noBody(status: number): boolean {
  return status === 204 || status === 205 || status === 304;
}
