// One upstream MCP server as the gateway reaches it: over Streamable HTTP (2026-07-28 or 2025-era, whichever the
// server speaks: the client negotiates once, and the upstream remembers) or over stdio (a command the gateway starts
// and starts again after it dies). The gateway talks to it with mrtr's own client; over HTTP every client of one
// upstream shares one keep-alive agent, so calls reuse connections. With per-caller credentials (token exchange),
// each caller gets a client of its own, so the upstream sees the person; otherwise every caller shares one client and
// one credential, and held 2025 calls are kept apart by holder (the caller), never by credential. A 2025 server gets
// a session per running call (round()): over HTTP a session of its own, over stdio a process of its own, so calls
// waiting at once never mix; a session that ended its call well waits in a pool for the next call.
import type { Agent } from 'node:http';
import {
  HttpClientTransport,
  McpClient,
  RemoteError,
  type RoundOptions,
  type RoundResult,
  StdioClientTransport,
  TransportFailure,
} from '../client/index.js';
import { keepAliveAgent } from '../client/internal.js';
import { FairShares, slowedRefusal } from '../held/index.js';
import {
  type ClientCapabilities,
  ErrorCode,
  type JsonObject,
  type JsonRpcNotification,
  McpError,
  MrtrError,
  type ToolDefinition,
} from '../protocol/index.js';
import type { Egress, EgressCaller } from './egress/index.js';
import { IdleSessions } from './idle-sessions.js';
import { RestartBackoff } from './restart-backoff.js';

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

/**
 * Calls of a 2025 upstream open at once, each on its session (over stdio, its own process): all callers together and
 * each caller. A call takes its place as it starts and keeps it to its end, so one caller cannot take every process.
 */
export const SESSION_LIMITS = {
  stdio: { total: 16, perHolder: 8 },
  http: { total: 1000, perHolder: 100 },
} as const;

/**
 * Sessions of a 2025 upstream kept open between calls, ready for the next one: over stdio a process each (few: a
 * process costs memory), over HTTP a session each (as many as calls commonly run at once), closed after 5 idle minutes.
 */
const IDLE_SESSIONS = {
  stdio: { max: 2, maxIdleMs: Number.POSITIVE_INFINITY },
  http: { max: 64, maxIdleMs: 5 * 60_000 },
} as const;

const keyOf = (caller: EgressCaller) => `${caller.issuer ?? ''}\n${caller.subject}`;

/** A call's own session: its client, its place in the callers' shares, and whose credential it carries. */
interface Session {
  client: McpClient;
  place: string;
  holder: string;
  /** The pool's key: the credential's ('' when everyone shares one) and the caller's (holder). */
  key: string;
}

export class Upstream {
  #shared: McpClient | undefined;
  readonly #perCaller = new Map<string, McpClient>();
  /** The latest request of each per-caller client's caller: its token is the one to exchange (the first expires). */
  readonly #latest = new Map<string, EgressCaller>();
  /** 2025 calls held between rounds, each on its own session, by the handle their next round presents. */
  readonly #sessions = new Map<string, Session & { timer: NodeJS.Timeout }>();
  /** True once this upstream is known to be a 2025 server: a session per call (round()). */
  #legacy = false;
  /** The protocol version an HTTP upstream answered in: a new client speaks it at once (no probe, no fallback). */
  #version: string | undefined;
  /** The tools as last listed: a new client plans a call's headers from them instead of listing first. */
  #tools: readonly ToolDefinition[] | undefined;
  /** Every HTTP client of this upstream sends on this agent: connections are kept alive and shared. */
  #agent: Agent | undefined;
  /** A 2025 upstream's sessions (stdio: processes) with no call open, ready for the next call. */
  readonly #idle: IdleSessions<McpClient>;
  readonly #sessionShares: FairShares;
  #places = 0;
  readonly #listeners = new Set<() => void>();
  #restarts = 0;
  /** Clients already dropped (their process died): a death is counted once, however it was seen. */
  readonly #dropped = new WeakSet<McpClient>();
  readonly #backoff: RestartBackoff;
  /** Calls waiting for a place that calls still running hold, longest first: one woken per place given back. */
  #waiting: Array<{ holder: string; wake: () => void }> = [];
  /** Sessions of calls running now (not held, not idle): close() ends their processes too. */
  readonly #running = new Set<Session>();
  /** Set by close(): no process is started or kept after it. */
  #closed = false;

