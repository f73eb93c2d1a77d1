// Streamable HTTP (2026-07-28) client transport on node:http: one keep-alive POST per request, the standard
// headers on every POST, and JSON or per-request SSE responses.

import http from 'node:http';
import https from 'node:https';
import { context, propagation } from '@opentelemetry/api';
import {
  type ClassifiedMessage,
  classifyMessage,
  encodeHeaderValue,
  HEADER_METHOD,
  HEADER_NAME,
  HEADER_PROTOCOL_VERSION,
  InvalidOptionError,
  type JsonObject,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  META_PROTOCOL_VERSION,
  nameHeaderField,
} from '../protocol/index.js';
import { untilAborted } from '../protocol/internal.js';
import { bearerDigest } from './bearer-digest.js';
import { CLIENT_DEFAULTS } from './driver.js';
import { abortError, ProtocolViolation, SessionExpired, TransportFailure } from './errors.js';
import { describeNetworkError } from './network-errors.js';
import type { OAuthClient } from './oauth/oauth-client.js';
import { SseParser } from './sse.js';
import {
  type ClientTransport,
  type LegacySessionWire,
  responseMatches,
  type TransportRequest,
} from './transport.js';

export interface HttpClientTransportOptions {
  /** The MCP endpoint, e.g. `http://127.0.0.1:3000/mcp`. */
  url: string | URL;
  /** Sent as `Authorization: Bearer <token>`; a function is called before every request. */
  token?: string | (() => string | Promise<string>);
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  /** Largest response body (JSON) or SSE event accepted. Default 16 MiB. */
  maxResponseBytes?: number;
  /** Bring your own agent; by default a keep-alive agent owned (and destroyed on close) by the transport. */
  agent?: http.Agent;
  /** The default agent closes a pooled socket idle this long instead of reusing it (default 4 s). */
  idleSocketMs?: number;
  /** OAuth 2.1: tokens for this server, and what to do on its 401 or 403 `insufficient_scope` (sign in, step up). */
  auth?: OAuthClient;
}

/** How one request's response is delivered, whichever stream (the POST's, or a resumed GET) carries it. */
interface Answer {
  done: (r: JsonRpcResponse) => void;
  fail: (e: Error) => void;
  isSettled: () => boolean;
  follow: (req: http.ClientRequest) => void;
}

/** A 401 or 403 to answer with OAuth before the request is sent again (internal: `send` turns it into a TransportFailure). */
class AuthChallenge extends Error {
  constructor(
    readonly status: number,
    readonly wwwAuthenticate: string | undefined,
  ) {
    super(`HTTP ${status}`);
  }
}

/**
 * A keep-alive agent for `url` (http or https): sockets reused across requests, and a pooled socket closed once idle
 * `idleSocketMs` (default 4 s). Share one between transports to the same server, and their requests share sockets.
 */
export function keepAliveAgent(
  url: URL,
  options: { idleSocketMs?: number | undefined; maxSockets?: number } = {},
): http.Agent {
  const AgentClass = url.protocol === 'https:' ? https.Agent : http.Agent;
  // The idle limit is a socket timeout: the agent closes a pooled socket that reaches it (a socket in use is only
  // told, and a long answer goes on). Without it, a client whose event loop was busy as the server closed an idle
  // socket wrote its next request on that socket and lost it to ECONNRESET.
  return new AgentClass({
    keepAlive: true,
    maxSockets: options.maxSockets ?? Number.POSITIVE_INFINITY,
    timeout: options.idleSocketMs ?? CLIENT_DEFAULTS.idleSocketMs,
  });
}

/** The Mcp-Name header's value: the body field the method names (streamable-http.mdx; tasks.md "Routing Headers"). */
function nameFor(message: JsonRpcRequest): string | undefined {
  const field = nameHeaderField(message.method);
  const value = field === undefined ? undefined : message.params?.[field];
  return typeof value === 'string' ? value : undefined;
}

export class HttpClientTransport implements ClientTransport {
  readonly kind = 'http' as const;
  readonly label: string;
  readonly endpoint: string;
  private readonly url: URL;
  private readonly agent: http.Agent;
  private readonly ownsAgent: boolean;
  private readonly options: HttpClientTransportOptions;
  private readonly maxBytes: number;
  private closed = false;

