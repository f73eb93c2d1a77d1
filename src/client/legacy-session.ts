// A 2025 server's session, as the connection keeps it: the initialize handshake once (concurrent callers share it),
// requests without 2026-07-28's per-request `_meta`, the session opened again once when the server ends it, and the
// server's requests that arrive outside any call's stream handed to the one call they can belong to.
import {
  type ClientCapabilities,
  ErrorCode,
  isJsonObject,
  type JsonObject,
  type JsonRpcRequest,
  type JsonRpcResponse,
  negotiateLegacyVersion,
} from '../protocol/index.js';
import { describeError, ProtocolViolation, RemoteError, SessionExpired } from './errors.js';
import type { ExchangeOptions } from './exchange-options.js';
import { type LegacyServer, legacyCapabilities, readInitializeResult } from './legacy.js';
import type { ClientTransport } from './transport.js';
import type { UpstreamCall } from './upstream-call.js';

/** What the session needs of its connection: ids, the version to ask for, and whom to tell what initialize said. */
export interface SessionHost {
  readonly transport: ClientTransport;
  nextId(): number;
  /** The version to ask for in initialize (negotiated down to a legacy one). */
  askedVersion(): string;
  /** The capabilities and identity initialize declares. */
  readonly initializeParams: { capabilities: ClientCapabilities; clientInfo: JsonObject };
  /** initialize answered: the connection takes the version and the server's identity from here. */
  opened(server: LegacyServer): void;
}

export class LegacySession {
  #server: LegacyServer | undefined;
  #opening: Promise<LegacyServer> | undefined;
  /** The server-request answerers of loop calls in progress (legacy sessions send requests outside their responses). */
  readonly activeCalls = new Set<(request: JsonRpcRequest) => Promise<JsonRpcResponse>>();
  /** round() calls not yet ended (in a round or held): who a request outside any call's stream may belong to. */
  readonly openRounds = new Set<UpstreamCall>();

  constructor(private readonly host: SessionHost) {}

  /** Initialize the session once (concurrent callers share the handshake). */
  open(signal: AbortSignal): Promise<LegacyServer> {
    if (this.#server) return Promise.resolve(this.#server);
    this.#opening ??= (async () => {
      const { transport } = this.host;
      const wire = transport.legacy;
      if (!wire) throw new ProtocolViolation('this transport cannot carry the legacy protocol');
      const asked = negotiateLegacyVersion(this.host.askedVersion());
      wire.beginSession(asked);
      const { capabilities, clientInfo } = this.host.initializeParams;
      const message: JsonRpcRequest = {
        jsonrpc: '2.0',
        id: this.host.nextId(),
        method: 'initialize',
        params: { protocolVersion: asked, capabilities: legacyCapabilities(capabilities, asked), clientInfo },
      };
      const response = await transport.send({ message, signal });
      if ('error' in response) throw new RemoteError(response.error);
      const server = readInitializeResult(response.result as JsonObject);
      wire.beginSession(server.protocolVersion);
      await wire.notify({ jsonrpc: '2.0', method: 'notifications/initialized' }, signal);
      wire.listen((request) => this.#answerOutsideCalls(request));
      this.host.opened(server);
      this.#server = server;
      return server;
    })().finally(() => {
      this.#opening = undefined;
    });
    return this.#opening;
  }

  /** One request on the session: no per-request `_meta` of 2026-07-28, the session re-opened once if it ended. */
  async exchange(method: string, params: JsonObject, o: ExchangeOptions): Promise<JsonRpcResponse> {
    const { signal } = o;
    const { transport } = this.host;
    for (let attempt = 0; ; attempt++) {
      const server = await this.open(signal);
      const id = this.host.nextId();
      if (method === 'server/discover') return discoverAnswer(id, server);
      const userMeta = isJsonObject(params._meta) ? { ...params._meta } : {};
      if (o.progress) userMeta.progressToken = id;
      const sent: JsonObject = { ...params };
      delete sent._meta;
      if (Object.keys(userMeta).length > 0) sent._meta = userMeta;
      const message: JsonRpcRequest = { jsonrpc: '2.0', id, method, params: sent };
      // 2025 Streamable HTTP: a closed stream is not a cancellation, so the client says it (stdio's transport does).
      const cancel = () =>
        void transport.legacy
          ?.notify({
            jsonrpc: '2.0',
            method: 'notifications/cancelled',
            params: { requestId: id, reason: describeError(signal.reason) },
          })
          .catch(() => {});
      if (transport.kind === 'http') signal.addEventListener('abort', cancel, { once: true });
      try {
        return await transport.send({
          message,
          signal,
          onNotification: o.onNotification,
          onServerRequest: o.onServerRequest,
        });
      } catch (error) {
        // A legacy server may end its session (HTTP 404): start a new one and send the request again, once.
        if (error instanceof SessionExpired && attempt === 0) {
          this.#server = undefined;
          transport.legacy?.resetSession();
          continue;
        }
        throw error;
      } finally {
        signal.removeEventListener('abort', cancel);
      }
    }
  }

  /**
   * A request the server sent outside any call's stream (HTTP: the session's GET stream, where the official SDK
   * sends its questions; stdio: while several requests are in flight). 2025 requests name no call, so it goes to the
   * call in progress (the latest driven one, if several are) — but never to a round() call unless that call is the
   * only one open: a held call's question handed to another caller's call would be answered by the wrong person.
   */
  #answerOutsideCalls(request: JsonRpcRequest): Promise<JsonRpcResponse> {
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
}

/** server/discover answered from what initialize said: a 2025 server has no such method. */
function discoverAnswer(id: number, server: LegacyServer): JsonRpcResponse {
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
}
