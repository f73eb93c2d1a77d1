// Streamable HTTP transport (2026-07-28) on node:http: one POST endpoint, JSON or per-request SSE responses.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BearerAuth } from '../auth/index.js';
import type { Principal } from './context.js';
import { SERVER_DEFAULTS } from './defaults.js';
import { type Logger, stderrLogger } from './environment.js';
import { InvalidOptionError } from './errors.js';
import { McpEndpoint } from './http/endpoint.js';
import { metadataRoute } from './http/metadata-route.js';
import { nodeBodyReader } from './http/node-body.js';
import { originChecked } from './http/origin-route.js';
import { defaultOriginPolicy } from './http-guards.js';
import { type HttpRoute, type PageRoutes, pathnameOf } from './http-wire.js';
import type { LegacyBridge } from './legacy/bridge.js';
import { LegacyHttpFront, type LegacyHttpOptions } from './legacy/http-front.js';
import { checkIntegerOption, MAX_TIMER_MS } from './option-checks.js';
import type { RequestHandler } from './request-handler.js';
import type { RoundObserver } from './round/observer.js';

export interface HttpServerTransportOptions {
  host?: string;
  port?: number;
  /** The MCP endpoint path. */
  path?: string;
  /** Largest accepted request body in bytes (default 1 MiB); larger bodies get 413 and are not buffered. */
  maxBodyBytes?: number;
  allowedHosts?: string[];
  allowedOrigins?: string[];
  /**
   * Slow-client limits for `listen()` (slowloris): the request head must arrive within `headersTimeoutMs` (default
   * 10 s, or `requestTimeoutMs` if that is shorter) and the whole request within `requestTimeoutMs` (default 30 s),
   * else 408 and the connection closes. MRTR requests are small, so these are generous; responses (SSE included)
   * are not limited, and neither is a keep-alive connection idle between requests.
   */
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  /**
   * Most simultaneous connections `listen()` accepts; further ones are dropped at once (default: no limit). Idle
   * keep-alive connections count until they close (65 s), so size it for clients that pause between rounds.
   */
  maxConnections?: number;
  /** Where transport failures are reported (default: JSON lines on stderr). */
  logger?: Logger;
  /**
   * The OAuth resource server (`mrtr/auth`): every request needs a bearer token it accepts, checked before anything
   * else is read, and the Protected Resource Metadata is served. McpServer passes its `auth` option here.
   */
  auth?: BearerAuth;
  /**
   * Establish the caller yourself from the HTTP request instead of `auth`, before anything else is read. Throw to
   * refuse (401): an AuthRefusal keeps its status and challenge.
   */
  authenticate?: (req: IncomingMessage) => Principal | undefined | Promise<Principal | undefined>;
  /** The server's own pages (browser sign-in, and what builds on it), answered before the MCP endpoint's checks. */
  pages?: PageRoutes;
  /**
   * Told of every tools/call, prompts/get and resources/read request this transport refuses before dispatching it
   * (401, 413, header mismatch, not JSON-RPC), as a `refused` RoundEvent; the refusal waits for their promises.
   * `McpServer.http()` passes the server's own observers.
   */
  observers?: readonly RoundObserver[];
  /**
   * Serve 2025-era clients on the same endpoint through this bridge (initialize, sessions, SSE streams, their
   * answers to the server's requests). `McpServer.http()` passes the server's own unless `legacyClients: false`.
   */
  legacy?: LegacyBridge;
  /** Tuning for the 2025 transport (the SSE `retry` hint). */
  legacyHttp?: LegacyHttpOptions;
}

export type { PageRoutes } from './http-wire.js';

export interface HttpEndpoint {
  server: Server;
  url: string;
  /**
   * Stop accepting connections and close the idle ones. With `graceMs`, requests in progress get that long to be
   * answered (a rolling deploy: their clients' next round goes to another instance); without, they are cut now.
   */
  close(options?: { graceMs?: number }): Promise<void>;
}

/**
 * Close `server`, letting requests in progress finish for up to `graceMs`. Connections are closed as soon as they
 * are idle; whatever is still open when the grace period ends is cut.
 */
function closeServer(server: Server, graceMs: number): Promise<void> {
  return new Promise<void>((done) => {
    let force: NodeJS.Timeout | undefined;
    server.close(() => {
      clearTimeout(force);
      done();
    });
    if (graceMs <= 0) {
      server.closeAllConnections();
      return;
    }
    // A connection that answers its last request while we wait goes idle; close it then, not at the deadline.
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    force = setTimeout(() => server.closeAllConnections(), graceMs);
    server.once('close', () => clearInterval(sweep));
  });
}

