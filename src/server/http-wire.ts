// The HTTP request and response as the endpoint and its routes use them: the few members of node's IncomingMessage
// and ServerResponse they touch. node's own objects fit as they are (no cost on the hot path); `fetch` fits a
// Request and a Response behind the same members (fetch-wire.ts).
import type { PageRequest, PageResponse } from '../protocol/index.js';

/** The request head: what node's IncomingMessage has and the routes read. */
export interface WireRequest {
  readonly method?: string | undefined;
  /** Path and query, as node gives it. */
  readonly url?: string | undefined;
  /** Lower-cased names; repeated custom headers joined with ", ". */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** Name/value pairs as sent, to tell a repeated header from a joined one. */
  readonly rawHeaders: readonly string[];
}

/** The response: what node's ServerResponse has and the routes write. */
export interface WireResponse {
  readonly headersSent: boolean;
  /** The connection went away (or the response was cut). */
  readonly destroyed: boolean;
  readonly writableEnded: boolean;
  readonly writableFinished: boolean;
  setHeader(name: string, value: string): unknown;
  writeHead(status: number, headers?: Readonly<Record<string, string>> | string[]): unknown;
  write(chunk: string): unknown;
  end(chunk?: string): unknown;
  /** Send the head now (an SSE stream with nothing to say yet). */
  flushHeaders(): void;
  on(event: 'close', listener: () => void): unknown;
}

/**
 * Read the request body as text, up to `limit` bytes, then call `onBody`; a larger body calls `tooLarge`
 * instead and is not kept. A callback rather than a promise: this runs for every request.
 */
export type BodyReader = (limit: number, onBody: (text: string) => void, tooLarge: () => void) => void;

/** The path of a request-target, without its query. */
export function pathnameOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/** A route beside the MCP endpoint (metadata, sign-in, the controls' pages): it answers the paths it handles. */
export interface HttpRoute<Req extends WireRequest = WireRequest, Res extends WireResponse = WireResponse> {
  handles(pathname: string): boolean;
  /** Answer the request; never throws. */
  handle(req: Req, res: Res): void;
}

/**
 * The server's own pages (browser sign-in, the controls, the console) beside the MCP endpoint. They read their body
 * and peer from the request (`PageRequest`); node's request and response fit as they are, and so does `mcpHttp`'s.
 */
export type PageRoutes = HttpRoute<PageRequest, PageResponse & WireResponse>;
