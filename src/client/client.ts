// The MCP 2026-07-28 client: per-request `_meta`, standard headers, discovery, lists, and MRTR calls.
import {
  type CallToolResult,
  type ClientCapabilities,
  capabilitiesFor,
  type DetailedTask,
  declaredKinds,
  ErrorCode,
  type GetPromptResult,
  type Implementation,
  type InputKind,
  isJsonObject,
  isLegacyVersion,
  type JsonObject,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  LATEST_PROTOCOL_VERSION,
  LEGACY_PROTOCOL_VERSIONS,
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_PROTOCOL_VERSION,
  META_SERVER_INFO,
  MRTR_METHODS,
  MrtrError,
  negotiateLegacyVersion,
  type PromptDefinition,
  type ReadResourceResult,
  type ResourceDefinition,
  type ResourceTemplateDefinition,
  type Result,
  type ServerCapabilities,
  SUPPORTED_PROTOCOL_VERSIONS,
  TASKS_EXTENSION,
  type ToolDefinition,
} from '../protocol/index.js';
import {
  CLIENT_DEFAULTS,
  type DeclinedAnswer,
  type DriverOptions,
  type DriverTarget,
  driveMrtr,
  type MrtrOutcome,
  type PendingQuestion,
} from './driver.js';
import {
  abortError,
  describeError,
  ProtocolViolation,
  RemoteError,
  SessionExpired,
  TransportFailure,
} from './errors.js';
import { type HeldCallLimits, HeldCalls } from './held-calls.js';
import { HttpClientTransport } from './http-transport.js';
import {
  answerServerRequest,
  isModernError,
  LEGACY_HINT_STATUSES,
  type LegacyServer,
  legacyCapabilities,
  readInitializeResult,
} from './legacy.js';
import { LegacyQuestions } from './legacy-questions.js';
import type { OAuthClient } from './oauth/oauth-client.js';
import type { InputResolver } from './resolvers.js';
import { checkRoundArguments, type RoundOptions, type RoundResult, readRound } from './round-args.js';
import { roundParams } from './round-params.js';
import type { TaskWire } from './task-follow.js';
import { readTask } from './task-shape.js';
import { type HeaderBinding, paramHeaders, planToolHeaders } from './tool-headers.js';
import type { ClientTransport } from './transport.js';
import { type CallEvent, UpstreamCall } from './upstream-call.js';

export const CLIENT_NAME = 'mrtr';
export const CLIENT_VERSION = '0.1.0';

export interface McpClientOptions {
  /** The MCP endpoint URL (Streamable HTTP), or any transport (e.g. `new StdioClientTransport(...)`). */
  server: string | URL | ClientTransport;
  /** Bearer token, used when `server` is a URL. */
  token?: string;
  /** OAuth 2.1 sign-in and tokens, used when `server` is a URL (see docs/client.md "OAuth"). */
  auth?: OAuthClient;
  clientInfo?: Implementation;
  /** Who answers embedded requests. The client declares exactly the kinds its resolvers handle. */
  resolvers?: InputResolver[];
  /** Override the declared capabilities (default: derived from the resolvers' kinds). */
  capabilities?: ClientCapabilities;
  /**
   * Declare the tasks extension (io.modelcontextprotocol/tasks) and follow a tool call the server turns into a task
   * to its end (tasks/get, tasks/update, tasks/cancel). Default true; false declares it on no request, even when
   * `capabilities` names it.
   */
  tasks?: boolean;
  /** Protocol version to ask for first. Default 2026-07-28. */
  protocolVersion?: string;
  /**
   * Force one protocol version: `2026-07-28` (never fall back), or a legacy one (`2025-11-25`, `2025-06-18`,
   * `2025-03-26`: initialize straight away). Default: try 2026-07-28, fall back to the legacy protocol when the server
   * says it does not speak it (basic/versioning.mdx "Backward Compatibility").
   */
  protocol?: string;
  /** Defaults for every MRTR call (per-call options win). */
  mrtr?: Omit<DriverOptions, 'signal' | 'onEvent'>;
  /** Time limit for plain requests (discover, lists). Default 60 000 ms. */
  requestTimeoutMs?: number;
  /** How long the server/discover probe waits before taking silence for a legacy server. Default 10 000 ms. */
  probeTimeoutMs?: number;
  /** Things a person should know but that do not stop the work, e.g. a tool excluded for a bad x-mcp-header. */
  onWarning?: (message: string) => void;
  /**
   * Bounds on the 2025 calls `round()` holds open between rounds: how long one waits for its next round (`holdMs`,
   * default 10 min), how many one holder may hold (`maxPerHolder`, default 100) and all together (`maxTotal`, 1000).
   */
  heldCalls?: Partial<HeldCallLimits>;
}

export interface RequestOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  onNotification?: (n: JsonRpcNotification) => void;
  headers?: Record<string, string>;
}

/** Options of `followTask`: a call's options, and the task's state when the caller already has it (no first poll). */
export interface FollowTaskOptions extends Omit<CallOptions, 'progress' | 'meta'> {
  task?: DetailedTask;
  /**
   * Whether aborting `signal` sends tasks/cancel (default true, as for a call's own task). False: the abort only
   * stops the following, and the task goes on for whoever picks it up — a watcher that is not the task's owner in
   * spirit (a second terminal) should not end it.
   */
  cancelOnAbort?: boolean;
}

export interface CallOptions extends DriverOptions {
  /** Ask the server for progress notifications (surfaced as `notification` events). */
  progress?: boolean;
  /** Extra `_meta` on every round of this call (the protocol's own keys are always the client's). */
  meta?: JsonObject;
}

export interface DiscoverResult extends Result {
  supportedVersions: string[];
  capabilities: ServerCapabilities;
  instructions?: string;
}

export interface RejectedTool {
  name: string;
  reason: string;
}

