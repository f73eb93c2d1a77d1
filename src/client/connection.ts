// One MCP connection: the protocol generation found out on the first request (server/discover probe, or forced),
// the version negotiated, every request sent with 2026-07-28's per-request `_meta` (or on a 2025 session), and plain
// requests read. The rounds of a call are built on `exchange`; nothing here answers a question or loops over rounds.
import {
  type ClientCapabilities,
  ErrorCode,
  type Implementation,
  isJsonObject,
  type JsonObject,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  LATEST_PROTOCOL_VERSION,
  LEGACY_PROTOCOL_VERSIONS,
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_PROTOCOL_VERSION,
  MRTR_METHODS,
  type Result,
  SUPPORTED_PROTOCOL_VERSIONS,
  TimeLimitError,
} from '../protocol/index.js';
import { followAbort } from '../protocol/internal.js';
import { CLIENT_DEFAULTS } from './driver.js';
import { isDiscoverResult, isLegacyStatus, offeredVersions, startingEra } from './era.js';
import { abortError, ProtocolViolation, RemoteError, TransportFailure } from './errors.js';
import type { ExchangeOptions } from './exchange-options.js';
import { isModernError, LEGACY_HINT_STATUSES } from './legacy.js';
import { LegacySession } from './legacy-session.js';
import type { ClientTransport } from './transport.js';

export interface RequestOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  onNotification?: (n: JsonRpcNotification) => void;
  headers?: Record<string, string>;
}

export type { ExchangeOptions } from './exchange-options.js';

export interface ConnectionOptions {
  transport: ClientTransport;
  clientInfo: Implementation;
  capabilities: ClientCapabilities;
  /** Version to ask for first. */
  protocolVersion?: string | undefined;
  /** One version forced (McpClientOptions.protocol). */
  protocol?: string | undefined;
  requestTimeoutMs?: number | undefined;
  probeTimeoutMs?: number | undefined;
}

export type Generation = 'unknown' | 'modern' | 'legacy';

export class Connection {
  readonly transport: ClientTransport;
  readonly capabilities: ClientCapabilities;
  /** The server's self-description (from server/discover, or initialize on a 2025 session). */
  serverInfo: Implementation | undefined;
  #version: string;
  #era: Generation = 'unknown';
  #nextId = 1;
  readonly #options: ConnectionOptions;
  /** The 2025 side: its session, and who answers the requests its server sends outside any call. */
  readonly legacy: LegacySession;

  constructor(options: ConnectionOptions) {
    this.#options = options;
    this.transport = options.transport;
    this.capabilities = options.capabilities;
    this.#version = options.protocolVersion ?? LATEST_PROTOCOL_VERSION;
    const start = startingEra(options.protocol, this.transport);
    this.#era = start.era;
    if (start.version !== undefined) this.#version = start.version;
    this.legacy = new LegacySession({
      transport: this.transport,
      nextId: () => this.#nextId++,
      askedVersion: () => this.#version,
      initializeParams: {
        capabilities: this.capabilities,
        clientInfo: options.clientInfo as unknown as JsonObject,
      },
      opened: (server) => {
        this.#version = server.protocolVersion;
        if (server.serverInfo) this.serverInfo = server.serverInfo;
      },
    });
  }

  get generation(): Generation {
    return this.#era;
  }

  get version(): string {
    return this.#version;
  }

