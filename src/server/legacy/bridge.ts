// The bridge between 2025-era clients and the round pipeline: the initialize handshake, the methods only older
// revisions have, and flows over the old wire. Where a 2026-07-28 client gets `input_required`, a 2025 client gets
// the same questions as server-to-client requests on its request's stream; their answers go back into the very
// same pipeline as the next round, with the sealed requestState, so every guarantee of the MRTR path holds (answers
// validated and pinned, round cap, principal binding, capability check, guards, audit). Transport-independent:
// the HTTP and stdio fronts give it a way to send messages and hand it the answers that come back.
import { randomBytes } from 'node:crypto';
import { PendingAnswers } from '../../held/index.js';
import {
  ErrorCode,
  errorResponse,
  isJsonObject,
  type JsonObject,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  LATEST_PROTOCOL_VERSION,
  legacyRequestParams,
  legacyResponse,
  McpError,
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_LOG_LEVEL,
  META_PROTOCOL_VERSION,
  META_RETRY_AFTER_MS,
  META_SERVER_INFO,
  MRTR_METHODS,
  negotiateLegacyVersion,
  StoreContendedError,
} from '../../protocol/index.js';
import { pauseUntilAborted } from '../../protocol/internal.js';
import { MemoryStore, type SharedStore } from '../../stores/index.js';
import { LOG_LEVELS, type LogLevel, type Principal } from '../context.js';
import { SERVER_DEFAULTS } from '../defaults.js';
import type { Logger } from '../environment.js';
import { InvalidOptionError } from '../errors.js';
import type { RequestHandler } from '../request-handler.js';
import type { AnswerRelay, RelayedAnswer } from './answer-relay.js';
import { boundedStore } from './bounded-store.js';
import { keptCapabilities } from './capabilities.js';
import { QuestionShares, shareKey } from './fair-share.js';
import { keptClientInfo, type LegacySession, SessionCodec } from './session.js';
import { RequestUrlQuestions, UrlElicitations } from './url-elicitations.js';

/** Where the bridge writes what belongs to one request: its notifications and its server-to-client requests. */
export interface LegacyOutbound {
  send(message: JsonRpcNotification | JsonRpcRequest): void;
  /** Aborted when the client cancels the request (notifications/cancelled). */
  readonly signal: AbortSignal;
}

export interface LegacyBridgeOptions {
  /** Keys that sign session ids (purposeKeys of the server's keyring): every instance of a fleet shares them. */
  sessionKeys: ReadonlyArray<{ kid: string; key: Uint8Array }>;
  /** Where ended sessions and log levels are kept; shared in a fleet (default: this process's memory). */
  store?: SharedStore;
  /** How long an operation of `store` may take before the request fails closed (default 10 s, hookTimeoutMs). */
  storeTimeoutMs?: number;
  /** Carries answers that reach another instance to the one waiting (default: none, one instance). */
  relay?: AnswerRelay;
  logger: Logger;
  /** How long a session id stays valid after the handshake (default 24 h). */
  sessionMaxAgeMs?: number;
  /** How long a flow waits for the client's answer to one question (default 10 min). */
  answerTimeoutMs?: number;
  /** Log level of a session that never called logging/setLevel (default `info`). */
  defaultLogLevel?: LogLevel;
  /** Most questions waiting for an answer on this instance, all sessions together (default 10 000). */
  maxPendingAnswers?: number;
  /** Most questions one session may have waiting (default 100). */
  maxPendingPerSession?: number;
  /** Most questions one principal may have waiting here, all its sessions together (default 1 000). */
  maxPendingPerPrincipal?: number;
  /** Most sessions with questions waiting here one principal may have (default 20). */
  maxSessionsPerPrincipal?: number;
}