/** A tool excluded for an invalid x-mcp-header: never called (streamable-http.mdx: clients MUST exclude it). */
class ExcludedTool extends ProtocolViolation {}

export class McpClient {
  readonly transport: ClientTransport;
  readonly capabilities: ClientCapabilities;
  /** Whether this client declares the tasks extension and follows tasks (the `tasks` option). */
  readonly followsTasks: boolean;
  /**
   * What a raw `round()` declares: the capabilities without the tasks extension, since a round returns one answer
   * as it came and cannot carry a task on for its caller.
   */
  private readonly roundCapabilities: ClientCapabilities;
  readonly declared: ReadonlySet<InputKind>;
  readonly resolvers: readonly InputResolver[];
  private readonly clientInfo: Implementation;
  private readonly options: McpClientOptions;
  private protocolVersion: string;
  private nextId = 1;
  private readonly toolHeaders = new Map<string, HeaderBinding[]>();
  private readonly rejected = new Map<string, string>();
  /** The server's self-description from `server/discover` (or undefined before it is called). */
  serverInfo: Implementation | undefined;
  /** Which protocol generation the server speaks: found out on the first request, unless forced. */
  private era: 'unknown' | 'modern' | 'legacy' = 'unknown';
  /** The legacy session's server, once initialize answered. */
  private legacyServer: LegacyServer | undefined;
  private opening: Promise<LegacyServer> | undefined;
  /** The server-request answerers of calls in progress (legacy sessions send requests outside their responses). */
  private readonly activeCalls = new Set<(request: JsonRpcRequest) => Promise<JsonRpcResponse>>();
  /** The 2025 calls round() holds open between rounds. */
  private readonly held: HeldCalls;
  /** round() calls not yet ended (in a round or held): who a request outside any call's stream may belong to. */
  private readonly openRounds = new Set<UpstreamCall>();

  constructor(options: McpClientOptions) {
    this.options = options;
    this.transport =
      typeof options.server === 'string' || options.server instanceof URL
        ? new HttpClientTransport({ url: options.server, token: options.token, auth: options.auth })
        : options.server;
    this.clientInfo = options.clientInfo ?? { name: CLIENT_NAME, version: CLIENT_VERSION };
    this.protocolVersion = options.protocolVersion ?? LATEST_PROTOCOL_VERSION;
    const resolvers = options.resolvers ?? [];
    const base = options.capabilities ?? capabilitiesFor(resolvers.flatMap((r) => [...r.kinds]));
    this.followsTasks = options.tasks !== false;
    this.roundCapabilities = withoutTasks(base);
    this.capabilities = this.followsTasks
      ? { ...base, extensions: { ...base.extensions, [TASKS_EXTENSION]: {} } }
      : this.roundCapabilities;
    this.declared = declaredKinds(this.capabilities);
    this.resolvers = resolvers;
    this.held = new HeldCalls({
      holdMs: options.heldCalls?.holdMs ?? CLIENT_DEFAULTS.heldCallMs,
      maxPerHolder: options.heldCalls?.maxPerHolder ?? CLIENT_DEFAULTS.maxHeldCallsPerHolder,
      maxTotal: options.heldCalls?.maxTotal ?? CLIENT_DEFAULTS.maxHeldCalls,
    });
    const forced = options.protocol;
    if (forced !== undefined) {
      if (isLegacyVersion(forced)) {
        if (!this.transport.legacy)
          throw new MrtrError(
            'ERR_INVALID_OPTION',
            `this transport cannot carry the legacy protocol ${forced}`,
          );
        this.era = 'legacy';
        this.protocolVersion = forced;
      } else if (SUPPORTED_PROTOCOL_VERSIONS.includes(forced)) {
        this.era = 'modern';
        this.protocolVersion = forced;
      } else
        throw new MrtrError(
          'ERR_INVALID_OPTION',
          `protocol ${JSON.stringify(forced)} is not one this client speaks (${[...SUPPORTED_PROTOCOL_VERSIONS, ...LEGACY_PROTOCOL_VERSIONS].join(', ')})`,
        );
    } else if (!this.transport.legacy) this.era = 'modern';
  }

  /** Which protocol generation is in use: `modern` (2026-07-28, MRTR), `legacy` (initialize sessions), or not yet known. */
  get generation(): 'unknown' | 'modern' | 'legacy' {
    return this.era;
  }

  /** The protocol version in use (it changes if the server asks for another one it and we both support). */
  get version(): string {
    return this.protocolVersion;
  }

  /** Tools excluded from `listTools` because of an invalid `x-mcp-header`, with the reason. */
  get rejectedTools(): RejectedTool[] {
    return [...this.rejected].map(([name, reason]) => ({ name, reason }));
  }

  private meta(extra?: JsonObject, capabilities = this.capabilities): JsonObject {
    return {
      ...extra,
      [META_PROTOCOL_VERSION]: this.protocolVersion,
      [META_CLIENT_INFO]: this.clientInfo,
      [META_CLIENT_CAPABILITIES]: capabilities,
    };
  }

