// Reading an HTTP request body with a size limit: the one reader the MCP endpoint, the sign-in forms and the
// controls' JSON API share. It takes node's IncomingMessage, or anything with the same few members.

/** A request body as node's IncomingMessage gives it. */
export interface BodyStream {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  on(event: 'data', listener: (chunk: Uint8Array) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  on(event: 'error', listener: (error: unknown) => void): unknown;
  /** Read on without keeping what comes (a body refused as too large is drained, not kept). */
  resume(): unknown;
}

/**
 * A request to one of the server's own pages (sign-in, the controls, the console): its head, its body and its peer.
 * node's IncomingMessage fits as it is; a fetch handler builds one from a web Request.
 */
export interface PageRequest extends BodyStream {
  /** Lower-cased names; the single-valued ones the pages read are one string, as node types them. */
  readonly headers: BodyStream['headers'] & {
    readonly cookie?: string | undefined;
    readonly 'content-type'?: string | undefined;
    readonly origin?: string | undefined;
  };
  readonly method?: string | undefined;
  /** Path and query. */
  readonly url?: string | undefined;
  /** Name/value pairs as sent (a bearer check reads these). */
  readonly rawHeaders: readonly string[];
  /** The peer; a fetch handler knows its address only when the runtime tells it. */
  readonly socket: { readonly remoteAddress?: string | undefined };
}

/** A page's response: the members of node's ServerResponse the pages write (a fetch handler collects them). */
export interface PageResponse {
  readonly headersSent: boolean;
  readonly writableEnded: boolean;
  /** A list value sends the header once per item (`set-cookie`). */
  setHeader(name: string, value: string | string[]): unknown;
  writeHead(status: number, headers?: Readonly<Record<string, string | string[]>>): unknown;
  write(chunk: string): unknown;
  end(chunk?: string): unknown;
  /** Cut the response (it failed after its head was sent). */
  destroy(): unknown;
  on(event: 'close', listener: () => void): unknown;
}

/**
 * Read `req`'s body up to `limit` bytes and hand its text to `onBody`; a larger body (declared or sent) calls
 * `tooLarge` once and is drained without being kept. A body cut off mid-way calls neither. Callbacks rather than
 * a promise: the endpoint runs this for every request.
 */
export function readBody(
  req: BodyStream,
  limit: number,
  onBody: (text: string) => void,
  tooLarge: () => void,
): void {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    tooLarge();
    return;
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  let done = false;
  req.on('data', (chunk) => {
    if (done) return;
    size += chunk.byteLength;
    if (size > limit) {
      done = true;
      chunks.length = 0;
      req.resume();
      tooLarge();
      return;
    }
    chunks.push(chunk);
  });
  req.on('end', () => {
    if (done) return;
    done = true;
    onBody(textOf(chunks, size));
  });
  req.on('error', () => {
    done = true;
  });
}

/** Promise form for routes off the hot path: rejects with `tooLarge()`'s error. */
export function readBodyText(req: BodyStream, limit: number, tooLarge: () => Error): Promise<string> {
  return new Promise((resolve, reject) => {
    readBody(req, limit, resolve, () => reject(tooLarge()));
    req.on('error', reject);
  });
}

const decoder = new TextDecoder();

/** UTF-8 text of the chunks: node's Buffer where there is one (fastest for one chunk), else a TextDecoder. */
function textOf(chunks: Uint8Array[], size: number): string {
  if (typeof Buffer === 'function') {
    const one = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
    return Buffer.isBuffer(one) ? one.toString('utf8') : decoder.decode(one);
  }
  if (chunks.length === 1) return decoder.decode(chunks[0]);
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return decoder.decode(bytes);
}