export const LEGACY_DEFAULTS = Object.freeze({
  sessionMaxAgeMs: 24 * 60 * 60 * 1000,
  answerTimeoutMs: 10 * 60 * 1000,
  defaultLogLevel: 'info' as LogLevel,
  /** Most URIs one session may subscribe to. */
  maxSubscriptions: 1000,
  /** Most sessions whose subscriptions this instance tracks. */
  maxSubscribedSessions: 10_000,
  /**
   * A waiting question holds memory here until its answer or its timeout, even after the client dropped the
   * connection (a disconnection is not a cancellation), and sessions cost nothing to open: without a bound, a
   * client could park questions until the instance runs out of memory.
   */
  maxPendingAnswers: 10_000,
  maxPendingPerSession: 100,
  /**
   * One principal's fair share (fair-share.ts): a tenth of the pool, so it takes ten principals at their share to
   * fill it, and a principal flooding the bridge is slowed (429) long before anyone else sees "Server busy".
   */
  maxPendingPerPrincipal: 1000,
  maxSessionsPerPrincipal: 20,
});

const FLOW_METHODS: ReadonlySet<string> = new Set(MRTR_METHODS);

/** A client's answer as it arrived, and `by`: the principal of the POST that carried it, who the next round runs as. */
interface Arrived {
  message: JsonObject;
  by: Principal | undefined;
}

/** A client's answer and the principal of the request that brought it. */
interface Answered {
  result: JsonObject;
  by: Principal | undefined;
}

interface SessionState {
  ended?: true;
  level?: LogLevel;
}

export type SessionLookup = LegacySession | 'not_found' | 'forbidden';

export class LegacyBridge {
  #instance: string | undefined;
  /**
   * Names this instance in the ids of the requests it sends, so an answer can be relayed back to it. Drawn on first
   * use: workerd allows no random values while a worker module loads, which is when a worker builds its server.
   */
  get instance(): string {
    this.#instance ??= randomBytes(6).toString('base64url');
    return this.#instance;
  }
  private readonly codec: SessionCodec;
  private readonly store: SharedStore;
  /** Questions sent and not yet answered, by request id, grouped by session (held/pending-answers.ts). */
  private readonly pending: PendingAnswers<Arrived>;
  /** Whose share each waiting question takes (fair-share.ts). */
  private readonly shares: QuestionShares;
  private readonly subscriptions = new Map<string, Set<string>>();
  private counter = 0;
  private discovered: Promise<JsonObject> | undefined;
  private unsubscribe: Promise<(() => Promise<void>) | undefined>;
  private readonly maxAgeMs: number;
  private readonly urlElicitations: UrlElicitations;

  constructor(
    private readonly inner: RequestHandler,
    private readonly options: LegacyBridgeOptions,
  ) {
    this.maxAgeMs = options.sessionMaxAgeMs ?? LEGACY_DEFAULTS.sessionMaxAgeMs;
    this.codec = new SessionCodec(options.sessionKeys, this.maxAgeMs);
    this.shares = new QuestionShares({
      total: options.maxPendingAnswers ?? LEGACY_DEFAULTS.maxPendingAnswers,
      perSession: options.maxPendingPerSession ?? LEGACY_DEFAULTS.maxPendingPerSession,
      perPrincipal: options.maxPendingPerPrincipal ?? LEGACY_DEFAULTS.maxPendingPerPrincipal,
      sessionsPerPrincipal: options.maxSessionsPerPrincipal ?? LEGACY_DEFAULTS.maxSessionsPerPrincipal,
    });
    this.pending = new PendingAnswers(this.shares.shares);
    this.store = boundedStore(
      options.store ?? new MemoryStore(),
      options.storeTimeoutMs ?? SERVER_DEFAULTS.hookTimeoutMs,
    );
    const idKey = options.sessionKeys[0]?.key;
    if (!idKey) throw new InvalidOptionError('LegacyBridge: sessionKeys needs at least one key');
    this.urlElicitations = new UrlElicitations(idKey);
    // Listen for answers relayed from other instances before the first question goes out (ask waits for this).
    const relay = options.relay;
    this.unsubscribe = relay
      ? relay.subscribe(this.instance, (a) => this.settleRelayed(a))
      : Promise.resolve(undefined);
    this.unsubscribe.catch(() => {});
  }