  /**
   * Send one request and return its response (a JSON-RPC error response is returned, not thrown). Follows an
   * UnsupportedProtocolVersion answer once, to a version both sides support.
   */
  private async exchange(
    method: string,
    params: JsonObject,
    signal: AbortSignal,
    onNotification?: (n: JsonRpcNotification) => void,
    headers?: Record<string, string>,
    progress?: boolean,
    onServerRequest?: (request: JsonRpcRequest) => Promise<JsonRpcResponse>,
    capabilities?: ClientCapabilities,
  ): Promise<JsonRpcResponse> {
    // Probe with server/discover before anything else (stdio.mdx; on HTTP it is the "modern request" to attempt):
    // some legacy servers answer other methods without an initialize, under legacy semantics.
    if (this.era === 'unknown' && method !== 'server/discover') await this.probe(signal);
    if (this.era === 'legacy')
      return this.legacyExchange(method, params, signal, onNotification, progress, onServerRequest);
    for (let attempt = 0; ; attempt++) {
      const id = this.nextId++;
      const userMeta = isJsonObject(params._meta) ? params._meta : undefined;
      const meta = this.meta(progress ? { ...userMeta, progressToken: id } : userMeta, capabilities);
      const message: JsonRpcRequest = { jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } };
      let status = 0;
      let response: JsonRpcResponse;
      try {
        response = await this.transport.send({
          message,
          signal,
          onNotification,
          headers,
          onHttpStatus: (s) => {
            status = s;
          },
        });
      } catch (error) {
        // streamable-http.mdx: a 4xx without a modern error body comes from a server that does not speak 2026-07-28.
        if (
          this.era === 'unknown' &&
          error instanceof TransportFailure &&
          LEGACY_HINT_STATUSES.has(error.httpStatus ?? 0)
        ) {
          this.era = 'legacy';
          return this.legacyExchange(method, params, signal, onNotification, progress, onServerRequest);
        }
        throw error;
      }
      if (this.era === 'unknown') {
        // A server that answers server/discover with something that is not a DiscoverResult does not know it.
        const notDiscover =
          method === 'server/discover' && 'result' in response && !isDiscoverResult(response.result);
        if (
          notDiscover ||
          ('error' in response &&
            !isModernError(response.error.code) &&
            // stdio.mdx: any other error to the probe means legacy; streamable-http.mdx: only a 4xx does.
            (this.transport.kind === 'stdio' || LEGACY_HINT_STATUSES.has(status)))
        ) {
          this.era = 'legacy';
          return this.legacyExchange(method, params, signal, onNotification, progress, onServerRequest);
        }
        this.era = 'modern';
      }
      if (
        attempt === 0 &&
        'error' in response &&
        response.error.code === ErrorCode.UnsupportedProtocolVersion
      ) {
        const data = response.error.data;
        const offered = isJsonObject(data) && Array.isArray(data.supported) ? data.supported : [];
        const pick = SUPPORTED_PROTOCOL_VERSIONS.find((v) => offered.includes(v));
        if (pick !== undefined) {
          this.protocolVersion = pick;
          continue;
        }
        // A modern server that speaks only legacy versions besides: initialize one of them.
        const legacy = LEGACY_PROTOCOL_VERSIONS.find((v) => offered.includes(v));
        if (legacy !== undefined && this.transport.legacy && this.options.protocol === undefined) {
          this.era = 'legacy';
          this.protocolVersion = legacy;
          return this.legacyExchange(method, params, signal, onNotification, progress, onServerRequest);
        }
      }
      return response;
    }
  }

  /**
   * Send server/discover to learn the server's generation: a DiscoverResult or a modern error means modern; a 4xx
   * without a modern error (HTTP), any other error (stdio), a result that is not a DiscoverResult, or no answer in
   * time, means legacy.
   */
  private async probe(signal: AbortSignal): Promise<void> {
    // Silence means legacy on stdio only: over HTTP the probe may carry an OAuth sign-in, which takes a person as
    // long as it takes (the caller's own signal still bounds it), and the era shows in the status code.
    const timeout =
      this.transport.kind === 'stdio'
        ? AbortSignal.timeout(this.options.probeTimeoutMs ?? CLIENT_DEFAULTS.probeTimeoutMs)
        : undefined;
    const id = this.nextId++;
    const message: JsonRpcRequest = {
      jsonrpc: '2.0',
      id,
      method: 'server/discover',
      params: { _meta: this.meta() },
    };
    let status = 0;
    let era: 'modern' | 'legacy';
    try {
      const response = await this.transport.send({
        message,
        signal: timeout ? AbortSignal.any([signal, timeout]) : signal,
        onHttpStatus: (s) => {
          status = s;
        },
      });
      if ('result' in response) era = isDiscoverResult(response.result) ? 'modern' : 'legacy';
      else if (isModernError(response.error.code)) {
        era = 'modern';
        // UnsupportedProtocolVersion: ask in a version both sides speak from the next request on.
        const data = response.error.data;
        const offered = isJsonObject(data) && Array.isArray(data.supported) ? data.supported : [];
        const pick = SUPPORTED_PROTOCOL_VERSIONS.find((v) => offered.includes(v));
        if (response.error.code === ErrorCode.UnsupportedProtocolVersion && pick !== undefined)
          this.protocolVersion = pick;
      } else if (this.transport.kind === 'http') era = LEGACY_HINT_STATUSES.has(status) ? 'legacy' : 'modern';
      else era = 'legacy';
    } catch (error) {
      const legacyStatus =
        error instanceof TransportFailure && LEGACY_HINT_STATUSES.has(error.httpStatus ?? 0);
      // No answer in time: a legacy server that ignores requests before initialize.
      if (!legacyStatus && !(timeout?.aborted && !signal.aborted)) throw error;
      era = 'legacy';
    }
    if (this.era === 'unknown') this.era = this.transport.legacy ? era : 'modern';
  }

  /** Initialize the legacy session once (concurrent callers share the handshake). */
  private openLegacy(signal: AbortSignal): Promise<LegacyServer> {
    if (this.legacyServer) return Promise.resolve(this.legacyServer);
    this.opening ??= (async () => {
      const wire = this.transport.legacy;
      if (!wire) throw new ProtocolViolation('this transport cannot carry the legacy protocol');
      const asked = negotiateLegacyVersion(this.protocolVersion);
      wire.beginSession(asked);
      const message: JsonRpcRequest = {
        jsonrpc: '2.0',
        id: this.nextId++,
        method: 'initialize',
        params: {
          protocolVersion: asked,
          capabilities: legacyCapabilities(this.capabilities, asked),
          clientInfo: this.clientInfo as unknown as JsonObject,
        },
      };
      const response = await this.transport.send({ message, signal });
      if ('error' in response) throw new RemoteError(response.error);
      const server = readInitializeResult(response.result as JsonObject);
      wire.beginSession(server.protocolVersion);
      await wire.notify({ jsonrpc: '2.0', method: 'notifications/initialized' }, signal);
      wire.listen((request) => this.answerOutsideCalls(request));
      this.protocolVersion = server.protocolVersion;
      if (server.serverInfo) this.serverInfo = server.serverInfo;
      this.legacyServer = server;
      return server;
    })().finally(() => {
      this.opening = undefined;
    });
    return this.opening;
  }

  /**
   * A request a legacy server sent outside any call's stream (HTTP: the session's GET stream, where the official SDK
   * sends its questions; stdio: while several requests are in flight). 2025 requests name no call, so it goes to the
   * call in progress (the latest driven one, if several are) — but never to a round() call unless that call is the
   * only one open: a held call's question handed to another caller's call would be answered by the wrong person.
   */
  private answerOutsideCalls(request: JsonRpcRequest): Promise<JsonRpcResponse> {
    const refuse = (message: string) =>
      Promise.resolve<JsonRpcResponse>({
        jsonrpc: '2.0',
        id: request.id,
        error: { code: ErrorCode.InternalError, message },
      });
    const calls = [...this.activeCalls];
    const rounds = [...this.openRounds];
    if (rounds.length === 0) {
      const answer = calls[calls.length - 1];
      return answer ? answer(request) : refuse('no call is in progress to answer this request');
    }
    if (rounds.length === 1 && calls.length === 0)
      return (rounds[0] as UpstreamCall).onServerRequest(request);
    return refuse(
      `this client has ${rounds.length + calls.length} calls open and cannot tell which one this request belongs to`,
    );
  }

  /** One request on the legacy session: no per-request `_meta` of 2026-07-28, the session re-opened once if it ended. */
  private async legacyExchange(
    method: string,
    params: JsonObject,
    signal: AbortSignal,
    onNotification: ((n: JsonRpcNotification) => void) | undefined,
    progress: boolean | undefined,
    onServerRequest: ((request: JsonRpcRequest) => Promise<JsonRpcResponse>) | undefined,
  ): Promise<JsonRpcResponse> {
    for (let attempt = 0; ; attempt++) {
      const server = await this.openLegacy(signal);
      const id = this.nextId++;
      if (method === 'server/discover')
        return {
          jsonrpc: '2.0',
          id,
          result: {
            resultType: 'complete',
            supportedVersions: [server.protocolVersion],
            capabilities: server.capabilities,
            ...(server.instructions === undefined ? {} : { instructions: server.instructions }),
            ...(server.serverInfo ? { serverInfo: server.serverInfo as unknown as JsonObject } : {}),
          },
        };
      const userMeta = isJsonObject(params._meta) ? { ...params._meta } : {};
      if (progress) userMeta.progressToken = id;
      const sent: JsonObject = { ...params };
      delete sent._meta;
      if (Object.keys(userMeta).length > 0) sent._meta = userMeta;
      const message: JsonRpcRequest = { jsonrpc: '2.0', id, method, params: sent };
      // 2025 Streamable HTTP: a closed stream is not a cancellation, so the client says it (stdio's transport does).
      const cancel = () =>
        void this.transport.legacy
          ?.notify({
            jsonrpc: '2.0',
            method: 'notifications/cancelled',
            params: { requestId: id, reason: describeError(signal.reason) },
          })
          .catch(() => {});
      if (this.transport.kind === 'http') signal.addEventListener('abort', cancel, { once: true });
      try {
        return await this.transport.send({ message, signal, onNotification, onServerRequest });
      } catch (error) {
        // A legacy server may end its session (HTTP 404): start a new one and send the request again, once.
        if (error instanceof SessionExpired && attempt === 0) {
          this.legacyServer = undefined;
          this.transport.legacy?.resetSession();
          continue;
        }
        throw error;
      } finally {
        signal.removeEventListener('abort', cancel);
      }
    }
  }

  private withTimeout(options: RequestOptions | undefined): { signal: AbortSignal; done: () => void } {
    const ms = options?.timeoutMs ?? this.options.requestTimeoutMs ?? 60_000;
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new MrtrError('ERR_TIMEOUT', `request timed out after ${ms} ms`)),
      ms,
    );
    const signal = options?.signal ? AbortSignal.any([options.signal, controller.signal]) : controller.signal;
    return { signal, done: () => clearTimeout(timer) };
  }

  /**
   * A plain request (not an MRTR call). Throws `RemoteError` for a JSON-RPC error, `ProtocolViolation`,
   * `TransportFailure` or `RequestAborted` otherwise.
   */
  async request<R extends Result = Result>(
    method: string,
    params: JsonObject = {},
    options?: RequestOptions,
  ): Promise<R> {
    const { signal, done } = this.withTimeout(options);
    try {
      if (signal.aborted) throw abortError(signal);
      const response = await this.exchange(method, params, signal, options?.onNotification, options?.headers);
      if ('error' in response) throw new RemoteError(response.error);
      const result = response.result as JsonObject;
      const rt = result.resultType;
      if (rt === 'input_required')
        throw new ProtocolViolation(
          (MRTR_METHODS as readonly string[]).includes(method)
            ? `${method} needs input: use the MRTR call methods`
            : `server answered input_required to ${method}, which does not support it`,
        );
      if (rt !== undefined && rt !== 'complete')
        throw new ProtocolViolation(`unknown resultType ${JSON.stringify(rt)}`);
      return result as R;
    } finally {
      done();
    }
  }

  /** `server/discover`: versions, capabilities and identity of the server. */
  async discover(options?: RequestOptions): Promise<DiscoverResult> {
    const result = await this.request<DiscoverResult>('server/discover', {}, options);
    if (!Array.isArray(result.supportedVersions) || !isJsonObject(result.capabilities))
      throw new ProtocolViolation('server/discover result lacks supportedVersions or capabilities');
    const info = isJsonObject(result._meta) ? result._meta[META_SERVER_INFO] : undefined;
    const legacy = (result as JsonObject).serverInfo;
    const candidate = isJsonObject(info) ? info : isJsonObject(legacy) ? legacy : undefined;
    if (candidate && typeof candidate.name === 'string') this.serverInfo = candidate as Implementation;
    return result;
  }

  /**
   * Every page of a list, within one time limit for all pages (not one per page) and a bound on the total held in
   * memory: a server cannot keep the client paging, or fill it, for ever.
   */
  private async listAll<T>(method: string, field: string, options?: RequestOptions): Promise<T[]> {
    const { signal, done } = this.withTimeout(options);
    const items: T[] = [];
    let chars = 0;
    let cursor: string | undefined;
    try {
      for (let page = 0; page < CLIENT_DEFAULTS.maxListPages; page++) {
        const result = await this.request(method, cursor === undefined ? {} : { cursor }, {
          ...options,
          signal,
        });
        const list = result[field];
        if (!Array.isArray(list)) throw new ProtocolViolation(`${method} result has no ${field} array`);
        for (const item of list) {
          chars += jsonSize(item);
          if (items.length >= CLIENT_DEFAULTS.maxListItems || chars > CLIENT_DEFAULTS.maxListChars)
            throw new ProtocolViolation(
              `${method} returned more than ${CLIENT_DEFAULTS.maxListItems} items or ${CLIENT_DEFAULTS.maxListChars} characters in all; stopped at page ${page + 1}`,
            );
          items.push(item as T);
        }
        const next = result.nextCursor;
        if (typeof next !== 'string' || next === '') return items;
        cursor = next;
      }
      throw new ProtocolViolation(`${method} returned more than ${CLIENT_DEFAULTS.maxListPages} pages`);
    } finally {
      done();
    }
  }

  /**
   * All tools (following pagination). Tools whose `x-mcp-header` annotations break the rules are left out, as
   * streamable-http.mdx requires, and reported through `onWarning` and `rejectedTools`.
   */
  async listTools(options?: RequestOptions): Promise<ToolDefinition[]> {
    const all = await this.listAll<ToolDefinition>('tools/list', 'tools', options);
    const kept: ToolDefinition[] = [];
    this.toolHeaders.clear();
    this.rejected.clear();
    for (const tool of all) {
      if (!isJsonObject(tool) || typeof tool.name !== 'string') continue;
      const plan = planToolHeaders(tool.inputSchema);
      if (!plan.ok) {
        this.rejected.set(tool.name, plan.reason);
        this.options.onWarning?.(`tool "${tool.name}" excluded: ${plan.reason}`);
        continue;
      }
      this.toolHeaders.set(tool.name, plan.bindings);
      kept.push(tool);
    }
    return kept;
  }

  listPrompts(options?: RequestOptions): Promise<PromptDefinition[]> {
    return this.listAll('prompts/list', 'prompts', options);
  }
  listResources(options?: RequestOptions): Promise<ResourceDefinition[]> {
    return this.listAll('resources/list', 'resources', options);
  }
  listResourceTemplates(options?: RequestOptions): Promise<ResourceTemplateDefinition[]> {
    return this.listAll('resources/templates/list', 'resourceTemplates', options);
  }

  private get serverLabel(): string {
    return this.serverInfo?.name ?? this.transport.label;
  }

  private async drive<R extends Result>(
    method: string,
    params: JsonObject,
    target: string | undefined,
    options: CallOptions,
    headersFor?: (signal: AbortSignal) => Promise<Record<string, string>>,
    resume?: DriverTarget['resume'],
  ): Promise<MrtrOutcome<R>> {
    const { progress, meta, ...mrtr } = options;
    const onEvent = mrtr.onEvent;
    // Legacy sessions ask mid-request instead of with input_required: the same resolvers answer, under the same
    // bounds (questions per round, rounds per call), one at a time; a question nobody here may answer ends the call
    // with needs_person, as it would under MRTR.
    const unanswered: PendingQuestion[] = [];
    const declined: DeclinedAnswer[] = [];
    const driverOptions = { ...this.options.mrtr, ...mrtr };
    const bounds = {
      maxRounds: driverOptions.maxRounds ?? CLIENT_DEFAULTS.maxRounds,
      maxQuestionsPerRound: driverOptions.maxQuestionsPerRound ?? CLIENT_DEFAULTS.maxQuestionsPerRound,
      declared: this.declared,
    };
    const questionsFor = (callSignal: AbortSignal) =>
      new LegacyQuestions(bounds, (request, key, round, stop) =>
        answerServerRequest(request, key, {
          resolvers: this.resolvers,
          declared: this.declared,
          ctx: {
            signal: AbortSignal.any([callSignal, stop]),
            round,
            method,
            target,
            server: this.serverLabel,
            endpoint: this.transport.endpoint ?? this.transport.label,
          },
          unanswered,
          onAsked: (q) =>
            onEvent?.({
              type: 'input_needed',
              round,
              key: q.key,
              kind: q.kind,
              message: q.message,
              why: q.personRequired,
            }),
          onAnswered: (q, by, action) => {
            if (action === 'decline' || action === 'cancel') declined.push({ round, key: q.key, action });
            onEvent?.({ type: 'answered', round, key: q.key, by, action });
          },
        }),
      );
    const driverTarget: DriverTarget = {
      method,
      params: meta ? { ...params, _meta: meta } : params,
      target,
      declared: this.declared,
      resolvers: this.resolvers,
      server: this.serverLabel,
      endpoint: this.transport.endpoint ?? this.transport.label,
      // tasks.md "Supported Methods": only tools/call may become a task.
      tasks: method === 'tools/call' && this.followsTasks ? this.taskWire() : undefined,
      resume,
      send: (p, signal, onNotification) =>
        (async () => {
          // The call's own signal (its deadline included) bounds everything a round does, header planning too.
          const headers = headersFor ? await headersFor(signal) : undefined;
          const questions = questionsFor(signal);
          const answer = (request: JsonRpcRequest) => questions.handle(request);
          this.activeCalls.add(answer);
          try {
            return await this.exchange(
              method,
              p,
              AbortSignal.any([signal, questions.signal]),
              onNotification,
              headers,
              progress,
              answer,
            );
          } catch (error) {
            // Stopped from the questions' side (a bound broken, the person gone): that is how the call ends.
            throw questions.failure ?? error;
          } finally {
            this.activeCalls.delete(answer);
            // Nothing is reported while a question is still on screen.
            await questions.close();
          }
        })(),
    };
    const outcome = await driveMrtr<R>(driverTarget, driverOptions);
    // A question nobody here could answer is what the person needs to hear, unless the call ended for something
    // they cannot fix here: an interruption, the deadline, or the server breaking its bounds.
    const overrides = ['aborted', 'timeout', 'round_cap', 'protocol_error'];
    if (unanswered.length > 0 && !overrides.includes(outcome.status))
      return { status: 'needs_person', rounds: outcome.rounds, pending: unanswered };
    if (outcome.status === 'complete' && declined.length > 0) outcome.declined.push(...declined);
    return outcome;
  }

  /**
   * The Mcp-Param-* headers a tools/call of `name` with `args` carries (Streamable HTTP and 2026-07-28 only), from
   * the tool's x-mcp-header annotations; `refresh` lists the tools when the tool is not known yet. Throws for a tool
   * excluded for a bad annotation, and a TypeError for an argument its header cannot carry.
   */
  private async toolCallHeaders(
    name: string,
    args: JsonObject,
    signal: AbortSignal,
    refresh: (signal: AbortSignal) => Promise<void>,
  ): Promise<Record<string, string>> {
    // Mcp-Param-* headers exist on Streamable HTTP only (other transports may ignore x-mcp-header).
    if (this.transport.kind !== 'http' || this.era === 'legacy') return {};
    // The tool's x-mcp-header annotations decide which Mcp-Param-* headers the call must carry.
    if (!this.toolHeaders.has(name)) await refresh(signal);
    const excluded = this.rejected.get(name);
    if (excluded !== undefined) throw new ExcludedTool(`tool "${name}" was excluded: ${excluded}`);
    return paramHeaders(this.toolHeaders.get(name) ?? [], args);
  }

  /**
   * Call a tool and carry it through every input_required round. Resolves with the outcome; it does not throw for
   * anything the server, the network or the person does. Over HTTP it rejects with a TypeError, before anything is
   * sent, when an `x-mcp-header` argument cannot be carried in its header (an object, an array, or a number that is
   * not a safe integer): the caller's arguments break the tool's declared contract.
   */
  async callTool(
    name: string,
    args: JsonObject = {},
    options: CallOptions = {},
  ): Promise<MrtrOutcome<CallToolResult>> {
    const reason = this.rejected.get(name);
    if (reason !== undefined)
      return {
        status: 'protocol_error',
        rounds: 0,
        message: `tool "${name}" was excluded: ${reason}`,
      };
    // One deadline for the whole call: a tools/list refresh inside it, and the retry after HeaderMismatch, count too.
    const timeoutMs = options.timeoutMs ?? this.options.mrtr?.timeoutMs ?? CLIENT_DEFAULTS.timeoutMs;
    const endsAt = Date.now() + timeoutMs;
    const left = () => Math.max(1, endsAt - Date.now());
    let refreshed = false;
    const refresh = (signal: AbortSignal | undefined) =>
      this.listTools({ signal, timeoutMs: left() }).catch((error: unknown) => {
        // Only the call's own end (abort, deadline) stops it; a list that fails just leaves the headers unplanned.
        if (signal?.aborted) throw error;
      });
    const headersFor = (signal: AbortSignal) =>
      this.toolCallHeaders(name, args, signal, async () => {
        if (refreshed) return;
        refreshed = true;
        await refresh(signal);
      });
    const outcome = await this.drive<CallToolResult>(
      'tools/call',
      { name, arguments: args },
      name,
      { ...options, timeoutMs },
      headersFor,
    );
    // streamable-http.mdx: on HeaderMismatch, refresh tools/list (the schema may have changed) and retry once.
    if (outcome.status === 'server_error' && outcome.error.code === ErrorCode.HeaderMismatch && !refreshed) {
      refreshed = true;
      this.toolHeaders.delete(name);
      if (Date.now() >= endsAt) return { status: 'timeout', rounds: outcome.rounds, timeoutMs };
      try {
        await refresh(options.signal);
      } catch {
        return options.signal?.aborted
          ? { status: 'aborted', rounds: outcome.rounds, reason: options.signal.reason }
          : { status: 'timeout', rounds: outcome.rounds, timeoutMs };
      }
      if (this.rejected.has(name))
        return {
          status: 'protocol_error',
          rounds: outcome.rounds,
          message: `tool "${name}" was excluded: ${this.rejected.get(name)}`,
        };
      const again = await this.drive<CallToolResult>(
        'tools/call',
        { name, arguments: args },
        name,
        { ...options, timeoutMs: left() },
        headersFor,
      );
      return { ...again, rounds: again.rounds + outcome.rounds } as MrtrOutcome<CallToolResult>;
    }
    return outcome;
  }

  /** The extension's three requests, each with the client's `_meta` (the tasks extension declared) and a new id. */
  private taskWire(): TaskWire {
    return {
      get: (taskId, signal) => this.exchange('tasks/get', { taskId }, signal),
      update: (taskId, inputResponses, signal) =>
        this.exchange('tasks/update', { taskId, inputResponses: inputResponses as JsonObject }, signal),
      cancel: (taskId, signal) => this.exchange('tasks/cancel', { taskId }, signal),
    };
  }

  /** Refuse a task request from a client that does not declare the extension: the server would refuse it (-32021). */
  private checkFollowsTasks(what: string, taskId: unknown): asserts taskId is string {
    if (!this.followsTasks)
      throw new MrtrError('ERR_INVALID_OPTION', `${what}: this client was made with tasks: false`);
    if (typeof taskId !== 'string' || taskId === '')
      throw new MrtrError('ERR_INVALID_ARGUMENT', `${what}: taskId must be a non-empty string`);
  }

  /**
   * One tasks/get: the task's current state (its result, error or questions inlined). Throws RemoteError for a
   * JSON-RPC error (-32602 for an unknown, expired or someone else's task), ProtocolViolation for a malformed task,
   * TransportFailure or RequestAborted as `request` does.
   */
  async getTask(taskId: string, options?: RequestOptions): Promise<DetailedTask> {
    this.checkFollowsTasks('getTask', taskId);
    const { signal, done } = this.withTimeout(options);
    try {
      if (signal.aborted) throw abortError(signal);
      const response = await this.exchange('tasks/get', { taskId }, signal, options?.onNotification);
      if ('error' in response) throw new RemoteError(response.error);
      return readTask(response.result, 'tasks/get', taskId);
    } finally {
      done();
    }
  }

  /**
   * Follow a task made elsewhere (another process, an earlier run) to its end, exactly as `callTool` follows the
   * task it gets: polling, its questions answered by this client's resolvers under the same bounds (each tasks/update
   * is a round), tasks/cancel on abort (not on timeout: the task goes on; nor with `cancelOnAbort: false`). Resolves
   * with the outcome; a task the server does not know ends as `server_error` (-32602).
   */
  followTask(taskId: string, options: FollowTaskOptions = {}): Promise<MrtrOutcome<CallToolResult>> {
    this.checkFollowsTasks('followTask', taskId);
    const { task, cancelOnAbort, ...call } = options;
    if (task !== undefined) readTask(task, 'options.task', taskId);
    if (cancelOnAbort !== undefined && typeof cancelOnAbort !== 'boolean')
      throw new MrtrError('ERR_INVALID_OPTION', 'followTask: cancelOnAbort must be a boolean');
    return this.drive<CallToolResult>('tools/call', {}, undefined, call, undefined, {
      taskId,
      seed: task,
      cancelOnAbort: cancelOnAbort ?? true,
    });
  }

  /**
   * tasks/cancel: ask the server to stop a task. Cancellation is cooperative: the server acknowledges, and the task
   * may still end otherwise. Throws as `getTask` does.
   */
  async cancelTask(taskId: string, options?: RequestOptions): Promise<void> {
    this.checkFollowsTasks('cancelTask', taskId);
    const { signal, done } = this.withTimeout(options);
    try {
      if (signal.aborted) throw abortError(signal);
      const response = await this.exchange('tasks/cancel', { taskId }, signal);
      if ('error' in response) throw new RemoteError(response.error);
    } finally {
      done();
    }
  }

  /**
   * One round of a tools/call, prompts/get or resources/read, and its raw answer: `complete`, or `input_required` with
   * the server's `inputRequests` and the `requestState` to send back, with their answers, in the next round. Nothing
   * is answered and no loop is driven. The round is built as the driver builds its rounds (the same `_meta` and
   * headers); `requestState` goes out byte for byte and `inputResponses` as given.
   *
   * A 2025 server asks mid-call instead: its call is held open, its requests come back as `input_required` whose
   * `requestState` is a handle to the held call — unguessable, good for one round, and only for `options.holder`
   * (see `heldCalls` for the bounds and the time limit). Throws RemoteError for a JSON-RPC error (its code kept),
   * MrtrError ERR_INVALID_ARGUMENT for a bad argument, HeldCallError for a handle it cannot go on with, the 429 RoundRefused of a holder
   * past its share, and ProtocolViolation, TransportFailure or RequestAborted as `request` does.
   */
  async round<R extends Result = Result>(
    method: string,
    params: JsonObject,
    options: RoundOptions = {},
  ): Promise<RoundResult<R>> {
    const target = checkRoundArguments(method, params, options);
    const { requestState, inputResponses, onNotification } = options;
    const holder = options.holder ?? '';
    const timeoutMs = options.timeoutMs ?? this.options.mrtr?.timeoutMs ?? CLIENT_DEFAULTS.timeoutMs;
    const { signal, done } = this.withTimeout({ signal: options.signal, timeoutMs });
    try {
      if (signal.aborted) throw abortError(signal);
      // Whether a requestState is a 2026 server's state or a held call's handle depends on who the server is.
      if (requestState !== undefined && this.era === 'unknown') await this.probe(signal);
      if (requestState !== undefined && this.era === 'legacy') {
        const call = this.held.peek(requestState, holder);
        if (call.method !== method || call.target !== target)
          throw new MrtrError(
            'ERR_INVALID_ARGUMENT',
            `round: requestState holds a ${call.method} of "${call.target}", not a ${method} of "${target}"`,
          );
        // Checked before the handle is spent: a round with an answer missing can be sent again, corrected.
        const problem = call.problemWith(inputResponses ?? {});
        if (problem !== undefined) throw new MrtrError('ERR_INVALID_ARGUMENT', `round: ${problem}`);
        this.held.take(requestState, holder);
        call.answer(inputResponses ?? {});
        return await this.nextRound<R>(call, holder, signal, onNotification);
      }
      // A 2025 call takes its place in the holder's share as it starts (held-calls.ts): the era decides, so learn it.
      if (this.era === 'unknown') await this.probe(signal);
      const args = isJsonObject(params.arguments) ? params.arguments : {};
      const headers =
        method === 'tools/call'
          ? await this.toolCallHeaders(target, args, signal, (s) =>
              this.listTools({ signal: s }).then(
                () => undefined,
                (error: unknown) => {
                  // Only the round's own end stops it; a list that fails just leaves the headers unplanned.
                  if (s.aborted) throw error;
                },
              ),
            )
          : undefined;
      const call = new UpstreamCall(method, target, this.declared, this.maxQuestionsPerRound);
      // Refused before anything is sent: a call that may ask could not be held for this holder.
      if (this.era === 'legacy') this.held.enter(call, holder);
      this.openRounds.add(call);
      void call.ended.then(() => this.openRounds.delete(call));
      call.follow(
        this.exchange(
          method,
          roundParams(params, inputResponses, requestState),
          call.signal,
          (n) => call.onNotification?.(n),
          headers,
          false,
          call.onServerRequest,
          this.roundCapabilities,
        ),
      );
      return await this.nextRound<R>(call, holder, signal, onNotification);
    } catch (error) {
      // streamable-http.mdx: a HeaderMismatch means the tool's schema may have changed; plan its headers anew.
      if (error instanceof RemoteError && error.code === ErrorCode.HeaderMismatch)
        this.toolHeaders.delete(target);
      throw error;
    } finally {
      done();
    }
  }

  private get maxQuestionsPerRound(): number {
    return this.options.mrtr?.maxQuestionsPerRound ?? CLIENT_DEFAULTS.maxQuestionsPerRound;
  }

  /** What the call does next, as one round: its answer, or the questions it asks with the handle that holds it. */
  private async nextRound<R extends Result>(
    call: UpstreamCall,
    holder: string,
    signal: AbortSignal,
    onNotification: ((n: JsonRpcNotification) => void) | undefined,
  ): Promise<RoundResult<R>> {
    call.onNotification = onNotification;
    let event: CallEvent;
    try {
      event = await call.next(signal);
    } catch (error) {
      // The round ended (its signal, its deadline) while the call ran: the upstream call ends with it.
      call.cancel(error instanceof Error ? error : new MrtrError('ERR_ABORTED', String(error)));
      throw error;
    } finally {
      call.onNotification = undefined;
    }
    if (event.type === 'failed') throw event.error;
    if (event.type === 'answered')
      return readRound<R>(call.method, event.response, this.declared, this.maxQuestionsPerRound);
    return {
      resultType: 'input_required',
      inputRequests: event.inputRequests,
      requestState: this.held.hold(call, holder),
    };
  }

  /** Get a prompt, carrying it through every input_required round. */
  getPrompt(
    name: string,
    args: Record<string, string> = {},
    options: CallOptions = {},
  ): Promise<MrtrOutcome<GetPromptResult>> {
    return this.drive<GetPromptResult>('prompts/get', { name, arguments: args }, name, options);
  }

  /** Read a resource, carrying it through every input_required round. */
  readResource(uri: string, options: CallOptions = {}): Promise<MrtrOutcome<ReadResourceResult>> {
    return this.drive<ReadResourceResult>('resources/read', { uri }, uri, options);
  }

  async close(): Promise<void> {
    this.held.dropAll();
    for (const r of this.resolvers) r.close?.();
    await this.transport.close();
  }
}