  constructor(
    readonly spec: UpstreamSpec,
    private readonly options: UpstreamOptions,
  ) {
    this.#backoff = new RestartBackoff(spec.name);
    this.#idle = new IdleSessions(spec.command ? IDLE_SESSIONS.stdio : IDLE_SESSIONS.http);
    const limits = spec.command ? SESSION_LIMITS.stdio : SESSION_LIMITS.http;
    this.#sessionShares = new FairShares(
      { total: limits.total, perHolder: limits.perHolder },
      {
        perHolder: (count, limit, seconds) =>
          slowedRefusal(
            'upstream_sessions_full',
            `Too many open calls to upstream ${spec.name}: ${count} of this caller are open (limit ${limit}); finish or abandon one, or retry after ${seconds} s`,
            seconds,
          ),
        total: (limit) =>
          new McpError(
            ErrorCode.InternalError,
            `Busy: ${limit} calls to upstream ${spec.name} are already open; try again later`,
          ),
      },
    );
  }

  get name(): string {
    return this.spec.name;
  }

  /** Whether each caller reaches it with a credential of its own (then it starts per caller, not with the gateway). */
  get perCaller(): boolean {
    return this.options.egress.perCaller;
  }

  /** Clients open to this upstream now: the shared one, per caller, and each 2025 call's own (running, held, idle). */
  get openClients(): number {
    return (
      (this.#shared ? 1 : 0) +
      this.#perCaller.size +
      this.#running.size +
      this.#sessions.size +
      this.#idle.size
    );
  }

  /** How many times the stdio child was started again after it died. */
  get restarts(): number {
    return this.#restarts;
  }

  /** The client that carries `caller`'s requests: its own with per-caller credentials, else the shared one. */
  clientFor(caller: EgressCaller): McpClient {
    this.#refuseIfClosed();
    if (!this.options.egress.perCaller) {
      this.#shared ??= this.#newClient(caller);
      return this.#shared;
    }
    const key = this.#remember(caller);
    let client = this.#perCaller.get(key);
    if (!client) {
      client = this.#newClient(caller);
      this.#perCaller.set(key, client);
    }
    return client;
  }

  /**
   * The pool key of `caller`'s credential, and its latest request kept (its token is the one to exchange: the first
   * expires). Past `maxCallers`, the caller seen longest ago is forgotten and its own client closed.
   */
  #remember(caller: EgressCaller): string {
    if (!this.options.egress.perCaller) return '';
    const key = keyOf(caller);
    // Most recently seen last: Map keeps insertion order, so the first key is the one to forget.
    this.#latest.delete(key);
    this.#latest.set(key, caller);
    if (this.#latest.size > this.options.maxCallers) {
      const oldest = this.#latest.keys().next().value as string;
      this.#latest.delete(oldest);
      void this.#perCaller
        .get(oldest)
        ?.close()
        .catch(() => {});
      this.#perCaller.delete(oldest);
    }
    return key;
  }

  /**
   * One round of a call upstream. A 2025 server asks with requests that name no call: over HTTP it may send them
   * outside the call's own stream (the session's GET stream), over stdio one process is one session. A session shared
   * by several open calls could not tell whose question it is, and the client refuses to guess. So there, each call
   * gets a session of its own (over stdio, a process), found again on the next round by the held call's handle, and
   * given back when the call ends.
   */
  async round(
    caller: EgressCaller,
    params: { name: string; arguments: JsonObject },
    options: Omit<RoundOptions, 'timeoutMs'>,
  ): Promise<RoundResult> {
    // Whether a stdio server's calls need processes of their own depends on its era: learn it first (a listing
    // tells). Over HTTP the first call learns it, as the gateway's listing at start usually has already.
    if (this.spec.command !== undefined && !this.#legacy && this.clientFor(caller).generation === 'unknown')
      await this.listTools(caller, options.signal);
    const held = options.requestState === undefined ? undefined : this.#sessions.get(options.requestState);
    if (held) {
      this.#sessions.delete(options.requestState as string);
      clearTimeout(held.timer);
      this.#running.add(held);
    }
    const session =
      held ??
      (this.#legacy ? await this.#openSession(caller, options.holder ?? '', options.signal) : undefined);
    const client = session?.client ?? this.clientFor(caller);
    try {
      const answer = await client.round('tools/call', params, options);
      this.#answered(client);
      if (session && answer.resultType === 'input_required' && answer.requestState !== undefined) {
        // Kept for this call alone until its next round; closed if nobody comes back before the held call is dropped.
        this.#keep(answer.requestState, session);
      } else if (session) this.#endSession(session, true);
      return answer;
    } catch (error) {
      if (held && error instanceof MrtrError && error.code === 'ERR_INVALID_ARGUMENT')
        // Refused before the handle was spent (an answer missing or of the wrong kind): the call still waits.
        this.#keep(options.requestState as string, held);
      // A JSON-RPC error is an answer: the session is sound and serves the next call.
      else if (session) this.#endSession(session, error instanceof RemoteError);
      else this.failed(caller, error);
      throw error;
    }
  }

  /** A request answered: the upstream is up, and its era is known for the clients made from now on. */
  #answered(client: McpClient): void {
    this.#backoff.answered();
    if (client.generation === 'legacy') this.#legacy = true;
    if (this.spec.url !== undefined && client.generation !== 'unknown') this.#version = client.version;
  }

  /**
   * A session for one call: its place taken in the caller's share, then a client (a process ready, or a new one).
   * Places held by calls still running free in moments, so a call waits for one (bounded by the upstream's time
   * limit); places held by calls waiting on a person free slowly, so then the call is refused at once (429 or busy).
   */
  async #openSession(
    caller: EgressCaller,
    holder: string,
    signal: AbortSignal | undefined,
  ): Promise<Session> {
    const deadline = Date.now() + this.options.timeoutMs;
    for (;;) {
      this.#refuseIfClosed();
      const blocked = this.#sessionShares.blocked(holder, holder);
      if (blocked === undefined) {
        const place = `session-${++this.#places}`;
        const refused = this.#sessionShares.take(place, holder, holder, Date.now() + HELD_CALL_MS);
        if (refused) throw refused; // not blocked a moment ago, and nothing ran since
        // Kept per caller too: a 2025 session holds state (a cart, a working folder) that must not reach another caller.
        return this.#sessionAt(place, holder, caller, `${this.#remember(caller)}\n\n${holder}`);
      }
      const waitingOnPeople =
        blocked === 'total'
          ? this.#sessions.size
          : [...this.#sessions.values()].filter((s) => s.holder === holder).length;
      const limits = this.spec.command ? SESSION_LIMITS.stdio : SESSION_LIMITS.http;
      const full = blocked === 'total' ? limits.total : limits.perHolder;
      // The refusal (an error with its stack) is built only when it is thrown: waiting calls ask on every place freed.
      if (waitingOnPeople >= full || Date.now() >= deadline)
        throw this.#sessionShares.check(holder, holder) as Error;
      await this.#placeGivenBack(holder, signal, deadline);
    }
  }

  #sessionAt(place: string, holder: string, caller: EgressCaller, key: string): Session {
    try {
      const client = this.#idle.take(key, (c) => !this.#dropped.has(c));
      const session = { client: client ?? this.#newClient(caller), place, holder, key };
      this.#running.add(session);
      return session;
    } catch (error) {
      this.#giveBack(place);
      throw error;
    }
  }

  /**
   * Resolves when a place `holder` may take is given back, or at the deadline; rejects when the call is aborted.
   */
  #placeGivenBack(holder: string, signal: AbortSignal | undefined, deadline: number): Promise<void> {
    signal?.throwIfAborted();
    return new Promise<void>((resolve, reject) => {
      const waiter = {
        holder,
        wake: () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', aborted);
          this.#waiting = this.#waiting.filter((w) => w !== waiter);
          resolve();
        },
      };
      const aborted = () => {
        waiter.wake();
        reject(signal?.reason);
      };
      const timer = setTimeout(waiter.wake, Math.max(0, deadline - Date.now()));
      signal?.addEventListener('abort', aborted, { once: true });
      this.#waiting.push(waiter);
    });
  }

  /**
   * A place is free: the longest waiter whose share now admits it is woken, one per place given back. Waking every
   * waiter made each try again and be refused, an error built each time: 32 callers of one caller spent a tenth of
   * the gateway's CPU there.
   */
  #giveBack(place: string): void {
    this.#sessionShares.give(place);
    for (const waiter of this.#waiting)
      if (this.#sessionShares.blocked(waiter.holder, waiter.holder) === undefined) {
        waiter.wake();
        return;
      }
  }

  /** Keep a held call's session for its next round, under the handle that round presents. */
  #keep(handle: string, session: Session): void {
    this.#running.delete(session);
    if (this.#closed) {
      this.#endSession(session, false);
      return;
    }
    const timer = setTimeout(() => {
      this.#sessions.delete(handle);
      this.#endSession(session, false);
    }, HELD_CALL_MS);
    timer.unref();
    this.#sessions.set(handle, { ...session, timer });
  }

  /**
   * The call is over: its place is free; a session that ended its call well waits in the pool for the next call of
   * the same credential. One that failed is closed: a call cut off mid-way may still run on it.
   */
  #endSession(session: Session, wellEnded: boolean): void {
    this.#running.delete(session);
    // After close() nothing is kept; a call waiting for a place takes this session even past the pool's bound.
    if (wellEnded && !this.#closed && !this.#dropped.has(session.client))
      this.#idle.put(session.key, session.client, this.#waiting.length > 0);
    else void session.client.close().catch(() => {});
    this.#giveBack(session.place);
  }

  /** The upstream's tools, listed now (the catalog caches them). */
  async listTools(caller: EgressCaller, signal?: AbortSignal): Promise<ToolDefinition[]> {
    return this.#supervised(caller, async (client) => {
      const tools = await client.listTools({ signal, timeoutMs: this.options.timeoutMs });
      this.#answered(client);
      this.#tools = tools;
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
    if (this.#dropped.has(client)) return;
    this.#dropped.add(client);
    if (this.#shared === client) this.#shared = undefined;
    for (const [key, c] of this.#perCaller) if (c === client) this.#perCaller.delete(key);
    this.#idle.remove(client);
    this.#backoff.died(error.message);
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
      // A 2025 upstream's question waits this long for the caller's next round: an abandoned call should not keep its
      // session (over stdio, a process) for the client's default ten minutes.
      heldCalls: { holdMs: HELD_CALL_MS },
      onWarning: (message: string) => log(`upstream ${this.name}: ${message}`),
    };
    const { url } = this.spec;
    if (url !== undefined) {
      // Asked before every request, with the caller's latest token: the egress's cache renews the exchanged one.
      const key = keyOf(caller);
      const token = () => egress.tokenFor(this.#latest.get(key) ?? caller).then((t) => t ?? '');
      // A bad URL is left to the transport, which names it.
      if (URL.canParse(url)) this.#agent ??= keepAliveAgent(new URL(url));
      return new McpClient({
        ...common,
        // What earlier clients learnt: the version to speak (no server/discover, no initialize fallback) and the
        // tools' header plans (no tools/list before a call).
        ...(this.#version !== undefined ? { protocol: this.#version } : {}),
        ...(this.#tools !== undefined ? { knownTools: this.#tools } : {}),
        server: new HttpClientTransport({ url, token, ...(this.#agent ? { agent: this.#agent } : {}) }),
      });
    }
    // A process that keeps dying is started again ever more slowly (restart-backoff.ts): this throws meanwhile.
    this.#backoff.checkStart();
    const [command, ...args] = this.spec.command ?? [];
    const transport = new StdioClientTransport({
      command: command as string,
      args,
      cwd: this.spec.cwd,
      env: this.spec.env,
      stderr: 'tail',
    });
    transport.onNotification = (n: JsonRpcNotification) => {
      // Prompts and resources too: the gateway serves them (catalog-surface.ts), and listeners re-list every kind.
      if (/^notifications\/(tools|prompts|resources)\/list_changed$/.test(n.method))
        for (const l of [...this.#listeners]) l();
    };
    const client = new McpClient({ ...common, server: transport });
    // Seen as it happens, not at the next call: that call goes to a new process instead of failing on the dead one.
    transport.onExit = (failure) => this.#drop(client, failure);
    return client;
  }

  /** A call that would start or wait for a process after close() is refused: nothing would ever end that process. */
  #refuseIfClosed(): void {
    if (this.#closed) throw new TransportFailure(`upstream ${this.name} is closed; its calls end`);
  }

  async close(): Promise<void> {
    this.#closed = true;
    const clients = [
      ...[...this.#running].map((s) => s.client),
      ...this.#perCaller.values(),
      ...(this.#shared ? [this.#shared] : []),
      ...this.#idle.drain(),
      ...[...this.#sessions.values()].map((h) => {
        clearTimeout(h.timer);
        return h.client;
      }),
    ];
    this.#sessions.clear();
    this.#running.clear();
    // Calls waiting for a place wake and are refused (#openSession), starting no process.
    for (const waiter of [...this.#waiting]) waiter.wake();
    this.#perCaller.clear();
    this.#latest.clear();
    this.#shared = undefined;
    await Promise.allSettled(clients.map((c) => c.close()));
    // After the clients: a 2025 session's DELETE goes out on it.
    this.#agent?.destroy();
  }
}