  /** Resolves once answers relayed from other instances reach this one; rejects when the relay cannot listen. */
  ready(): Promise<void> {
    return this.unsubscribe.then(() => undefined);
  }

  /** Stop listening to the relay; requests still waiting for an answer fail. */
  async close(): Promise<void> {
    this.pending.failAll(
      () => new McpError(ErrorCode.InternalError, 'The server stopped before the client answered'),
    );
    const stop = await this.unsubscribe.catch(() => undefined);
    this.unsubscribe = Promise.resolve(undefined);
    await stop?.();
  }

  /** Answer `initialize`: negotiate the version and seal the session. */
  async initialize(
    request: JsonRpcRequest,
    principal: Principal | undefined,
  ): Promise<{ response: JsonRpcResponse; session?: LegacySession }> {
    const params = request.params ?? {};
    const version = negotiateLegacyVersion(params.protocolVersion);
    const session = this.codec.issue(
      version,
      keptCapabilities(params.capabilities, version),
      keptClientInfo(params.clientInfo),
      principal,
    );
    let discovered: JsonObject;
    try {
      discovered = await this.discover(principal);
    } catch (error) {
      return { response: this.failure(request.id, error) };
    }
    const result: JsonObject = { protocolVersion: version, ...discovered };
    return { response: legacyResponse(request.id, result), session };
  }

  /** The session an id names, if it is genuine, unexpired, not ended and opened by this principal. */
  async openSession(id: string, principal: Principal | undefined): Promise<SessionLookup> {
    const opened = this.codec.open(id, principal);
    if (opened === 'other_principal') return 'forbidden';
    if (typeof opened === 'string') return 'not_found';
    const state = await this.sessionState(opened);
    return state.ended ? 'not_found' : opened;
  }

  /** DELETE: the session ends on every instance that shares the store. */
  async endSession(session: LegacySession): Promise<void> {
    await this.updateState(session, (s) => ({ ...s, ended: true }));
    this.subscriptions.delete(session.key);
    this.pending.failGroup(
      session.key,
      () => new McpError(ErrorCode.InvalidRequest, 'The session ended before the client answered'),
    );
  }

  /** Answer one request of an initialized session; never throws. */
  async handle(
    request: JsonRpcRequest,
    session: LegacySession,
    principal: Principal | undefined,
    out: LegacyOutbound,
  ): Promise<JsonRpcResponse> {
    try {
      const params = request.params ?? {};
      switch (request.method) {
        case 'initialize':
          throw new McpError(
            ErrorCode.InvalidRequest,
            'Invalid request: this session is already initialized',
          );
        case 'ping':
          return this.ok(request, {});
        case 'logging/setLevel': {
          const level = params.level;
          if (!LOG_LEVELS.includes(level as LogLevel))
            throw new McpError(
              ErrorCode.InvalidParams,
              `Invalid params: level must be one of ${LOG_LEVELS.join(', ')}`,
            );
          await this.updateState(session, (s) => ({ ...s, level: level as LogLevel }));
          return this.ok(request, {});
        }
        case 'resources/subscribe':
        case 'resources/unsubscribe':
          return this.ok(request, this.subscribe(session, request.method, params.uri));
        default:
          return await this.run(request, session, principal, out);
      }
    } catch (error) {
      return this.failure(request.id, error);
    }
  }

  /**
   * A client's answer to a server-to-client request arrived (on any instance). True when a request of this session
   * waits for it here or, through the relay, on the instance its id names.
   */
  async deliver(session: LegacySession, message: JsonObject, by?: Principal): Promise<boolean> {
    const id = message.id;
    if (typeof id !== 'string') return false;
    if (this.settleLocal(id, session.key, message, by)) return true;
    const dot = id.indexOf('.');
    const instance = dot < 0 ? '' : id.slice(0, dot);
    if (!this.options.relay || instance === '' || instance === this.instance) return false;
    return this.options.relay.publish(instance, {
      id,
      session: session.key,
      message,
      ...(by ? { principal: by } : {}),
    });
  }