/** The capabilities without the tasks extension (and without an `extensions` left empty by removing it). */
function withoutTasks(capabilities: ClientCapabilities): ClientCapabilities {
  if (!capabilities.extensions || !Object.hasOwn(capabilities.extensions, TASKS_EXTENSION))
    return capabilities;
  const { [TASKS_EXTENSION]: _tasks, ...others } = capabilities.extensions;
  const { extensions: _all, ...rest } = capabilities;
  return Object.keys(others).length > 0 ? { ...rest, extensions: others } : rest;
}

/** A DiscoverResult, or at least a 2026-07-28 result: legacy servers never send `resultType`. */
function isDiscoverResult(result: unknown): boolean {
  return isJsonObject(result) && (Array.isArray(result.supportedVersions) || result.resultType !== undefined);
}

/** Characters of an item as JSON, or a huge number for one too deep to measure (it is refused either way). */
function jsonSize(item: unknown): number {
  try {
    return JSON.stringify(item)?.length ?? 0;
  } catch {
    return Number.MAX_SAFE_INTEGER;
  }
}

/** The result of a complete outcome, or an ERR_CALL_INCOMPLETE MrtrError describing how the call ended otherwise. */
export function unwrapOutcome<R extends Result>(outcome: MrtrOutcome<R>): R {
  if (outcome.status === 'complete') return outcome.result;
  throw new MrtrError('ERR_CALL_INCOMPLETE', describeOutcome(outcome));
}

