// Streamable HTTP (2026-07-28) client transport on node:http: one keep-alive POST per request, the standard
// headers on every POST, and JSON or per-request SSE responses.
import http from 'node:http';
import https from 'node:https';
import {
  encodeHeaderValue,
  HEADER_METHOD,
  HEADER_NAME,
  HEADER_PROTOCOL_VERSION,
  type JsonObject,
  type JsonRpcRequest,
  type JsonRpcResponse,
  META_PROTOCOL_VERSION,
} from '../protocol/index.js';
import { abortError, ProtocolViolation, TransportFailure } from './errors.js';
import { describeNetworkError } from './network-errors.js';
import { SseParser } from './sse.js';
import {
  type ClientTransport,
  classifyMessage,
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
}

/** Name header source per method (streamable-http.mdx "Standard Request Headers"). */
function nameFor(message: JsonRpcRequest): string | undefined {
  const p = message.params;
  if (!p) return undefined;
  if (message.method === 'tools/call' || message.method === 'prompts/get')
    return typeof p.name === 'string' ? p.name : undefined;
  if (message.method === 'resources/read') return typeof p.uri === 'string' ? p.uri : undefined;
  return undefined;
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
    this.url = new URL(options.url);
    if (this.url.protocol !== 'http:' && this.url.protocol !== 'https:')
      throw new TypeError(`MCP endpoint must be an http(s) URL, got ${this.url.protocol}`);
    this.label = this.url.href;
    this.endpoint = this.url.host;
    this.options = options;
    this.maxBytes = options.maxResponseBytes ?? 16 * 1024 * 1024;
    this.ownsAgent = options.agent === undefined;
    const AgentClass = this.url.protocol === 'https:' ? https.Agent : http.Agent;
    this.agent = options.agent ?? new AgentClass({ keepAlive: true, maxSockets: 64 });
  }

  async send(request: TransportRequest): Promise<JsonRpcResponse> {
    if (this.closed) throw new TransportFailure('transport is closed');
    const { message, signal } = request;
    if (signal?.aborted) throw abortError(signal);
    const headers: Record<string, string> = {
      ...this.options.headers,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      [HEADER_METHOD]: message.method,
    };
    const meta = message.params?._meta as JsonObject | undefined;
    const version = meta?.[META_PROTOCOL_VERSION];
    if (typeof version === 'string') headers[HEADER_PROTOCOL_VERSION] = version;
    const name = nameFor(message);
    if (name !== undefined) headers[HEADER_NAME] = encodeHeaderValue(name);
    for (const [k, v] of Object.entries(request.headers ?? {})) headers[k.toLowerCase()] = v;
    const token = typeof this.options.token === 'function' ? await this.options.token() : this.options.token;
    if (token) headers.authorization = `Bearer ${token}`;
    const body = Buffer.from(JSON.stringify(message), 'utf8');
    headers['content-length'] = String(body.length);
    return this.post(body, headers, request);
  }

  private post(
    body: Buffer,
    headers: Record<string, string>,
    request: TransportRequest,
  ): Promise<JsonRpcResponse> {
    const { message, signal, onNotification } = request;
    const lib = this.url.protocol === 'https:' ? https : http;
    return new Promise<JsonRpcResponse>((resolve, reject) => {
      let settled = false;
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener('abort', onAbort);
        fn();
      };
      const fail = (error: Error) => settle(() => reject(error));
      const done = (response: JsonRpcResponse) => settle(() => resolve(response));
      const onAbort = () => {
        fail(abortError(signal as AbortSignal));
        // Closing the request (and its response stream) is the cancellation signal on Streamable HTTP.
        req.destroy();
      };
      const req = lib.request(this.url, { method: 'POST', headers, agent: this.agent });
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('error', (error) => fail(new TransportFailure(describeNetworkError(this.url, error))));
      req.on('response', (res) => {
        const status = res.statusCode ?? 0;
        const type = String(res.headers['content-type'] ?? '').toLowerCase();
        res.on('error', (error) =>
          fail(new TransportFailure(`response from ${this.label} broke: ${error.message}`)),
        );
        res.on('aborted', () => fail(new TransportFailure(`response from ${this.label} was cut off`)));
        if (type.startsWith('text/event-stream') && status >= 200 && status < 300) {
          this.readSse(res, message, onNotification, done, fail);
          return;
        }
        this.readJson(res, status, message, done, fail);
      });
      req.end(body);
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
        const said = m.type === 'response' && 'error' in m.response ? `: ${m.response.error.message}` : '';
        fail(new TransportFailure(`no MCP endpoint at ${this.label} (HTTP 404${said})`, 404));
        return;
      }
      if (m.type !== 'response') {
        if (status < 200 || status >= 300)
          fail(new TransportFailure(`HTTP ${status} from ${this.label}`, status));
        else
          fail(
            new ProtocolViolation(
              m.type === 'invalid'
                ? `invalid JSON-RPC response: ${m.reason}`
                : `expected a JSON-RPC response to ${message.method}, got a ${m.type}`,
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
    message: JsonRpcRequest,
    onNotification: TransportRequest['onNotification'],
    done: (r: JsonRpcResponse) => void,
    fail: (e: Error) => void,
  ): void {
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
      switch (m.type) {
        case 'invalid':
          throw new ProtocolViolation(`invalid JSON-RPC message on the SSE stream: ${m.reason}`);
        case 'request':
          throw new ProtocolViolation(
            'server sent a JSON-RPC request on a response stream (2026-07-28 servers must use MRTR instead)',
          );
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
      if (!answered)
        fail(
          new ProtocolViolation(
            `SSE stream for ${message.method} ended before the response${parser.midEvent ? ' (mid-event)' : ''}`,
          ),
        );
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.ownsAgent) this.agent.destroy();
  }
}
