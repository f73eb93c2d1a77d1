// A web Request and Response behind the wire members the endpoint uses, with web-standard APIs only: the head is
// read from Request.headers, the answer becomes a Response, streamed (SSE) through a ReadableStream.
import type { BodyReader, WireRequest, WireResponse } from './wire.js';

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

/** Read a web Request's body, as the endpoint's BodyReader. */
export function fetchBodyReader(request: Request): BodyReader {
  return (limit, onBody, tooLarge) => {
    const declared = Number(request.headers.get('content-length') ?? Number.NaN);
    if (Number.isFinite(declared) && declared > limit) {
      void request.body?.cancel().catch(() => {});
      tooLarge();
      return;
    }
    readLimited(request.body, limit).then(
      (bytes) => (bytes === undefined ? tooLarge() : onBody(new TextDecoder().decode(bytes))),
      // A body cut off mid-way has nobody to answer, as on node.
      () => {},
    );
  };
}

/** The bytes of `body`, or undefined once they pass `limit` (the rest is not read). */
async function readLimited(body: ReadableStream<Uint8Array> | null, limit: number) {
  if (body === null) return new Uint8Array(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      void reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0]!;
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

/**
 * Collects what the endpoint writes into one Response: a plain body when the answer is written at once, a
 * ReadableStream once it writes before ending (SSE) or sends an event-stream head.
 */
export class FetchResponseWriter implements WireResponse {
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

  setHeader(name: string, value: string): void {
    this.#headers.set(name, value);
  }

  writeHead(status: number, headers?: Readonly<Record<string, string>> | string[]): void {
    if (this.headersSent) return;
    this.#status = status;
    if (Array.isArray(headers)) {
      for (let i = 0; i < headers.length; i += 2) this.#headers.set(headers[i]!, headers[i + 1]!);
    } else if (headers) {
      for (const name in headers) this.#headers.set(name, headers[name]!);
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