  #meta(extra: JsonObject | undefined, capabilities = this.capabilities): JsonObject {
    return {
      ...extra,
      [META_PROTOCOL_VERSION]: this.#version,
      [META_CLIENT_INFO]: this.#options.clientInfo,
      [META_CLIENT_CAPABILITIES]: capabilities,
    };
  }

  /** Learn the server's generation first, if nobody has yet (a round needs it to read its requestState). */
  async learnGeneration(signal: AbortSignal): Promise<void> {
    if (this.#era === 'unknown') await this.#probe(signal);
  }

  /**
   * Send one request and return its response (a JSON-RPC error response is returned, not thrown). Follows an
   * UnsupportedProtocolVersion answer once, to a version both sides support.
   */
  async exchange(method: string, params: JsonObject, o: ExchangeOptions): Promise<JsonRpcResponse> {
    // Probe with server/discover before anything else (stdio.mdx; on HTTP it is the "modern request" to attempt):
    // some legacy servers answer other methods without an initialize, under legacy semantics.
    if (this.#era === 'unknown' && method !== 'server/discover') await this.#probe(o.signal);
    if (this.#era === 'legacy') return this.legacy.exchange(method, params, o);
    for (let attempt = 0; ; attempt++) {
      const id = this.#nextId++;
      const userMeta = isJsonObject(params._meta) ? params._meta : undefined;
      const meta = this.#meta(o.progress ? { ...userMeta, progressToken: id } : userMeta, o.capabilities);
      const message: JsonRpcRequest = { jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } };
      let status = 0;
      let response: JsonRpcResponse;
      try {
        response = await this.transport.send({
          message,
          signal: o.signal,
          onNotification: o.onNotification,
          headers: o.headers,
          onHttpStatus: (s) => {
            status = s;
          },
        });
      } catch (error) {
        // streamable-http.mdx: a 4xx without a modern error body comes from a server that does not speak 2026-07-28.
        if (
          this.#era === 'unknown' &&
          error instanceof TransportFailure &&
          isLegacyStatus(error.httpStatus)
        ) {
          this.#era = 'legacy';
          return this.legacy.exchange(method, params, o);
        }
        throw error;
      }
      if (this.#era === 'unknown') {
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
          this.#era = 'legacy';
          return this.legacy.exchange(method, params, o);
        }
        this.#era = 'modern';
      }
      if (
        attempt === 0 &&
        'error' in response &&
        response.error.code === ErrorCode.UnsupportedProtocolVersion
      ) {
        const offered = offeredVersions(response.error.data);
        const pick = SUPPORTED_PROTOCOL_VERSIONS.find((v) => offered.includes(v));
        if (pick !== undefined) {
          this.#version = pick;
          continue;
        }
        // A modern server that speaks only legacy versions besides: initialize one of them.
        const legacy = LEGACY_PROTOCOL_VERSIONS.find((v) => offered.includes(v));
        if (legacy !== undefined && this.transport.legacy && this.#options.protocol === undefined) {
          this.#era = 'legacy';
          this.#version = legacy;
          return this.legacy.exchange(method, params, o);
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
  async #probe(signal: AbortSignal): Promise<void> {
    // Silence means legacy on stdio only: over HTTP the probe may carry an OAuth sign-in, which takes a person as
    // long as it takes (the caller's own signal still bounds it), and the era shows in the status code.
    const timeout =
      this.transport.kind === 'stdio'
        ? AbortSignal.timeout(this.#options.probeTimeoutMs ?? CLIENT_DEFAULTS.probeTimeoutMs)
        : undefined;
    const message: JsonRpcRequest = {
      jsonrpc: '2.0',
      id: this.#nextId++,
      method: 'server/discover',
      params: { _meta: this.#meta(undefined) },
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
        const offered = offeredVersions(response.error.data);
        const pick = SUPPORTED_PROTOCOL_VERSIONS.find((v) => offered.includes(v));
        if (response.error.code === ErrorCode.UnsupportedProtocolVersion && pick !== undefined)
          this.#version = pick;
      } else if (this.transport.kind === 'http') era = LEGACY_HINT_STATUSES.has(status) ? 'legacy' : 'modern';
      else era = 'legacy';
    } catch (error) {
      // No answer in time: a legacy server that ignores requests before initialize.
      const legacyStatus = error instanceof TransportFailure && isLegacyStatus(error.httpStatus);
      if (!legacyStatus && !(timeout?.aborted && !signal.aborted)) throw error;
      era = 'legacy';
    }
    if (this.#era === 'unknown') this.#era = this.transport.legacy ? era : 'modern';
  }

  /** A signal for one request: the caller's, and a time limit (default the connection's `requestTimeoutMs`). */
  withTimeout(options: RequestOptions | undefined): { signal: AbortSignal; done: () => void } {
    const ms = options?.timeoutMs ?? this.#options.requestTimeoutMs ?? 60_000;
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new TimeLimitError(`request timed out after ${ms} ms`)),
      ms,
    );
    const unfollow = followAbort(options?.signal, controller);
    return {
      signal: controller.signal,
      done: () => {
        clearTimeout(timer);
        unfollow();
      },
    };
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
      const response = await this.exchange(method, params, {
        signal,
        onNotification: options?.onNotification,
        headers: options?.headers,
      });
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
}
