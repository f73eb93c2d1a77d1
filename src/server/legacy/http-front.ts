// The 2025 Streamable HTTP transport (2025-03-26 … 2025-11-25 basic/transports.mdx) on the same endpoint as the
// 2026-07-28 one: sessions in Mcp-Session-Id, POST answered with JSON or an SSE stream, GET for the standalone
// stream and for resuming with Last-Event-ID, DELETE to end a session, and POSTed answers to the server's own
// requests. HttpServerTransport hands it the requests that belong to a 2025 client, after auth and Origin checks.
import { randomBytes } from 'node:crypto';
import {
  classifyMessage,
  ErrorCode,
  errorResponse,
  isLegacyVersion,
  type JsonObject,
  type JsonRpcRequest,
  MRTR_METHODS,
  primesStreams,
  RoundRefused,
} from '../../protocol/index.js';
import type { Principal } from '../context.js';
import type { Logger } from '../environment.js';
import { sendJson } from '../http-exchange.js';
import type { WireRequest, WireResponse } from '../http-wire.js';
import type { LegacyBridge } from './bridge.js';
import { EventStream } from './event-stream.js';
import type { LegacySession } from './session.js';

const SESSION_HEADER = 'mcp-session-id';
const FLOW_METHODS: ReadonlySet<string> = new Set(MRTR_METHODS);
/** How long a finished stream's events stay for a client that reconnects late. */
const KEEP_FINISHED_MS = 5 * 60 * 1000;
/** Most streams kept on one instance; the oldest finished ones go first. */
const MAX_STREAMS = 10_000;

export interface LegacyHttpOptions {
  /** The `retry` field of priming events: how long a client waits before reconnecting (default 1 s). */
  retryMs?: number;
  /**
   * Close a POST's SSE stream that is still open after this long (SSE polling, 2025-11-25 clients only): the client
   * reconnects with Last-Event-ID and the request goes on. Keeps long calls from holding a connection through
   * proxies with idle limits. Default: never.
   */
  pollAfterMs?: number;
}

type ReadBody = (onBody: (body: string) => void) => void;

export class LegacyHttpFront {
  private readonly streams = new Map<string, EventStream>();
  private streamPrefix: string | undefined;
  private streamCount = 0;
  /** The standalone GET stream of each session on this instance. */
  private readonly standalone = new Map<string, WireResponse>();
  /** Requests in progress, by session key and request id, for notifications/cancelled. */
  private readonly inFlight = new Map<string, AbortController>();
  private readonly retryMs: number;
  private readonly pollAfterMs: number | undefined;

  constructor(
    private readonly bridge: LegacyBridge,
    private readonly logger: Logger,
    options: LegacyHttpOptions = {},
  ) {
    this.retryMs = options.retryMs ?? 1000;
    this.pollAfterMs = options.pollAfterMs;
  }

  /**
   * A 2025 client's request, told from the head alone: it names a session, or it is a GET or DELETE in a 2025
   * version (which 2026-07-28 does not have). A POST without a session goes the usual way: an initialize there opens
   * one (`initialize`), anything else meets the 2026-07-28 checks.
   */
  claims(req: WireRequest): boolean {
    if (req.headers[SESSION_HEADER] !== undefined) return true;
    return req.method !== 'POST' && isLegacyVersion(req.headers['mcp-protocol-version']);
  }

  /** POST, GET or DELETE of a claimed request; never throws. */
  handle(req: WireRequest, res: WireResponse, principal: Principal | undefined, readBody: ReadBody): void {
    const method = req.method;
    if (method !== 'POST' && method !== 'GET' && method !== 'DELETE') {
      res.setHeader('allow', 'GET, POST, DELETE');
      refuse(res, 405, `Method ${method} not allowed: use POST, GET or DELETE`);
      return;
    }
    if (method === 'POST') {
      const type = req.headers['content-type'] ?? '';
      if (!/^application\/json\s*(;|$)/i.test(String(type))) {
        refuse(res, 415, 'Unsupported Media Type: Content-Type must be application/json');
        return;
      }
      readBody((body) => this.post(req, res, body, principal).catch((e: unknown) => this.failed(res, e)));
      return;
    }
    if (method === 'GET' && !/text\/event-stream|\*\/\*/.test(String(req.headers.accept ?? ''))) {
      refuse(res, 406, 'Not Acceptable: a GET must accept text/event-stream');
      return;
    }
    this.withSession(req, res, principal)
      .then((session) => {
        if (!session) return;
        if (method === 'DELETE') return this.end(res, session);
        this.get(req, res, session);
      })
      .catch((e: unknown) => this.failed(res, e));
  }