  /** The server's page reports a URL-mode question's `url` done: bridged requests waiting on it check again now. */
  urlElicitationDone(url: string): void {
    this.urlElicitations.done(url);
  }

  /**
   * Before a flow starts: why this principal may not have one more question waiting in this session, or undefined.
   * A principal past its share gets a `RoundRefused` with 429 and Retry-After, before any round runs.
   */
  admitFlow(session: LegacySession, principal: Principal | undefined): McpError | undefined {
    return this.shares.check(principal, session.key);
  }

  /** The subscribed URIs of a session (resources/subscribe tracks them; tests read them). */
  subscribedUris(session: LegacySession): readonly string[] {
    return [...(this.subscriptions.get(session.key) ?? [])];
  }

  /** Run one request through the inner handler, round after round, asking the client in between. */
  private async run(
    request: JsonRpcRequest,
    session: LegacySession,
    principal: Principal | undefined,
    out: LegacyOutbound,
  ): Promise<JsonRpcResponse> {
    if (FLOW_METHODS.has(request.method)) {
      const refused = this.admitFlow(session, principal);
      if (refused) throw refused;
    }
    const state = await this.sessionState(session);
    const given = request.params ?? {};
    const meta: JsonObject = {
      ...(isJsonObject(given._meta) ? given._meta : {}),
      [META_PROTOCOL_VERSION]: LATEST_PROTOCOL_VERSION,
      [META_CLIENT_CAPABILITIES]: session.clientCapabilities,
      [META_LOG_LEVEL]: state.level ?? this.options.defaultLogLevel ?? LEGACY_DEFAULTS.defaultLogLevel,
    };
    if (session.clientInfo) meta[META_CLIENT_INFO] = session.clientInfo;
    let params: JsonObject = { ...given, _meta: meta };
    const env = {
      principal,
      signal: out.signal,
      notify: (n: JsonRpcNotification) => out.send(n),
      bridged: session.protocolVersion,
      // The span's mcp.session.id: the digest the store keys the session by, never the id (a credential) itself.
      sessionId: session.key,
    };
    const urls = new RequestUrlQuestions(this.urlElicitations, session, env.notify);
    for (;;) {
      const response = await this.inner.handleRequest({ ...request, params }, env);
      if ('error' in response) return response;
      const result = response.result;
      if (result.resultType !== 'input_required' || !FLOW_METHODS.has(request.method)) {
        urls.settle({});
        return legacyResponse(request.id, legacyResult(result));
      }
      await this.unsubscribe;
      const asked = isJsonObject(result.inputRequests) ? result.inputRequests : {};
      const keys = Object.keys(asked);
      urls.settle(asked);
      // A round that asks nothing (only requestState: "still working") is taken again after the pause it names,
      // as a 2026 client would; the round cap ends a flow that never stops doing that.
      if (keys.length === 0) await pause(retryAfterMs(result), out.signal);
      // Links the client already accepted are not asked again: when nothing else is asked, wait for the person.
      const repeated = urls.repeated(asked);
      if (keys.length > 0 && repeated.size === keys.length) {
        await urls.waitForPerson(asked, repeated, out.signal);
        if (out.signal.aborted) throw new McpError(ErrorCode.InvalidRequest, 'The request was cancelled');
      }
      // The next round runs as whoever answered last (the session already checked it is the same subject): the
      // scopes and roles of that request's token, as a 2026 client's next round would carry, not the first one's.
      let answeredBy: Principal | undefined;
      const answers = await Promise.all(
        keys.map((key) => {
          if (repeated.has(key)) return { result: { action: 'accept' }, by: undefined } satisfies Answered;
          const question = asked[key] as JsonObject;
          return this.ask(session, principal, urls.outgoing(question), out).then((a) => {
            if (a.by) answeredBy = a.by;
            urls.answered(question, a.result);
            return a;
          });
        }),
      );
      const inputResponses: JsonObject = {};
      keys.forEach((key, i) => {
        inputResponses[key] = answers[i]!.result;
      });
      if (answeredBy) env.principal = answeredBy;
      params = { ...params, inputResponses };
      if (typeof result.requestState === 'string') params.requestState = result.requestState;
      else delete params.requestState;
    }
  }

