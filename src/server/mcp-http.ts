// The server as a fetch handler: `mcpHttp(server).fetch(request)` answers with a Response, using web-standard APIs
// only at request time, so the same server runs on Node, Bun, Deno and Cloudflare's workerd.

import { SERVER_DEFAULTS } from './defaults.js';
import { McpEndpoint } from './http/endpoint.js';
import { FetchResponseWriter, fetchBodyReader, pageRequestOf, wireRequestOf } from './http/fetch-wire.js';
import { metadataRoute } from './http/metadata-route.js';
import { originChecked } from './http/origin-route.js';
import type { HttpEdgeSettings } from './http-edge.js';
import { defaultOriginPolicy } from './http-guards.js';
import type { HttpRoute, PageRoutes } from './http-wire.js';
import { LegacyHttpFront } from './legacy/http-front.js';
import { checkIntegerOption } from './option-checks.js';
import type { McpServer } from './server.js';

/** The HTTP edge a fetch handler takes: the server's own pages (sign-in, the controls, the console) included. */
export interface McpHttpOptions extends HttpEdgeSettings {
  /** The MCP endpoint path (default `/mcp`). */
  path?: string;
  /** Host names accepted in the Host header (default: any; a platform's router decides the host). */
  allowedHosts?: string[];
  /** Origins accepted from browsers (default: none besides a same-host one when `allowedHosts` is set). */
  allowedOrigins?: string[];
  /** Largest accepted request body in bytes (default 1 MiB); larger bodies get 413. */
  maxBodyBytes?: number;
}

/** A fetch handler: what Bun.serve, Deno.serve and a Cloudflare worker take. */
export interface McpFetchHandler {
  /** `peer` is what the runtime passes beside the request; the pages read the caller's address from it. */
  fetch(request: Request, peer?: FetchPeer): Promise<Response>;
}

/**
 * What a runtime passes after the request: Deno's `info` (`remoteAddr`) or Bun's server (`requestIP`). Anything
 * else (a Worker's `env`) leaves the caller's address unknown: the development sign-in is then not offered.
 */
export type FetchPeer = {
  readonly remoteAddr?: { readonly hostname?: string };
  requestIP?(request: Request): { address: string } | null;
};

/** The caller's address, if the runtime gave it. */
function peerAddress(request: Request, peer: FetchPeer | undefined): string | undefined {
  if (typeof peer !== 'object' || peer === null) return undefined;
  if (typeof peer.requestIP === 'function') return peer.requestIP(request)?.address ?? undefined;
  const hostname = peer.remoteAddr?.hostname;
  return typeof hostname === 'string' ? hostname : undefined;
}

/**
 * Serve `server` as a fetch handler. `auth` and `legacyClients` default to the server's own (deprecated) options of
 * the same names.
 */
export function mcpHttp(server: McpServer, options: McpHttpOptions = {}): McpFetchHandler {
  checkIntegerOption('mcpHttp', 'maxBodyBytes', options.maxBodyBytes);
  const edge = server.httpEdge(options);
  const originPolicy = defaultOriginPolicy('0.0.0.0', options.allowedHosts, options.allowedOrigins);
  const routes: HttpRoute[] = [];
  if (edge.auth) routes.push(metadataRoute(edge.auth));
  // The pages read a body and a peer: they get a PageRequest, built only for them.
  const pages: PageRoutes[] = edge.pages.map((page) => originChecked(page, originPolicy));
  const endpoint = new McpEndpoint(edge.core, {
    path: options.path ?? SERVER_DEFAULTS.path,
    maxBodyBytes: options.maxBodyBytes ?? SERVER_DEFAULTS.maxBodyBytes,
    originPolicy,
    auth: edge.auth,
    authenticate: undefined,
    logger: edge.logger,
    observers: edge.observers,
    legacy: edge.legacy && new LegacyHttpFront(edge.legacy, edge.logger, edge.legacyHttp),
  });
  // With a relay, answers from other instances must reach this one before it asks anything.
  let ready: Promise<void> | undefined = edge.legacy?.ready();
  return {
    async fetch(request, peer) {
      if (ready) {
        await ready;
        ready = undefined;
      }
      const url = new URL(request.url);
      const req = wireRequestOf(request, url);
      const res = new FetchResponseWriter(request.signal);
      const route = routes.find((r) => r.handles(url.pathname));
      const page = route ? undefined : pages.find((p) => p.handles(url.pathname));
      if (route) route.handle(req, res);
      else if (page) page.handle(pageRequestOf(request, req, peerAddress(request, peer)), res);
      else endpoint.serve(req, res, url.pathname, fetchBodyReader(request, req.headers));
      return res.response;
    },
  };
}