  constructor(options: HttpClientTransportOptions) {
    if (!URL.canParse(options.url))
      throw new InvalidOptionError(`MCP endpoint ${JSON.stringify(String(options.url))} is not a URL`);
    this.url = new URL(options.url);
    if (this.url.protocol !== 'http:' && this.url.protocol !== 'https:')
      throw new InvalidOptionError(`MCP endpoint must be an http(s) URL, got ${this.url.protocol}`);
    this.label = this.url.href;
    this.endpoint = this.url.host;
    this.options = options;
    this.maxBytes = options.maxResponseBytes ?? CLIENT_DEFAULTS.maxResponseBytes;
    this.ownsAgent = options.agent === undefined;
    const idle = options.idleSocketMs;
    if (idle !== undefined && !(Number.isInteger(idle) && idle > 0 && idle <= 0x7fff_ffff))
      throw new InvalidOptionError(`idleSocketMs must be a whole number of ms above 0, got ${String(idle)}`);
    this.agent = options.agent ?? keepAliveAgent(this.url, { idleSocketMs: idle, maxSockets: 64 });
  }

  /** The legacy (2025) session this transport carries, once `legacy.beginSession` was called. */
  private session: { version: string; id: string | undefined } | undefined;

  /** Legacy sessions: initialize + Mcp-Session-Id, server requests on the stream, resume with Last-Event-ID. */
  readonly legacy: LegacySessionWire = {
    beginSession: (version) => {
      this.session = { version, id: this.session?.id };
    },
    resetSession: () => {
      this.session = undefined;
    },
    notify: async (notification, signal) => {
      const headers = await this.baseHeaders(notification.method);
      const body = Buffer.from(JSON.stringify(notification), 'utf8');
      headers['content-length'] = String(body.length);
      await new Promise<void>((resolve, reject) => {
        const req = this.lib.request(this.url, { method: 'POST', headers, agent: this.agent, signal });
        req.on('error', (error) => reject(new TransportFailure(describeNetworkError(this.url, error))));
        req.on('response', (res) => {
          res.resume();
          res.on('end', () =>
            (res.statusCode ?? 0) < 300
              ? resolve()
              : reject(
                  new TransportFailure(`HTTP ${res.statusCode} for ${notification.method}`, res.statusCode),
                ),
          );
        });
        req.end(body);
      });
    },
    listen: (answer) => {
      this.standalone = answer;
      this.openStream(undefined, 0);
    },
  };

  /** Answers requests the server sends on the session's GET stream (legacy sessions). */
  private standalone: ((request: JsonRpcRequest) => Promise<JsonRpcResponse>) | undefined;
  private stream: http.ClientRequest | undefined;

  /** Notifications a legacy session's GET stream carries (a list changed): they belong to no request. */
  onStreamNotification: ((notification: JsonRpcNotification) => void) | undefined;
  /**
   * Told how a legacy session's GET stream goes: `open` each time the server accepts it, `refused` when the server
   * offers none (no session, a status other than 200), `ended` when it closed more often than it is resumed.
   */
  onStreamState: ((state: 'open' | 'refused' | 'ended') => void) | undefined;