export class HttpServerTransport {
  private readonly timeouts: { headersTimeout: number; requestTimeout: number };
  private readonly endpoint: McpEndpoint;
  /** What answers before the endpoint: the metadata document, then the pages. */
  private readonly routes: HttpRoute<IncomingMessage, ServerResponse>[] = [];

  constructor(
    private readonly handler: RequestHandler,
    private readonly options: HttpServerTransportOptions = {},
  ) {
    checkIntegerOption('HttpServerTransport', 'maxBodyBytes', options.maxBodyBytes);
    checkIntegerOption('HttpServerTransport', 'maxConnections', options.maxConnections);
    checkIntegerOption('HttpServerTransport', 'headersTimeoutMs', options.headersTimeoutMs, {
      max: MAX_TIMER_MS,
    });
    checkIntegerOption('HttpServerTransport', 'requestTimeoutMs', options.requestTimeoutMs, {
      max: MAX_TIMER_MS,
    });
    const requestTimeout = options.requestTimeoutMs ?? SERVER_DEFAULTS.requestTimeoutMs;
    const headersTimeout =
      options.headersTimeoutMs ?? Math.min(SERVER_DEFAULTS.headersTimeoutMs, requestTimeout);
    if (headersTimeout > requestTimeout) {
      throw new InvalidOptionError(
        `HttpServerTransport: headersTimeoutMs (${headersTimeout}) must not exceed requestTimeoutMs (${requestTimeout}): ` +
          'the head is part of the request',
      );
    }
    if (options.auth && options.authenticate)
      throw new InvalidOptionError('HttpServerTransport: give auth or authenticate, not both');
    this.timeouts = { headersTimeout, requestTimeout };
    const logger = options.logger ?? stderrLogger;
    const originPolicy = defaultOriginPolicy(
      options.host ?? SERVER_DEFAULTS.host,
      options.allowedHosts,
      options.allowedOrigins,
    );
    if (options.auth) this.routes.push(metadataRoute(options.auth));
    if (options.pages) this.routes.push(originChecked(options.pages, originPolicy));
    const authenticate = options.authenticate;
    this.endpoint = new McpEndpoint(handler, {
      path: options.path ?? SERVER_DEFAULTS.path,
      maxBodyBytes: options.maxBodyBytes ?? SERVER_DEFAULTS.maxBodyBytes,
      originPolicy,
      auth: options.auth,
      authenticate: authenticate && ((req) => authenticate(req as IncomingMessage)),
      logger,
      observers: options.observers,
      legacy: options.legacy && new LegacyHttpFront(options.legacy, logger, options.legacyHttp),
    });
  }

  /** A node:http request listener, usable with any node:http server or framework that exposes (req, res). */
  readonly listener = (req: IncomingMessage, res: ServerResponse): void => {
    const pathname = pathnameOf(req.url ?? '/');
    for (const route of this.routes) {
      if (route.handles(pathname)) {
        route.handle(req, res);
        return;
      }
    }
    this.endpoint.serve(req, res, pathname, nodeBodyReader(req));
  };

  /** Start listening; resolves once the port is bound. */
  listen(): Promise<HttpEndpoint> {
    const { headersTimeout, requestTimeout } = this.timeouts;
    const server = createServer(
      {
        keepAliveTimeout: SERVER_DEFAULTS.keepAliveTimeoutMs,
        headersTimeout,
        requestTimeout,
        // node checks these limits on a timer (30 s by default), which would stretch a 10 s limit to 40 s.
        connectionsCheckingInterval: Math.max(25, Math.min(1_000, Math.floor(headersTimeout / 4))),
      },
      this.listener,
    );
    if (this.options.maxConnections !== undefined) server.maxConnections = this.options.maxConnections;
    const host = this.options.host ?? SERVER_DEFAULTS.host;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port ?? 0, host, () => {
        const { port } = server.address() as AddressInfo;
        const shownHost = host.includes(':') ? `[${host}]` : host;
        resolve({
          server,
          url: `http://${shownHost}:${port}${this.endpoint.path}`,
          close: (options = {}) => {
            checkIntegerOption('close', 'graceMs', options.graceMs, { min: 0, max: MAX_TIMER_MS });
            this.endpoint.close();
            // Tasks' background rounds stop here; another instance takes them on once their claims lapse.
            this.handler.close?.();
            return closeServer(server, options.graceMs ?? 0);
          },
        });
      });
    });
  }
}
