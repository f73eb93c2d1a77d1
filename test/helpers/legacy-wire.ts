// A raw 2025 client for wire-level tests of the legacy bridge: initialize, POST with the session, and SSE streams
// read event by event (id and data), so a test can disconnect, resume with Last-Event-ID and see exactly what came.
export interface SseEvent {
  id: string | undefined;
  data: string;
  retry: number | undefined;
}

export class SseReader {
  private buffer = '';
  private readonly decoder = new TextDecoder();
  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  /** The next event, or undefined when the stream ended. */
  async next(): Promise<SseEvent | undefined> {
    for (;;) {
      const end = this.buffer.indexOf('\n\n');
      if (end >= 0) {
        const block = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 2);
        const event: SseEvent = { id: undefined, data: '', retry: undefined };
        for (const line of block.split('\n')) {
          const colon = line.indexOf(':');
          const field = line.slice(0, colon);
          const value = line.slice(colon + 1).replace(/^ /, '');
          if (field === 'id') event.id = value;
          else if (field === 'data') event.data += value;
          else if (field === 'retry') event.retry = Number(value);
        }
        return event;
      }
      const { value, done } = await this.reader.read();
      if (done) return undefined;
      this.buffer += this.decoder.decode(value, { stream: true });
    }
  }

  /** The next event that carries a JSON-RPC message, parsed. */
  async nextMessage(): Promise<{ id: string | undefined; message: Record<string, unknown> } | undefined> {
    for (;;) {
      const e = await this.next();
      if (!e) return undefined;
      if (e.data.trim() !== '') return { id: e.id, message: JSON.parse(e.data) as Record<string, unknown> };
    }
  }

  cancel(): Promise<void> {
    return this.reader.cancel();
  }
}

export const JSON_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

export class LegacyWire {
  sessionId: string | undefined;
  constructor(
    readonly url: string,
    readonly version = '2025-11-25',
    readonly extraHeaders: Record<string, string> = {},
  ) {}

  headers(more: Record<string, string> = {}): Record<string, string> {
    return {
      ...JSON_HEADERS,
      ...(this.sessionId ? { 'mcp-session-id': this.sessionId, 'mcp-protocol-version': this.version } : {}),
      ...this.extraHeaders,
      ...more,
    };
  }

  async initialize(capabilities: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const res = await fetch(this.url, {
      method: 'POST',
      headers: this.headers(),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: {
          protocolVersion: this.version,
          capabilities,
          clientInfo: { name: 'wire', version: '1.0.0' },
        },
      }),
    });
    this.sessionId = res.headers.get('mcp-session-id') ?? undefined;
    const body = (await res.json()) as { result: Record<string, unknown> };
    await this.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return body.result;
  }

  post(message: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
    return fetch(this.url, {
      method: 'POST',
      headers: this.headers(headers),
      body: JSON.stringify(message),
      ...(signal ? { signal } : {}),
    });
  }

  /** A request whose answer comes as JSON; returns the JSON-RPC response. */
  async call(method: string, params: Record<string, unknown> = {}, id: string | number = 1) {
    const res = await this.post({ jsonrpc: '2.0', id, method, params });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  /** A request whose answer comes on an SSE stream. */
  async stream(
    method: string,
    params: Record<string, unknown>,
    id: string | number = 1,
    signal?: AbortSignal,
  ) {
    const res = await this.post({ jsonrpc: '2.0', id, method, params }, {}, signal);
    if (!res.body) throw new Error(`no body (HTTP ${res.status})`);
    return { res, events: new SseReader(res.body.getReader()) };
  }

  async get(headers: Record<string, string> = {}, signal?: AbortSignal) {
    const res = await fetch(this.url, {
      method: 'GET',
      headers: { ...this.headers({ accept: 'text/event-stream' }), ...headers },
      ...(signal ? { signal } : {}),
    });
    return { res, events: res.body ? new SseReader(res.body.getReader()) : undefined };
  }

  answer(id: unknown, result: Record<string, unknown>): Promise<Response> {
    return this.post({ jsonrpc: '2.0', id, result });
  }
}