  /** An initialize POSTed without a session: the handshake that opens one. */
  initialize(res: WireResponse, request: JsonRpcRequest, principal: Principal | undefined): void {
    this.bridge
      .initialize(request, principal)
      .then(({ response, session }) => {
        if (session) res.setHeader(SESSION_HEADER, session.id);
        sendJson(res, 'error' in response ? 400 : 200, response);
      })
      .catch((e: unknown) => this.failed(res, e));
  }

  /** Stop: every stream ends (clients reconnect elsewhere with their session). */
  close(): void {
    for (const s of this.streams.values()) s.close();
    this.streams.clear();
    for (const r of this.standalone.values()) r.end();
    this.standalone.clear();
  }

  private async post(
    req: WireRequest,
    res: WireResponse,
    body: string,
    principal: Principal | undefined,
  ): Promise<void> {
    let message: unknown;
    try {
      message = JSON.parse(body);
    } catch {
      refuse(res, 400, 'Parse error: the body is not valid JSON', ErrorCode.ParseError);
      return;
    }
    const classified = classifyMessage(message);
    if (classified.kind === 'invalid') {
      refuse(res, 400, `Invalid Request: ${classified.reason}`, ErrorCode.InvalidRequest, classified.id);
      return;
    }
    if (
      classified.kind === 'request' &&
      classified.request.method === 'initialize' &&
      req.headers[SESSION_HEADER] === undefined
    ) {
      return this.initialize(res, classified.request, principal);
    }
    const session = await this.withSession(req, res, principal);
    if (!session) return;
    if (classified.kind === 'response') {
      // The client's answer to one of our requests, maybe to one another instance sent.
      if (await this.bridge.deliver(session, classified.response as unknown as JsonObject, principal)) {
        res.writeHead(202);
        res.end();
        return;
      }
      refuse(
        res,
        404,
        `No request of this session waits for an answer with id ${JSON.stringify(classified.response.id)} (already answered, timed out, or its server is gone)`,
      );
      return;
    }
    if (classified.kind === 'notification') {
      const { method, params } = classified.notification;
      if (method === 'notifications/cancelled') {
        this.inFlight.get(`${session.key} ${String(params?.requestId)}`)?.abort();
      }
      res.writeHead(202);
      res.end();
      return;
    }
    const { request } = classified;
    const { id } = request;
    res.setHeader(SESSION_HEADER, session.id);
    const flight = `${session.key} ${String(id)}`;
    const abort = new AbortController();
    this.inFlight.set(flight, abort);
    try {
      if (!FLOW_METHODS.has(request.method)) {
        const response = await this.bridge.handle(request, session, principal, {
          send: () => {},
          signal: abort.signal,
        });
        sendJson(res, 200, response);
        return;
      }
      // A principal past its share of waiting questions is slowed before a stream opens, so that 429 and
      // Retry-After are the answer's status and headers (the other refusals arrive on the stream, as before).
      const slowed = this.bridge.admitFlow(session, principal);
      if (slowed instanceof RoundRefused) {
        for (const [name, value] of Object.entries(slowed.httpHeaders ?? {})) res.setHeader(name, value);
        sendJson(res, slowed.httpStatus ?? 429, errorResponse(id, slowed.code, slowed.message, slowed.data));
        return;
      }
      const stream = this.openStream(session);
      const primes = primesStreams(session.protocolVersion);
      stream.attach(res, {}, primes ? this.retryMs : undefined);
      const poll =
        primes && this.pollAfterMs !== undefined
          ? setTimeout(() => stream.disconnect(), this.pollAfterMs)
          : undefined;
      const response = await this.bridge.handle(request, session, principal, {
        send: (m) => stream.send(m),
        signal: abort.signal,
      });
      clearTimeout(poll);
      stream.finish(response);
      this.expire(stream);
    } finally {
      this.inFlight.delete(flight);
    }
  }

