// The server as a fetch handler: `mcpHttp(server).fetch(request)` answers with a Response, using web-standard APIs
// only at request time, so the same server runs on Node, Bun, Deno and Cloudflare's workerd.

import { SERVER_DEFAULTS } from '../defaults.js';
import { defaultOriginPolicy } from '../http-guards.js';
import { LegacyHttpFront } from '../legacy/http-front.js';
import { checkIntegerOption } from '../option-checks.js';
import type { McpServer } from '../server.js';
import type { HttpEdgeSettings } from './edge-settings.js';
import { McpEndpoint } from './endpoint.js';
import { FetchResponseWriter, fetchBodyReader, wireRequestOf } from './fetch-wire.js';
import { metadataRoute } from './metadata-route.js';
import type { HttpRoute } from './wire.js';

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
  fetch(request: Request): Promise<Response>;
}

/**
 * Serve `server` as a fetch handler. `auth`, `signIn` and `legacyClients` default to the server's own (deprecated)
 * options of the same names.
 */
export function mcpHttp(server: McpServer, options: McpHttpOptions = {}): McpFetchHandler {
  checkIntegerOption('mcpHttp', 'maxBodyBytes', options.maxBodyBytes);
  const edge = server.httpEdge(options);
  const originPolicy = defaultOriginPolicy('0.0.0.0', options.allowedHosts, options.allowedOrigins);
  const routes: HttpRoute[] = [];
  if (edge.auth) routes.push(metadataRoute(edge.auth));
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
    async fetch(request) {
      if (ready) {
        await ready;
        ready = undefined;
      }
      const url = new URL(request.url);
      const req = wireRequestOf(request, url);
      const res = new FetchResponseWriter(request.signal);
      const route = routes.find((r) => r.handles(url.pathname));
      if (route) route.handle(req, res);
      else endpoint.serve(req, res, url.pathname, fetchBodyReader(request, req.headers));
      return res.response;
    },
  };
}
