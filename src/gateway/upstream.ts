// One upstream MCP server as the gateway reaches it: over Streamable HTTP (2026-07-28 or 2025-era, whichever the
// server speaks: the client negotiates) or over stdio (a command the gateway starts and starts again after it dies).
// The gateway talks to it with mrtr's own client. With per-caller credentials (token exchange), each caller gets a
// client of its own, so the upstream sees the person; otherwise every caller shares one client and one credential,
// and held 2025 calls are kept apart by holder (the caller), never by credential; a 2025 server over HTTP gets a
// session per call (round()).
import {
  HttpClientTransport,
  McpClient,
  type RoundOptions,
  type RoundResult,
  StdioClientTransport,
  TransportFailure,
} from '../client/index.js';
import type {
  ClientCapabilities,
  JsonObject,
  JsonRpcNotification,
  ToolDefinition,
} from '../protocol/index.js';
import type { Egress, EgressCaller } from './egress/index.js';

/** Where an upstream is and how it is started: the config's upstream entry. */
export interface UpstreamSpec {
  readonly name: string;
  readonly url?: string | undefined;
  readonly command?: readonly string[] | undefined;
  /** The stdio child's working directory. */
  readonly cwd?: string | undefined;
  /** Extra variables for the stdio child, on top of the minimal environment. */
  readonly env?: Readonly<Record<string, string>> | undefined;
}

export interface UpstreamOptions {
  readonly egress: Egress;
  /** Lines an operator should read: a restart, a warning from the client. */
  readonly log: (line: string) => void;
  /** Time limit for a listing or a round upstream (ms). */
  readonly timeoutMs: number;
  /** Clients kept for per-caller credentials; the least recently used is closed past this. */
  readonly maxCallers: number;
}

/**
 * What the gateway asks of its caller on an upstream's behalf: forms and URLs (a person answers), and sampling (the
 * caller's model). Never roots: a filesystem server takes the client's roots as its allowed directories, and the
 * caller's roots must not widen what the gateway's operator configured.
 */
export const RELAYED_CAPABILITIES: ClientCapabilities = {
  elicitation: { form: {}, url: {} },
  sampling: {},
};

/** How long a 2025 upstream's question waits for the caller's answer before its call is dropped. */
export const HELD_CALL_MS = 5 * 60_000;

const keyOf = (caller: EgressCaller) => `${caller.issuer ?? ''}\n${caller.subject}`;

export class Upstream {
  #shared: McpClient | undefined;
  readonly #perCaller = new Map<string, McpClient>();
  /** The latest request of each per-caller client's caller: its token is the one to exchange (the first expires). */
  readonly #latest = new Map<string, EgressCaller>();
  /** 2025-over-HTTP calls held between rounds, each on its own session, by the handle their next round presents. */
  readonly #sessions = new Map<string, { client: McpClient; timer: NodeJS.Timeout }>();
  /** True once this upstream is known to be a 2025 server over HTTP: a session per call (round()). */
  #legacyHttp = false;
  readonly #listeners = new Set<() => void>();
  #restarts = 0;

  constructor(
    readonly spec: UpstreamSpec,
    private readonly options: UpstreamOptions,
  ) {}

  get name(): string {
    return this.spec.name;
  }

  /** Whether each caller reaches it with a credential of its own (then it starts per caller, not with the gateway). */
  get perCaller(): boolean {
    return this.options.egress.perCaller;
  }

  /** How many times the stdio child was started again after it died. */
  get restarts(): number {
    return this.#restarts;
  }

  /** The client that carries `caller`'s requests: its own with per-caller credentials, else the shared one. */
  clientFor(caller: EgressCaller): McpClient {
    if (!this.options.egress.perCaller) {
      this.#shared ??= this.#newClient(caller);
      return this.#shared;
    }
    const key = keyOf(caller);
    this.#latest.set(key, caller);
    let client = this.#perCaller.get(key);
    if (client) {
      // Most recently used last: Map keeps insertion order, so the first key is the one to close.
      this.#perCaller.delete(key);
      this.#perCaller.set(key, client);
      return client;
    }
    client = this.#newClient(caller);
    this.#perCaller.set(key, client);
    if (this.#perCaller.size > this.options.maxCallers) {
      const [oldest, old] = this.#perCaller.entries().next().value as [string, McpClient];
      this.#perCaller.delete(oldest);
      this.#latest.delete(oldest);
      void old.close().catch(() => {});
    }
    return client;
  }