  /** Send one question as a server-to-client request and wait for its answer. */
  private ask(
    session: LegacySession,
    principal: Principal | undefined,
    question: JsonObject,
    out: LegacyOutbound,
  ): Promise<Answered> {
    const method = String(question.method);
    const id = `${this.instance}.${(++this.counter).toString(36)}`;
    const params = isJsonObject(question.params) ? question.params : {};
    const timeoutMs = this.options.answerTimeoutMs ?? LEGACY_DEFAULTS.answerTimeoutMs;
    // Taken by the flow's first principal: a later answer's token is the same subject (the session checked it).
    const waited = this.pending.wait(
      {
        id,
        holder: shareKey(principal),
        group: session.key,
        timeoutMs,
        signal: out.signal,
        timedOut: () =>
          new McpError(
            ErrorCode.InternalError,
            `The client did not answer ${method} within ${Math.round(timeoutMs / 1000)} s`,
          ),
        cancelled: () => new McpError(ErrorCode.InvalidRequest, 'The request was cancelled'),
        context: undefined,
      },
      () =>
        out.send({
          jsonrpc: '2.0',
          id,
          method,
          params: legacyRequestParams(method, params, session.protocolVersion),
        }),
    );
    return waited.then(({ message, by }) => {
      if (isJsonObject(message.error)) {
        const e = message.error;
        const said = typeof e.message === 'string' ? e.message : 'no message';
        throw new McpError(
          typeof e.code === 'number' && Number.isInteger(e.code) ? e.code : ErrorCode.InternalError,
          `The client could not answer ${method}: ${said}`,
        );
      }
      return { result: isJsonObject(message.result) ? message.result : {}, by };
    });
  }

  private settleLocal(id: string, sessionKey: string, message: JsonObject, by?: Principal): boolean {
    if (!('result' in message) && !('error' in message)) return false;
    // An answer counts only in the session that was asked: another session cannot answer for it.
    return this.pending.settle(id, sessionKey, { message, by });
  }

  private settleRelayed(answer: RelayedAnswer): void {
    if (!this.settleLocal(answer.id, answer.session, answer.message, answer.principal))
      this.options.logger.info({ id: answer.id }, 'relayed answer for no waiting request');
  }

  private subscribe(session: LegacySession, method: string, uri: unknown): JsonObject {
    if (typeof uri !== 'string' || uri === '')
      throw new McpError(ErrorCode.InvalidParams, 'Invalid params: uri must be a non-empty string');
    let set = this.subscriptions.get(session.key);
    if (method === 'resources/unsubscribe') {
      set?.delete(uri);
      return {};
    }
    if (!set) {
      // Sessions that never end (no DELETE) must not grow this map without bound: the oldest go first.
      if (this.subscriptions.size >= LEGACY_DEFAULTS.maxSubscribedSessions) {
        const oldest = this.subscriptions.keys().next().value;
        if (oldest !== undefined) this.subscriptions.delete(oldest);
      }
      set = new Set();
      this.subscriptions.set(session.key, set);
    }
    if (!set.has(uri) && set.size >= LEGACY_DEFAULTS.maxSubscriptions)
      throw new McpError(
        ErrorCode.InvalidRequest,
        `Invalid request: a session may subscribe to at most ${LEGACY_DEFAULTS.maxSubscriptions} resources`,
      );
    set.add(uri);
    return {};
  }

