// Streamable HTTP transport (2026-07-28) on node:http: one POST endpoint, JSON or per-request SSE responses.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AuthRefusal, type BearerAuth } from '../auth/index.js';
import {
  classifyMessage,
  ErrorCode,
  errorResponse,
  httpStatusForError,
  isJsonObject,
  isLegacyVersion,
  type JsonRpcRequest,
  McpError,
} from '../protocol/index.js';
import type { Principal } from './context.js';
import { SERVER_DEFAULTS } from './defaults.js';
import { closingController, type Logger, stderrLogger } from './environment.js';
import { InvalidOptionError } from './errors.js';
import { HttpExchange, sendJson } from './http-exchange.js';
import { checkOrigin, checkRequestHeaders, defaultOriginPolicy, type OriginPolicy } from './http-guards.js';
import type { LegacyBridge } from './legacy/bridge.js';
import { LegacyHttpFront, type LegacyHttpOptions } from './legacy/http-front.js';
import type { MaybePromise } from './maybe-async.js';
import { refusalOf } from './message.js';
import { checkIntegerOption, MAX_TIMER_MS } from './option-checks.js';
import type { RequestHandler } from './request-handler.js';
import { legacyInitializeError } from './request-meta.js';
import type { RoundObserver } from './round/observer.js';
import { TransportRefusals } from './transport-refusal.js';

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

/** Routes beside the MCP endpoint on the same listener: `BrowserSignIn` is one. */
export interface PageRoutes {
  handles(pathname: string): boolean;
  /** Answer the request; never throws. */
  handle(req: IncomingMessage, res: ServerResponse): void;
}

export interface HttpEndpoint {
  server: Server;
  url: string;
  /**
   * Stop accepting connections and close the idle ones. With `graceMs`, requests in progress get that long to be
   * answered (a rolling deploy: their clients' next round goes to another instance); without, they are cut now.
   */
  close(options?: { graceMs?: number }): Promise<void>;
}

function sendError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  id?: string | number,
): void {
  sendJson(res, status, errorResponse(id, code, message));
}

/**
 * Read the body up to `limit` bytes and hand it to `onBody`; a larger body is answered with 413 and drained without
 * being kept. A callback rather than a promise: this runs for every request.
 */
