// The MCP endpoint over any wire (node's request and response, or a fetch Request behind fetch-wire.ts): bearer
// auth first, Host/Origin, the 2025 front, then the 2026-07-28 checks, the body, and the dispatcher.
import { AuthRefusal, type BearerAuth } from '../../auth/index.js';
import {
  classifyMessage,
  ErrorCode,
  errorResponse,
  httpStatusForError,
  isJsonObject,
  isLegacyVersion,
  type JsonRpcRequest,
  McpError,
} from '../../protocol/index.js';
import type { Principal } from '../context.js';
import { closingController, type Logger, stderrLogger } from '../environment.js';
import { HttpExchange, sendJson } from '../http-exchange.js';
import { checkOrigin, checkRequestHeaders, type OriginPolicy } from '../http-guards.js';
import type { BodyReader, WireRequest, WireResponse } from '../http-wire.js';
import type { LegacyHttpFront } from '../legacy/http-front.js';
import type { MaybePromise } from '../maybe-async.js';
import { refusalOf } from '../message.js';
import type { RequestHandler } from '../request-handler.js';
import { legacyInitializeError } from '../request-meta.js';
import type { RoundObserver } from '../round/observer.js';
import { TransportRefusals } from '../transport-refusal.js';

export interface McpEndpointOptions {
  path: string;
  /** Largest accepted request body in bytes; larger bodies get 413 and are not kept. */
  maxBodyBytes: number;
  originPolicy: OriginPolicy;
  /** The bearer check (`auth`) or the caller's own (`authenticate`), before anything else is read. */
  auth: BearerAuth | undefined;
  authenticate: ((req: WireRequest) => MaybePromise<Principal | undefined>) | undefined;
  logger: Logger | undefined;
  observers: readonly RoundObserver[] | undefined;
  legacy: LegacyHttpFront | undefined;
}

export function sendError(
  res: WireResponse,
  status: number,
  code: number,
  message: string,
  id?: string | number,
): void {
  sendJson(res, status, errorResponse(id, code, message));
}

function acceptsResponse(accept: string | string[] | undefined): boolean {
  if (accept === undefined) return true;
  return /application\/json|text\/event-stream|\*\/\*|application\/\*/.test(String(accept));
}

export class McpEndpoint {
  private draining = false;
  /** Aborted by close(): long-lived requests (subscriptions/listen) answer and end their streams. */
  private readonly closing = closingController();
  private readonly isDraining = (): boolean => this.draining;
  private readonly refusals: TransportRefusals | undefined;
  private readonly logger: Logger;

  constructor(
    private readonly handler: RequestHandler,
    private readonly options: McpEndpointOptions,
  ) {
    this.logger = options.logger ?? stderrLogger;
    if (options.observers?.length) this.refusals = new TransportRefusals(options.observers, this.logger);
  }

  get path(): string {
    return this.options.path;
  }

  /** Stop: answers ask for the connection to close, long-lived requests end, the 2025 streams end. */
  close(): void {
    this.draining = true;
    this.closing.abort();
    // A 2025 client's open streams are not idle; they end now and the client resumes with its session.
    this.options.legacy?.close();
  }

  /** Answer one request on `pathname`; never throws. */
  serve(req: WireRequest, res: WireResponse, pathname: string, readBody: BodyReader): void {
    try {
      this.accept(req, res, pathname, readBody);
    } catch (error) {
      this.failed(res, error);
    }
  }

  // Last line of defence: the process keeps serving whatever happened.
  failed(res: WireResponse, error: unknown): void {
    this.logger.error(
      { err: error instanceof Error ? error.stack : String(error) },
      'unexpected transport error',
    );
    sendError(res, 500, ErrorCode.InternalError, 'Internal error');
  }