  /**
   * What initialize tells the client: the server's own discovery for this caller, as a 2025 revision spells it. Kept
   * for later handshakes only when it is the same for every caller (cacheScope public): a catalog filtered per caller
   * is asked again for each, so no caller is told what another may see.
   */
  private discover(principal: Principal | undefined): Promise<JsonObject> {
    if (this.discovered) return this.discovered;
    return Promise.resolve(
      this.inner.handleRequest(
        {
          jsonrpc: '2.0',
          id: 0,
          method: 'server/discover',
          params: {
            _meta: { [META_PROTOCOL_VERSION]: LATEST_PROTOCOL_VERSION, [META_CLIENT_CAPABILITIES]: {} },
          },
        },
        { principal, signal: new AbortController().signal, notify: () => {} },
      ),
    ).then((response) => {
      if ('error' in response)
        throw new McpError(response.error.code, response.error.message, response.error.data);
      const r = response.result;
      const caps = { ...(r.capabilities as JsonObject) };
      // The bridge sends a 2025 session no list_changed notifications, so it does not promise them.
      for (const kind of ['tools', 'prompts', 'resources'])
        if (isJsonObject(caps[kind])) caps[kind] = withoutListChanged(caps[kind]);
      // resources/subscribe is answered by the bridge for every resource server.
      if (isJsonObject(caps.resources)) caps.resources = { ...caps.resources, subscribe: true };
      const out: JsonObject = { capabilities: caps, serverInfo: (r._meta as JsonObject)?.[META_SERVER_INFO] };
      if (typeof r.instructions === 'string') out.instructions = r.instructions;
      if (r.cacheScope === 'public') this.discovered ??= Promise.resolve(out);
      return out;
    });
  }

  private stateKey(session: LegacySession): string {
    return `mrtr:legacy-session:${session.key}`;
  }

  private async sessionState(session: LegacySession): Promise<SessionState> {
    const entry = await this.store.get(this.stateKey(session));
    return entry ? (JSON.parse(entry.value) as SessionState) : {};
  }

  private async updateState(
    session: LegacySession,
    change: (s: SessionState) => SessionState,
  ): Promise<void> {
    const key = this.stateKey(session);
    const ttl = Math.max(1, this.maxAgeMs - (Date.now() - session.issuedAt));
    for (let attempt = 0; attempt < 5; attempt++) {
      const entry = await this.store.get(key);
      const next = JSON.stringify(change(entry ? (JSON.parse(entry.value) as SessionState) : {}));
      if (
        entry
          ? await this.store.replace(key, entry.version, next, ttl)
          : await this.store.create(key, next, ttl)
      )
        return;
    }
    throw new StoreContendedError('the session state kept changing under this update');
  }

  private ok(request: JsonRpcRequest, result: JsonObject): JsonRpcResponse {
    return legacyResponse(request.id, result);
  }

  private failure(id: JsonRpcRequest['id'], error: unknown): JsonRpcResponse {
    if (error instanceof McpError) return errorResponse(id, error.code, error.message, error.data);
    this.options.logger.error(
      { id, err: error instanceof Error ? error.stack : String(error) },
      'legacy bridge failed',
    );
    return errorResponse(id, ErrorCode.InternalError, 'Internal error');
  }
}

/** The pause a state-only round asks for (`_meta` retry-after hint), within bounds; 250 ms without one. */
function retryAfterMs(result: JsonObject): number {
  const hint = isJsonObject(result._meta) ? result._meta[META_RETRY_AFTER_MS] : undefined;
  return typeof hint === 'number' && Number.isFinite(hint) ? Math.min(Math.max(hint, 0), 60_000) : 250;
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return pauseUntilAborted(ms, signal, () => {
    throw new McpError(ErrorCode.InvalidRequest, 'The request was cancelled');
  });
}

/** A 2026-07-28 result as a 2025 client reads it: no `resultType`. */
function legacyResult(result: JsonObject): JsonObject {
  const { resultType: _complete, ...rest } = result;
  return rest;
}

function withoutListChanged(capability: JsonObject): JsonObject {
  const { listChanged: _notSent, ...rest } = capability;
  return rest;
}