  private get(req: WireRequest, res: WireResponse, session: LegacySession): void {
    const last = req.headers['last-event-id'];
    const headers = { [SESSION_HEADER]: session.id };
    if (typeof last === 'string') {
      const cut = last.lastIndexOf('_');
      const stream = this.streams.get(last.slice(0, cut));
      const after = Number(last.slice(cut + 1));
      if (!stream || stream.session !== session.key || !Number.isInteger(after) || after < 0) {
        refuse(res, 404, `No stream to resume from event ${JSON.stringify(last)} on this server`);
        return;
      }
      if (!stream.resume(res, headers, after)) {
        refuse(res, 404, `The events after ${JSON.stringify(last)} are no longer kept`);
        return;
      }
      return;
    }
    if (this.standalone.has(session.key)) {
      refuse(res, 409, 'Conflict: this session already has a standalone SSE stream open');
      return;
    }
    // The standalone stream: the server sends nothing unprompted today, but clients expect to be able to open it.
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers });
    if (primesStreams(session.protocolVersion)) res.write(`retry: ${this.retryMs}\n\n`);
    else res.flushHeaders();
    this.standalone.set(session.key, res);
    res.on('close', () => {
      if (this.standalone.get(session.key) === res) this.standalone.delete(session.key);
    });
  }

  private async end(res: WireResponse, session: LegacySession): Promise<void> {
    await this.bridge.endSession(session);
    this.standalone.get(session.key)?.end();
    this.standalone.delete(session.key);
    for (const [id, s] of this.streams) {
      if (s.session !== session.key) continue;
      s.close();
      this.streams.delete(id);
    }
    res.writeHead(200);
    res.end();
  }

  /** The session the request names, or undefined once refused (400 without one, 404 unknown, 403 another's). */
  private async withSession(
    req: WireRequest,
    res: WireResponse,
    principal: Principal | undefined,
  ): Promise<LegacySession | undefined> {
    const id = req.headers[SESSION_HEADER];
    if (typeof id !== 'string' || id === '') {
      refuse(res, 400, 'Bad Request: the Mcp-Session-Id header is required (send initialize first)');
      return undefined;
    }
    const session = await this.bridge.openSession(id, principal);
    if (session === 'forbidden') {
      refuse(res, 403, 'Forbidden: this session belongs to another caller');
      return undefined;
    }
    if (session === 'not_found') {
      refuse(res, 404, 'Session not found: it ended or expired; send initialize to start a new one');
      return undefined;
    }
    const version = req.headers['mcp-protocol-version'];
    if (typeof version === 'string' && version !== session.protocolVersion) {
      refuse(
        res,
        400,
        `Bad Request: MCP-Protocol-Version ${JSON.stringify(version.slice(0, 64))} is not the version this session negotiated (${session.protocolVersion})`,
      );
      return undefined;
    }
    return session;
  }

  private openStream(session: LegacySession): EventStream {
    if (this.streams.size >= MAX_STREAMS) {
      for (const [id, s] of this.streams) {
        if (!s.done) continue;
        this.streams.delete(id);
        if (this.streams.size < MAX_STREAMS) break;
      }
    }
    const stream = new EventStream(this.nextStreamId(), session.key);
    this.streams.set(stream.id, stream);
    return stream;
  }

  /**
   * A new stream's id: this instance's random prefix (drawn on first use) and a count. It need not be unguessable:
   * only the session that owns a stream may resume it, and the session id is the secret. The prefix keeps two
   * instances of one fleet from naming two streams alike.
   */
  private nextStreamId(): string {
    this.streamPrefix ??= randomBytes(6).toString('base64url');
    return `${this.streamPrefix}-${(++this.streamCount).toString(36)}`;
  }

  /** A finished stream stays resumable for a while, then goes. */
  private expire(stream: EventStream): void {
    const timer = setTimeout(() => this.streams.delete(stream.id), KEEP_FINISHED_MS);
    timer.unref?.();
  }

  private failed(res: WireResponse, error: unknown): void {
    this.logger.error(
      { err: error instanceof Error ? error.stack : String(error) },
      'unexpected legacy transport error',
    );
    if (!res.headersSent) refuse(res, 500, 'Internal error', ErrorCode.InternalError);
    else res.end();
  }
}

function refuse(
  res: WireResponse,
  status: number,
  message: string,
  code: number = ErrorCode.InvalidRequest,
  id?: string | number,
): void {
  if (res.headersSent) return;
  sendJson(res, status, errorResponse(id, code, message));
}