  /**
   * One round of a call upstream. A 2025 server over HTTP may send its questions outside the call's own stream (the
   * session's GET stream), naming no call: a session shared by several open calls could not tell whose question it
   * is, and the client refuses to guess. So there, each call gets a session of its own, found again on the next
   * round by the held call's handle, and closed when the call ends. (A stdio server is one process and one session:
   * its questions are told apart by the request in flight.)
   */
  async round(
    caller: EgressCaller,
    params: { name: string; arguments: JsonObject },
    options: Omit<RoundOptions, 'timeoutMs'>,
  ): Promise<RoundResult> {
    const held = options.requestState === undefined ? undefined : this.#sessions.get(options.requestState);
    if (held) this.#sessions.delete(options.requestState as string);
    const own = held?.client ?? (this.#legacyHttp ? this.#newClient(caller) : undefined);
    if (held) clearTimeout(held.timer);
    const client = own ?? this.clientFor(caller);
    try {
      const answer = await client.round('tools/call', params, options);
      if (client.generation === 'legacy' && this.spec.url !== undefined) this.#legacyHttp = true;
      if (own && answer.resultType === 'input_required' && answer.requestState !== undefined) {
        // Closed if nobody comes back before the held call itself would be dropped.
        const timer = setTimeout(() => {
          this.#sessions.delete(answer.requestState as string);
          void own.close().catch(() => {});
        }, HELD_CALL_MS);
        timer.unref();
        this.#sessions.set(answer.requestState, { client: own, timer });
      } else if (own) void own.close().catch(() => {});
      return answer;
    } catch (error) {
      if (own) void own.close().catch(() => {});
      else this.failed(caller, error);
      throw error;
    }
  }

  /** The upstream's tools, listed now (the catalog caches them). */
  async listTools(caller: EgressCaller, signal?: AbortSignal): Promise<ToolDefinition[]> {
    return this.#supervised(caller, async (client) => {
      const tools = await client.listTools({ signal, timeoutMs: this.options.timeoutMs });
      if (client.generation === 'legacy' && this.spec.url !== undefined) this.#legacyHttp = true;
      return tools;
    });
  }

  /**
   * Run `work` on `caller`'s client; if the connection died (a stdio server that exited), drop the client so the
   * next request starts the server again. The failed request is not retried: it may have had an effect.
   */
  async #supervised<T>(caller: EgressCaller, work: (client: McpClient) => Promise<T>): Promise<T> {
    const client = this.clientFor(caller);
    try {
      return await work(client);
    } catch (error) {
      if (error instanceof TransportFailure && this.spec.command) this.#drop(client, error);
      throw error;
    }
  }

  /** Call on a failure seen by a round: a dead stdio server is started again on the next request. */
  failed(caller: EgressCaller, error: unknown): void {
    if (!(error instanceof TransportFailure) || !this.spec.command) return;
    const client = this.options.egress.perCaller ? this.#perCaller.get(keyOf(caller)) : this.#shared;
    if (client) this.#drop(client, error);
  }

  #drop(client: McpClient, error: TransportFailure): void {
    if (this.#shared === client) this.#shared = undefined;
    for (const [key, c] of this.#perCaller) if (c === client) this.#perCaller.delete(key);
    this.#restarts++;
    this.options.log(
      `upstream ${this.name}: ${error.message}; it is started again on the next request (restart ${this.#restarts})`,
    );
    void client.close().catch(() => {});
  }

  /** Called when the upstream says its tools changed (a stdio server's list_changed). */
  onToolsChanged(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #newClient(caller: EgressCaller): McpClient {
    const { egress, log, timeoutMs } = this.options;
    const common = {
      capabilities: RELAYED_CAPABILITIES,
      clientInfo: { name: 'mrtr-gateway', version: '0.1.0' },
      requestTimeoutMs: timeoutMs,
      mrtr: { timeoutMs },
      // A 2025 upstream's question waits this long for the caller's next round. A stdio server is one session, and
      // while one of its calls waits, a question in another call cannot be told apart (see docs/gateway.md): an
      // abandoned call should not hold that up for the client's default ten minutes.
      heldCalls: { holdMs: HELD_CALL_MS },
      onWarning: (message: string) => log(`upstream ${this.name}: ${message}`),
    };
    if (this.spec.url !== undefined) {
      // Asked before every request, with the caller's latest token: the egress's cache renews the exchanged one.
      const key = keyOf(caller);
      const token = () => egress.tokenFor(this.#latest.get(key) ?? caller).then((t) => t ?? '');
      return new McpClient({
        ...common,
        server: new HttpClientTransport({ url: new URL(this.spec.url), token }),
      });
    }
    const [command, ...args] = this.spec.command ?? [];
    const transport = new StdioClientTransport({
      command: command as string,
      args,
      cwd: this.spec.cwd,
      env: this.spec.env,
      stderr: 'tail',
    });
    transport.onNotification = (n: JsonRpcNotification) => {
      if (n.method === 'notifications/tools/list_changed') for (const l of [...this.#listeners]) l();
    };
    return new McpClient({ ...common, server: transport });
  }

  async close(): Promise<void> {
    const clients = [
      ...this.#perCaller.values(),
      ...(this.#shared ? [this.#shared] : []),
      ...[...this.#sessions.values()].map((h) => {
        clearTimeout(h.timer);
        return h.client;
      }),
    ];
    this.#sessions.clear();
    this.#perCaller.clear();
    this.#latest.clear();
    this.#shared = undefined;
    await Promise.allSettled(clients.map((c) => c.close()));
  }
}