  /**
   * The legacy session's standalone stream (GET): server requests and notifications outside any call. A server that
   * offers none answers 405; a stream that ends is resumed with Last-Event-ID, a bounded number of times.
   */
  private openStream(lastEventId: string | undefined, attempt: number): void {
    if (this.closed) return;
    if (!this.session?.id || attempt > CLIENT_DEFAULTS.maxResumes) {
      this.onStreamState?.(this.session?.id ? 'ended' : 'refused');
      return;
    }
    void this.baseHeaders('').then((headers) => {
      if (this.closed) return;
      delete headers['content-type'];
      headers.accept = 'text/event-stream';
      if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
      const req = this.lib.request(this.url, { method: 'GET', headers, agent: this.agent });
      this.stream = req;
      req.on('error', () => {
        if (!this.closed) this.onStreamState?.('ended');
      });
      req.on('response', (res) => {
        const type = String(res.headers['content-type'] ?? '').toLowerCase();
        if ((res.statusCode ?? 0) !== 200 || !type.startsWith('text/event-stream')) {
          res.resume();
          this.onStreamState?.('refused');
          return;
        }
        this.onStreamState?.('open');
        const parser = new SseParser((event) => {
          let m: ClassifiedMessage;
          try {
            m = classifyMessage(JSON.parse(event.data));
          } catch {
            return; // Not JSON: nothing on this stream belongs to a call, so nothing fails with it.
          }
          if (m.kind === 'notification') this.onStreamNotification?.(m.notification);
          if (m.kind !== 'request') return;
          const answer = this.standalone;
          if (answer)
            void answer(m.request).then(
              (reply) => this.reply(reply),
              () => undefined,
            );
        }, this.maxBytes);
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          try {
            parser.push(chunk);
          } catch {
            res.destroy();
          }
        });
        res.on('end', () => {
          const wait = Math.min(
            parser.retryMs ?? CLIENT_DEFAULTS.resumeDelayMs,
            CLIENT_DEFAULTS.maxResumeDelayMs,
          );
          setTimeout(() => this.openStream(parser.lastEventId ?? lastEventId, attempt + 1), wait).unref();
        });
        res.on('error', () => {});
      });
      req.end();
    });
  }

  private get lib(): typeof http | typeof https {
    return this.url.protocol === 'https:' ? https : http;
  }

  /** Headers every request carries: the legacy session's, or the 2026-07-28 standard ones. */
  private async baseHeaders(method: string, signal?: AbortSignal): Promise<Record<string, string>> {
    const headers: Record<string, string> = {
      ...this.options.headers,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    if (this.session) {
      headers[HEADER_PROTOCOL_VERSION] = this.session.version;
      if (this.session.id !== undefined) headers['mcp-session-id'] = this.session.id;
    } else headers[HEADER_METHOD] = method;
    const token =
      typeof this.options.token === 'function'
        ? await this.options.token()
        : (this.options.token ?? (await this.options.auth?.accessToken(this.url, signal)));
    if (token) headers.authorization = `Bearer ${token}`;
    return headers;
  }

  async send(request: TransportRequest): Promise<JsonRpcResponse> {
    const auth = this.options.auth;
    let stepUps = 0;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.sendOnce(request);
      } catch (error) {
        // Sign in on a 401 (once per request), step up on a 403 insufficient_scope (up to the OAuth client's limit).
        if (!(error instanceof AuthChallenge) || !auth || (error.status === 401 && attempt > stepUps))
          throw error instanceof AuthChallenge
            ? new TransportFailure(`HTTP ${error.status} from ${this.label}: not authorized`, error.status)
            : error;
        // The sign-in waits for a person; the call's signal (its deadline, Ctrl-C) still ends it.
        await untilAborted(
          auth.handleChallenge(this.url, error.status, error.wwwAuthenticate, stepUps, request.signal),
          request.signal,
          (signal) => {
            throw abortError(signal);
          },
        );
        if (error.status === 403) stepUps++;
      }
    }
  }

  private async sendOnce(request: TransportRequest): Promise<JsonRpcResponse> {
    if (this.closed) throw new TransportFailure('transport is closed');
    const { message, signal } = request;
    if (signal?.aborted) throw abortError(signal);
    const headers = await this.baseHeaders(message.method, signal);
    if (!this.session) {
      const meta = message.params?._meta as JsonObject | undefined;
      const version = meta?.[META_PROTOCOL_VERSION];
      if (typeof version === 'string') headers[HEADER_PROTOCOL_VERSION] = version;
      const name = nameFor(message);
      if (name !== undefined) headers[HEADER_NAME] = encodeHeaderValue(name);
    }
    for (const [k, v] of Object.entries(request.headers ?? {})) headers[k.toLowerCase()] = v;
    // The active trace context (a gateway's upstream round, an app's own span) goes with the request.
    propagation.inject(context.active(), headers);
    const body = Buffer.from(JSON.stringify(message), 'utf8');
    headers['content-length'] = String(body.length);
    return this.post(body, headers, request);
  }

  private post(
    body: Buffer,
    headers: Record<string, string>,
    request: TransportRequest,
  ): Promise<JsonRpcResponse> {
    const { signal } = request;
    return new Promise<JsonRpcResponse>((resolve, reject) => {
      let settled = false;
      let current: http.ClientRequest | undefined;
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener('abort', onAbort);
        fn();
      };
      const fail = (error: Error) =>
        settle(() => {
          // A 401 says which token it refused (as a digest): the caller may hold a newer one by the time it hears.
          const bearer = headers.authorization;
          if (error instanceof TransportFailure && error.httpStatus === 401 && bearer?.startsWith('Bearer '))
            error.refusedBearer = bearerDigest(bearer.slice('Bearer '.length));
          reject(error);
        });
      const done = (response: JsonRpcResponse) => settle(() => resolve(response));
      const onAbort = () => {
        fail(abortError(signal as AbortSignal));
        // Closing the request (and its response stream) is the cancellation signal on Streamable HTTP.
        current?.destroy();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const answer: Answer = {
        done,
        fail,
        isSettled: () => settled,
        // A resumed stream's GET is aborted like the POST it continues.
        follow: (req) => {
          current = req;
        },
      };
      current = this.lib.request(this.url, { method: 'POST', headers, agent: this.agent });
      this.handle(current, request, answer, 0);
      current.end(body);
    });
  }

  private handle(req: http.ClientRequest, request: TransportRequest, answer: Answer, resumes: number): void {
    const { message } = request;
    const { done, fail } = answer;
    req.on('error', (error) => fail(new TransportFailure(describeNetworkError(this.url, error))));
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      request.onHttpStatus?.(status);
      const type = String(res.headers['content-type'] ?? '').toLowerCase();
      const sessionId = res.headers['mcp-session-id'];
      // A legacy server assigns its session on the initialize response; later ones carry the same id.
      if (this.session && typeof sessionId === 'string' && this.session.id === undefined)
        this.session.id = sessionId;
      res.on('error', (error) =>
        fail(new TransportFailure(`response from ${this.label} broke: ${error.message}`)),
      );
      res.on('aborted', () => fail(new TransportFailure(`response from ${this.label} was cut off`)));
      if (this.options.auth && (status === 401 || status === 403)) {
        res.resume();
        const header = res.headers['www-authenticate'];
        fail(new AuthChallenge(status, Array.isArray(header) ? header.join(', ') : header));
        return;
      }
      if (status === 404 && this.session?.id !== undefined) {
        res.resume();
        fail(new SessionExpired(`the session at ${this.label} has ended (HTTP 404)`));
        return;
      }
      if (type.startsWith('text/event-stream') && status >= 200 && status < 300) {
        this.readSse(res, request, answer, resumes);
        return;
      }
      this.readJson(res, status, message, done, fail);
    });
  }
  private readJson(
    res: http.IncomingMessage,
    status: number,
    message: JsonRpcRequest,
    done: (r: JsonRpcResponse) => void,
    fail: (e: Error) => void,
  ): void {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > this.maxBytes) {
        fail(new ProtocolViolation(`response body larger than ${this.maxBytes} bytes`));
        res.destroy();
        return;
      }
      chunks.push(chunk);
    });
    res.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      if (text.trim() === '') {
        if (status >= 200 && status < 300)
          fail(new ProtocolViolation(`HTTP ${status} with an empty body in answer to ${message.method}`));
        else
          fail(
            new TransportFailure(
              status === 404
                ? `no MCP endpoint at ${this.label} (HTTP 404)`
                : `HTTP ${status} from ${this.label}`,
              status,
            ),
          );
        return;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        if (status >= 200 && status < 300)
          fail(new ProtocolViolation(`response to ${message.method} is not valid JSON`));
        else fail(new TransportFailure(`HTTP ${status} from ${this.label}: ${text.slice(0, 200)}`, status));
        return;
      }
      const m = classifyMessage(parsed);
      if (status === 404) {
        // No MCP endpoint at this path: the URL is wrong, whatever the body says (it may say where the endpoint is).
        const said = m.kind === 'response' && 'error' in m.response ? `: ${m.response.error.message}` : '';
        fail(new TransportFailure(`no MCP endpoint at ${this.label} (HTTP 404${said})`, 404));
        return;
      }
      if (status === 401) {
        // Not let in, whatever the body says: a refused or missing token, not an answer to the request.
        const said = m.kind === 'response' && 'error' in m.response ? `: ${m.response.error.message}` : '';
        fail(new TransportFailure(`HTTP 401 from ${this.label}${said || ': not authorized'}`, 401));
        return;
      }
      if (m.kind !== 'response') {
        if (status < 200 || status >= 300)
          fail(new TransportFailure(`HTTP ${status} from ${this.label}`, status));
        else
          fail(
            new ProtocolViolation(
              m.kind === 'invalid'
                ? `invalid JSON-RPC response: ${m.reason}`
                : `expected a JSON-RPC response to ${message.method}, got a ${m.kind}`,
            ),
          );
        return;
      }
      if (!responseMatches(m.response, message.id)) {
        fail(
          new ProtocolViolation(
            `response id ${JSON.stringify(m.response.id)} does not match request ${message.id}`,
          ),
        );
        return;
      }
      done(m.response);
    });
  }

  private readSse(
    res: http.IncomingMessage,
    request: TransportRequest,
    answer: Answer,
    resumes: number,
  ): void {
    const { message, onNotification } = request;
    const { done, fail } = answer;
    let answered = false;
    const parser = new SseParser((event) => {
      if (answered || event.event !== 'message') return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(event.data);
      } catch {
        throw new ProtocolViolation(`SSE event for ${message.method} is not valid JSON`);
      }
      const m = classifyMessage(parsed);
      switch (m.kind) {
        case 'invalid':
          throw new ProtocolViolation(`invalid JSON-RPC message on the SSE stream: ${m.reason}`);
        case 'request':
          if (!this.session || !request.onServerRequest)
            throw new ProtocolViolation(
              'server sent a JSON-RPC request on a response stream (2026-07-28 servers must use MRTR instead)',
            );
          // Legacy servers ask mid-call on the stream; the answer goes back as its own POST.
          void request.onServerRequest(m.request).then(
            (reply) => this.reply(reply),
            // The answerer's Errors pass as they are; the Error wrap is only a guard for a non-Error rejection.
            (error: unknown) => fail(error instanceof Error ? error : new Error(String(error))),
          );
          return;
        case 'notification':
          onNotification?.(m.notification);
          return;
        case 'response':
          if (!responseMatches(m.response, message.id))
            throw new ProtocolViolation(
              `response id ${JSON.stringify(m.response.id)} on the SSE stream does not match request ${message.id}`,
            );
          answered = true;
          done(m.response);
      }
    }, this.maxBytes);
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      if (answered) return;
      try {
        parser.push(chunk);
      } catch (error) {
        // Settle first: destroying the response emits its own (transport) errors.
        fail(error instanceof ProtocolViolation ? error : new ProtocolViolation((error as Error).message));
        res.destroy();
        return;
      }
      if (answered) {
        // The final response should end the stream; give the server a moment, then let the socket go.
        const timer = setTimeout(() => res.destroy(), 1000);
        timer.unref();
        res.once('end', () => clearTimeout(timer));
        res.resume();
      }
    });
    res.on('end', () => {
      if (answered || answer.isSettled()) return;
      // A legacy stream that closed before the response resumes where it stopped (GET with Last-Event-ID).
      const lastId = parser.lastEventId;
      if (this.session && lastId !== undefined && resumes < CLIENT_DEFAULTS.maxResumes) {
        const wait = Math.min(
          parser.retryMs ?? CLIENT_DEFAULTS.resumeDelayMs,
          CLIENT_DEFAULTS.maxResumeDelayMs,
        );
        setTimeout(() => {
          if (answer.isSettled()) return;
          void this.baseHeaders(message.method).then((headers) => {
            if (answer.isSettled()) return;
            delete headers['content-type'];
            headers.accept = 'text/event-stream';
            headers['last-event-id'] = lastId;
            const get = this.lib.request(this.url, { method: 'GET', headers, agent: this.agent });
            answer.follow(get);
            this.handle(get, request, answer, resumes + 1);
            get.end();
          });
        }, wait).unref();
        return;
      }
      fail(
        new ProtocolViolation(
          `SSE stream for ${message.method} ended before the response${parser.midEvent ? ' (mid-event)' : ''}`,
        ),
      );
    });
  }

  /** POST our answer to a server's request (legacy sessions). */
  private async reply(response: JsonRpcResponse): Promise<void> {
    const headers = await this.baseHeaders('');
    const body = Buffer.from(JSON.stringify(response), 'utf8');
    headers['content-length'] = String(body.length);
    await new Promise<void>((resolve) => {
      const req = this.lib.request(this.url, { method: 'POST', headers, agent: this.agent });
      req.on('error', () => resolve());
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve());
      });
      req.end(body);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stream?.destroy();
    const id = this.session?.id;
    if (id !== undefined) {
      // Legacy sessions end with DELETE (best effort: a server may answer 405 and let it expire).
      const headers = await this.baseHeaders('');
      await new Promise<void>((resolve) => {
        const req = this.lib.request(this.url, {
          method: 'DELETE',
          headers,
          agent: this.agent,
          timeout: 2000,
        });
        req.on('error', () => resolve());
        req.on('timeout', () => req.destroy());
        req.on('response', (res) => {
          res.resume();
          res.on('end', () => resolve());
        });
        req.end();
      });
    }
    if (this.ownsAgent) this.agent.destroy();
  }
}