/** One line a person can read about how a call ended. */
export function describeOutcome(outcome: MrtrOutcome): string {
  const r = `after ${outcome.rounds} round${outcome.rounds === 1 ? '' : 's'}`;
  switch (outcome.status) {
    case 'complete':
      return (outcome.result as JsonObject).isError === true ? `tool error ${r}` : `complete ${r}`;
    case 'needs_person': {
      const q = outcome.pending
        .map(
          (p) =>
            `"${p.message ?? p.key}" (input key ${JSON.stringify(p.key)}; ${p.why === 'no_resolver' ? 'nothing here can answer it' : p.why.replace('_', ' ')})`,
        )
        .join(', ');
      return `needs a person to answer ${q} ${r}`;
    }
    case 'round_cap':
      return `stopped at the round cap (${outcome.maxRounds} retries) ${r}: the server still asked for input`;
    case 'server_error':
      return `server error ${outcome.error.code}: ${outcome.error.message}`;
    case 'protocol_error':
      return `protocol error ${r}: ${outcome.message}`;
    case 'transport_error':
      return `transport error ${r}: ${outcome.message}`;
    case 'resolver_error':
      return `could not answer "${outcome.key}": ${outcome.message}`;
    case 'timeout':
      return `timed out after ${outcome.timeoutMs} ms (${outcome.rounds} rounds)`;
    case 'aborted':
      return `aborted ${r}`;
    case 'cancelled':
      return `task ${outcome.taskId} was cancelled ${r}: ${outcome.message}`;
  }
}