function readBody(
  req: IncomingMessage,
  res: ServerResponse,
  limit: number,
  onBody: (body: Buffer) => void,
  refused: (reason: string, send: () => void) => void,
): void {
  const tooLarge = () => {
    req.resume();
    refused('body_too_large', () => {
      res.setHeader('connection', 'close');
      sendError(res, 413, ErrorCode.InvalidRequest, `Request body exceeds the limit of ${limit} bytes`);
    });
  };
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    tooLarge();
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let done = false;
  req.on('data', (chunk: Buffer) => {
    if (done) return;
    size += chunk.length;
    if (size > limit) {
      done = true;
      chunks.length = 0;
      tooLarge();
      return;
    }
    chunks.push(chunk);
  });
  req.on('end', () => {
    if (done) return;
    done = true;
    onBody(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
  });
  req.on('error', () => {
    done = true;
  });
}

function acceptsResponse(accept: string | undefined): boolean {
  if (accept === undefined) return true;
  return /application\/json|text\/event-stream|\*\/\*|application\/\*/.test(accept);
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
  private readonly path: string;
  private readonly maxBodyBytes: number;
  private readonly originPolicy: OriginPolicy;
  private readonly timeouts: { headersTimeout: number; requestTimeout: number };
  private draining = false;
  /** Aborted by close(): long-lived requests (subscriptions/listen) answer and end their streams. */
  private readonly closing = closingController();
  private readonly isDraining = (): boolean => this.draining;
  private readonly refusals: TransportRefusals | undefined;
  private readonly legacy: LegacyHttpFront | undefined;

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
    if (options.observers?.length)
      this.refusals = new TransportRefusals(options.observers, options.logger ?? stderrLogger);
    this.path = options.path ?? SERVER_DEFAULTS.path;
    if (options.legacy)
      this.legacy = new LegacyHttpFront(options.legacy, options.logger ?? stderrLogger, options.legacyHttp);
    this.maxBodyBytes = options.maxBodyBytes ?? SERVER_DEFAULTS.maxBodyBytes;
    this.originPolicy = defaultOriginPolicy(
      options.host ?? SERVER_DEFAULTS.host,
      options.allowedHosts,
      options.allowedOrigins,
    );
  }

  /** A node:http request listener, usable with any node:http server or framework that exposes (req, res). */
  readonly listener = (req: IncomingMessage, res: ServerResponse): void => {
    try {
      this.accept(req, res);
    } catch (error) {
      this.failed(res, error);
    }
  };

  // Last line of defence: the process keeps serving whatever happened.
  private failed(res: ServerResponse, error: unknown): void {
    (this.options.logger ?? stderrLogger).error(
      { err: error instanceof Error ? error.stack : String(error) },
      'unexpected transport error',
    );
    sendError(res, 500, ErrorCode.InternalError, 'Internal error');
  }

  /** Who asks comes first: on a server that requires it, an unauthenticated caller learns nothing but 401. */
  private accept(req: IncomingMessage, res: ServerResponse): void {
    const started = this.refusals ? performance.now() : 0;
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const pathname = q < 0 ? url : url.slice(0, q);
    const auth = this.options.auth;
    if (auth?.metadataPaths.includes(pathname)) {
      this.sendMetadata(req, res, auth);
      return;
    }
    if (this.options.pages?.handles(pathname)) {
      // The pages obey the same Host/Origin rules as the endpoint: a DNS-rebinding page must not read them.
      const refused = checkOrigin(req.headers, this.originPolicy);
      if (refused) {
        sendError(res, 403, ErrorCode.InvalidRequest, `Forbidden: ${refused}`);
        return;
      }
      this.options.pages.handle(req, res);
      return;
    }
    if (pathname !== this.path) {
      sendError(res, 404, ErrorCode.InvalidRequest, `Not found: the MCP endpoint is ${this.path}`);
      return;
    }
    let principal: Principal | undefined | Promise<Principal | undefined>;
    try {
      principal = auth
        ? auth.authenticate(req.rawHeaders, url)
        : this.options.authenticate
          ? this.options.authenticate(req)
          : undefined;
    } catch (error) {
      this.refuseAuth(res, error, started);
      return;
    }
    // No await without a promise: every microtask turn counts on this path.
    if (principal instanceof Promise) {
      principal
        .then(
          (p) => this.checkHead(req, res, p, started),
          (error: unknown) => this.refuseAuth(res, error, started),
        )
        .catch((error: unknown) => this.failed(res, error));
      return;
    }
    this.checkHead(req, res, principal, started);
  }

  /** Protected Resource Metadata (RFC 9728): public, cacheable, readable from a browser-based client. */
  private sendMetadata(req: IncomingMessage, res: ServerResponse, auth: BearerAuth): void {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      sendError(res, 405, ErrorCode.InvalidRequest, `Method ${req.method} not allowed: use GET`);
      return;
    }
    const body = auth.metadata;
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'cache-control': 'public, max-age=3600',
      'access-control-allow-origin': '*',
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  /** 401/403/503 with the challenge that tells the client where to get a (better) token. */
  private refuseAuth(res: ServerResponse, error: unknown, started: number): void {
    const refusal =
      error instanceof AuthRefusal
        ? error
        : new AuthRefusal(
            'invalid_token',
            'authenticate_threw',
            `Unauthorized: ${(error as Error)?.message ?? error}`,
            {
              cause: error,
            },
          );
    const logger = this.options.logger ?? stderrLogger;
    logger.info({ reason: refusal.reason, status: refusal.status }, 'request not authenticated');
    const auth = this.options.auth;
    // The body is never read for a caller we do not know: the audit event names no request.
    // A hook's own refusal keeps its message as the reason; ours carry a stable one (`expired`, `no_token`, …).
    const why =
      error instanceof AuthRefusal ? refusal.reason : refusal.message.replace(/^Unauthorized: /, '');
    this.refused(res, undefined, `unauthorized: ${why}`, started, () => {
      res.setHeader('www-authenticate', auth ? auth.challenge(refusal) : 'Bearer');
      if (refusal.status === 503) res.setHeader('retry-after', '5');
      const code = refusal.status === 503 ? ErrorCode.InternalError : ErrorCode.InvalidRequest;
      sendError(res, refusal.status, code, refusal.message);
    });
  }

  /** Checks that need only the request head, then the body. */
  private checkHead(
    req: IncomingMessage,
    res: ServerResponse,
    principal: Principal | undefined,
    started: number,
  ): void {
    const refused = checkOrigin(req.headers, this.originPolicy);
    if (refused) {
      sendError(res, 403, ErrorCode.InvalidRequest, `Forbidden: ${refused}`);
      return;
    }
    if (this.legacy?.claims(req)) {
      this.legacy.handle(req, res, principal, (onBody) =>
        readBody(req, res, this.maxBodyBytes, onBody, (reason, send) =>
          this.refused(res, undefined, reason, started, send),
        ),
      );
      return;
    }
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      sendError(res, 405, ErrorCode.InvalidRequest, `Method ${req.method} not allowed: use POST`);
      return;
    }
    const type = req.headers['content-type'] ?? '';
    if (!/^application\/json\s*(;|$)/i.test(type)) {
      sendError(
        res,
        415,
        ErrorCode.InvalidRequest,
        'Unsupported Media Type: Content-Type must be application/json',
      );
      return;
    }
    if (!acceptsResponse(req.headers.accept)) {
      sendError(
        res,
        406,
        ErrorCode.InvalidRequest,
        'Not Acceptable: Accept must allow application/json and text/event-stream',
      );
      return;
    }
    readBody(
      req,
      res,
      this.maxBodyBytes,
      (body) => {
        try {
          this.process(req, res, body, principal, started)?.catch((error: unknown) =>
            this.failed(res, error),
          );
        } catch (error) {
          this.failed(res, error);
        }
      },
      (reason, send) => this.refused(res, undefined, reason, started, send),
    );
  }

  /** Send a refusal, once the observers (if any) have recorded it. */
  private refused(
    res: ServerResponse,
    request: JsonRpcRequest | undefined,
    reason: string,
    started: number,
    send: () => void,
  ): void {
    if (!this.refusals) {
      send();
      return;
    }
    this.refusals.refuse(request, reason, started, send, () =>
      sendError(res, 500, ErrorCode.InternalError, 'Internal error while recording the refusal', request?.id),
    );
  }

  /** Parse, check the headers against the body, dispatch. A promise only when the answer is not ready at once. */
  private process(
    req: IncomingMessage,
    res: ServerResponse,
    body: Buffer,
    principal: Principal | undefined,
    started: number,
  ): Promise<void> | undefined {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      this.refused(res, undefined, 'parse_error', started, () =>
        sendError(res, 400, ErrorCode.ParseError, 'Parse error: the body is not valid JSON'),
      );
      return;
    }
    const message = classifyMessage(parsed);
    if (message.kind === 'invalid' || message.kind === 'response') {
      const refusal = refusalOf(message);
      this.refused(res, undefined, 'invalid_message', started, () => sendJson(res, 400, refusal));
      return;
    }
    if (message.kind === 'notification') {
      res.writeHead(202).end();
      return;
    }
    const request = message.request;
    // A 2025 client opens with initialize, without a version header or with its own: the bridge answers with a
    // session. A 2026-07-28 request for initialize (it names that version) still gets the removed method's 404.
    if (
      this.legacy &&
      request.method === 'initialize' &&
      (req.headers['mcp-protocol-version'] === undefined ||
        isLegacyVersion(req.headers['mcp-protocol-version'])) &&
      !isJsonObject(request.params?._meta)
    ) {
      this.legacy.initialize(res, request, principal);
      return;
    }
    // A 2025 client (its version in the header, no _meta) that lost or never had its session.
    if (
      this.legacy &&
      isLegacyVersion(req.headers['mcp-protocol-version']) &&
      !isJsonObject(request.params?._meta)
    ) {
      sendError(
        res,
        400,
        ErrorCode.InvalidRequest,
        'Bad Request: the Mcp-Session-Id header is required (send initialize first)',
        request.id,
      );
      return;
    }
    const exchange = new HttpExchange(res, principal, this.isDraining, this.closing.signal);
    let checked: MaybePromise<void>;
    try {
      // A tool's header parameters as this caller finds it: a tool hidden from the caller has none to check.
      checked = checkRequestHeaders(
        req.headers,
        request,
        (tool) => this.handler.headerParams(tool, exchange),
        req.rawHeaders,
      );
    } catch (error) {
      this.headerMismatch(res, request, error, started);
      return;
    }
    if (checked instanceof Promise)
      return checked.then(
        () => this.dispatch(request, exchange),
        (error: unknown) => this.headerMismatch(res, request, error, started),
      );
    return this.dispatch(request, exchange);
  }

  private dispatch(request: JsonRpcRequest, exchange: HttpExchange): Promise<void> | undefined {
    const response = this.handler.handleRequest(request, exchange);
    if (response instanceof Promise) return response.then((r) => exchange.finish(r));
    exchange.finish(response);
    return;
  }

  private headerMismatch(
    res: ServerResponse,
    request: JsonRpcRequest,
    error: unknown,
    started: number,
  ): void {
    // Only a mismatch is the client's fault; a tool lookup that failed is ours (500, logged), and fails closed.
    if (!(error instanceof McpError)) throw error;
    // A legacy client's handshake lacks the modern headers: the same error, plus what its user needs to know.
    const e = request.method === 'initialize' ? legacyInitializeError(request.params, error) : error;
    this.refused(res, request, `header_mismatch: ${e.message}`, started, () =>
      sendJson(res, httpStatusForError(e.code), errorResponse(request.id, e.code, e.message, e.data)),
    );
  }

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
          url: `http://${shownHost}:${port}${this.path}`,
          close: (options = {}) => {
            checkIntegerOption('close', 'graceMs', options.graceMs, { min: 0, max: MAX_TIMER_MS });
            this.draining = true;
            this.closing.abort();
            // A 2025 client's open streams are not idle; they end now and the client resumes with its session.
            this.legacy?.close();
            // Tasks' background rounds stop here; another instance takes them on once their claims lapse.
            this.handler.close?.();
            return closeServer(server, options.graceMs ?? 0);
          },
        });
      });
    });
  }
}