  /** Who asks comes first: on a server that requires it, an unauthenticated caller learns nothing but 401. */
  private accept(req: WireRequest, res: WireResponse, pathname: string, readBody: BodyReader): void {
    const started = this.refusals ? performance.now() : 0;
    if (pathname !== this.options.path) {
      sendError(res, 404, ErrorCode.InvalidRequest, `Not found: the MCP endpoint is ${this.options.path}`);
      return;
    }
    const { auth, authenticate } = this.options;
    let principal: MaybePromise<Principal | undefined>;
    try {
      principal = auth
        ? auth.authenticate(req.rawHeaders, req.url ?? '/')
        : authenticate
          ? authenticate(req)
          : undefined;
    } catch (error) {
      this.refuseAuth(res, error, started);
      return;
    }
    // No await without a promise: every microtask turn counts on this path.
    if (principal instanceof Promise) {
      principal
        .then(
          (p) => this.checkHead(req, res, p, started, readBody),
          (error: unknown) => this.refuseAuth(res, error, started),
        )
        .catch((error: unknown) => this.failed(res, error));
      return;
    }
    this.checkHead(req, res, principal, started, readBody);
  }

  /** 401/403/503 with the challenge that tells the client where to get a (better) token. */
  private refuseAuth(res: WireResponse, error: unknown, started: number): void {
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
    this.logger.info({ reason: refusal.reason, status: refusal.status }, 'request not authenticated');
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
    req: WireRequest,
    res: WireResponse,
    principal: Principal | undefined,
    started: number,
    readBody: BodyReader,
  ): void {
    const refused = checkOrigin(req.headers, this.options.originPolicy);
    if (refused) {
      sendError(res, 403, ErrorCode.InvalidRequest, `Forbidden: ${refused}`);
      return;
    }
    const tooLarge = () =>
      this.refused(res, undefined, 'body_too_large', started, () => {
        res.setHeader('connection', 'close');
        sendError(
          res,
          413,
          ErrorCode.InvalidRequest,
          `Request body exceeds the limit of ${this.options.maxBodyBytes} bytes`,
        );
      });
    const legacy = this.options.legacy;
    if (legacy?.claims(req)) {
      legacy.handle(req, res, principal, (onBody) => readBody(this.options.maxBodyBytes, onBody, tooLarge));
      return;
    }
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      sendError(res, 405, ErrorCode.InvalidRequest, `Method ${req.method} not allowed: use POST`);
      return;
    }
    const type = req.headers['content-type'] ?? '';
    if (!/^application\/json\s*(;|$)/i.test(String(type))) {
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
      this.options.maxBodyBytes,
      (body) => {
        try {
          this.process(req, res, body, principal, started)?.catch((error: unknown) =>
            this.failed(res, error),
          );
        } catch (error) {
          this.failed(res, error);
        }
      },
      tooLarge,
    );
  }

  /** Send a refusal, once the observers (if any) have recorded it. */
  private refused(
    res: WireResponse,
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
    req: WireRequest,
    res: WireResponse,
    body: string,
    principal: Principal | undefined,
    started: number,
  ): Promise<void> | undefined {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
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
      res.writeHead(202);
      res.end();
      return;
    }
    const request = message.request;
    const legacy = this.options.legacy;
    const version = req.headers['mcp-protocol-version'];
    // A 2025 client opens with initialize, without a version header or with its own: the bridge answers with a
    // session. A 2026-07-28 request for initialize (it names that version) still gets the removed method's 404.
    if (
      legacy &&
      request.method === 'initialize' &&
      (version === undefined || isLegacyVersion(version)) &&
      !isJsonObject(request.params?._meta)
    ) {
      legacy.initialize(res, request, principal);
      return;
    }
    // A 2025 client (its version in the header, no _meta) that lost or never had its session.
    if (legacy && isLegacyVersion(version) && !isJsonObject(request.params?._meta)) {
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
    exchange.traceHeaders = req.headers;
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

  private headerMismatch(res: WireResponse, request: JsonRpcRequest, error: unknown, started: number): void {
    // Only a mismatch is the client's fault; a tool lookup that failed is ours (500, logged), and fails closed.
    if (!(error instanceof McpError)) throw error;
    // A legacy client's handshake lacks the modern headers: the same error, plus what its user needs to know.
    const e = request.method === 'initialize' ? legacyInitializeError(request.params, error) : error;
    this.refused(res, request, `header_mismatch: ${e.message}`, started, () =>
      sendJson(res, httpStatusForError(e.code), errorResponse(request.id, e.code, e.message, e.data)),
    );
  }
}
