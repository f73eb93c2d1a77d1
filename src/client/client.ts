// McpClient: the MCP 2026-07-28 client people use. It is a connection (connection.ts: version negotiation, requests,
// a 2025 session when the server speaks only that), one raw `round` (one-round.ts), and calls driven by the one
// round loop (round-loop.ts): callTool, getPrompt, readResource and followTask all go through it.
import {
  type CallToolResult,
  type ClientCapabilities,
  type DetailedTask,
  declaredKinds,
  type GetPromptResult,
  type Implementation,
  type InputKind,
  InvalidArgumentError,
  InvalidOptionError,
  isJsonObject,
  type JsonObject,
  META_SERVER_INFO,
  type PromptDefinition,
  type ReadResourceResult,
  type ResourceDefinition,
  type ResourceTemplateDefinition,
  type Result,
  type ToolDefinition,
} from '../protocol/index.js';
import {
  type CallOptions,
  type DiscoverResult,
  declaredCapabilities,
  type FollowTaskOptions,
  type McpClientOptions,
} from './client-options.js';
import { Connection, type Generation, type RequestOptions } from './connection.js';
import { driveCall, taskRequest } from './drive-call.js';
import { CLIENT_DEFAULTS, type MrtrOutcome } from './driver.js';
import { ProtocolViolation } from './errors.js';
import { HeldCalls } from './held-calls.js';
import { HttpClientTransport } from './http-transport.js';
import { KnownTools, type RejectedTool } from './known-tools.js';
import { listAll } from './list-pages.js';
import { oneRound, type RoundHost } from './one-round.js';
import type { InputResolver } from './resolvers.js';
import type { RoundOptions, RoundResult } from './round-args.js';
import { readTask } from './task-shape.js';
import { callTool, type ToolCallHost, toolCallHeaders } from './tool-call.js';
import type { ClientTransport } from './transport.js';

export type { CallOptions, DiscoverResult, FollowTaskOptions, McpClientOptions } from './client-options.js';
export type { RequestOptions } from './connection.js';
export type { RejectedTool } from './known-tools.js';
export { describeOutcome, unwrapOutcome } from './outcome-text.js';

export const CLIENT_NAME = 'mrtr';
export const CLIENT_VERSION = '0.1.0';

export class McpClient {
  readonly transport: ClientTransport;
  readonly capabilities: ClientCapabilities;
  /** Whether this client declares the tasks extension and follows tasks (the `tasks` option). */
  readonly followsTasks: boolean;
  readonly declared: ReadonlySet<InputKind>;
  readonly resolvers: readonly InputResolver[];
  readonly #options: McpClientOptions;
  readonly #connection: Connection;
  /** What a raw `round()` declares: no tasks extension, since a round returns one answer and cannot carry a task. */
  readonly #roundCapabilities: ClientCapabilities;
  readonly #tools = new KnownTools();
  /** The 2025 calls round() holds open between rounds. */
  readonly #held: HeldCalls;
  /** What the round loop needs of this client to drive one of its calls (drive-call.ts, tool-call.ts). */
  readonly #callHost: ToolCallHost;
  /** What one raw round needs of this client (one-round.ts). */
  readonly #roundHost: RoundHost;

  constructor(options: McpClientOptions) {
    this.#options = options;
    this.transport =
      typeof options.server === 'string' || options.server instanceof URL
        ? new HttpClientTransport({ url: options.server, token: options.token, auth: options.auth })
        : options.server;
    const resolvers = options.resolvers ?? [];
    this.followsTasks = options.tasks !== false;
    ({ declared: this.capabilities, round: this.#roundCapabilities } = declaredCapabilities(options));
    this.declared = declaredKinds(this.capabilities);
    this.resolvers = resolvers;
    if (options.knownTools) this.#tools.learn(options.knownTools, options.onWarning);
    this.#held = new HeldCalls({
      holdMs: options.heldCalls?.holdMs ?? CLIENT_DEFAULTS.heldCallMs,
      maxPerHolder: options.heldCalls?.maxPerHolder ?? CLIENT_DEFAULTS.maxHeldCallsPerHolder,
      maxTotal: options.heldCalls?.maxTotal ?? CLIENT_DEFAULTS.maxHeldCalls,
    });
    this.#connection = new Connection({
      transport: this.transport,
      clientInfo: options.clientInfo ?? { name: CLIENT_NAME, version: CLIENT_VERSION },
      capabilities: this.capabilities,
      protocolVersion: options.protocolVersion,
      protocol: options.protocol,
      requestTimeoutMs: options.requestTimeoutMs,
      probeTimeoutMs: options.probeTimeoutMs,
    });
    const connection = this.#connection;
    this.#callHost = {
      connection,
      resolvers,
      declared: this.declared,
      followsTasks: this.followsTasks,
      defaults: options.mrtr,
      tools: this.#tools,
      listTools: (o) => this.listTools(o),
    };
    this.#roundHost = {
      connection,
      held: this.#held,
      tools: this.#tools,
      declared: this.declared,
      capabilities: this.#roundCapabilities,
      maxQuestionsPerRound: options.mrtr?.maxQuestionsPerRound ?? CLIENT_DEFAULTS.maxQuestionsPerRound,
      timeoutMs: options.mrtr?.timeoutMs ?? CLIENT_DEFAULTS.timeoutMs,
      // Only the round's own end stops it; a list that fails just leaves the headers unplanned.
      toolCallHeaders: (name, args, signal) =>
        toolCallHeaders(connection, this.#tools, name, args, signal, (s) =>
          this.listTools({ signal: s }).then(
            () => undefined,
            (error: unknown) => {
              if (s.aborted) throw error;
            },
          ),
        ),
    };
  }

  /** The server's self-description, from `server/discover` (or initialize); undefined before either. */
  get serverInfo(): Implementation | undefined {
    return this.#connection.serverInfo;
  }
  set serverInfo(info: Implementation | undefined) {
    this.#connection.serverInfo = info;
  }

  /** Which protocol generation is in use: `modern` (2026-07-28, MRTR), `legacy` (initialize sessions), or not yet known. */
  get generation(): Generation {
    return this.#connection.generation;
  }

  /** The protocol version in use (it changes if the server asks for another one it and we both support). */
  get version(): string {
    return this.#connection.version;
  }

  /** Tools excluded from `listTools` because of an invalid `x-mcp-header`, with the reason. */
  get rejectedTools(): RejectedTool[] {
    return this.#tools.rejected;
  }

  /**
   * A plain request (not an MRTR call). Throws `RemoteError` for a JSON-RPC error, `ProtocolViolation`,
   * `TransportFailure` or `RequestAborted` otherwise. A thin delegate to the connection's `request`.
   */
  request<R extends Result = Result>(
    method: string,
    params: JsonObject = {},
    options?: RequestOptions,
  ): Promise<R> {
    return this.#connection.request<R>(method, params, options);
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
   * All tools (following pagination). Tools whose `x-mcp-header` annotations break the rules are left out, as
   * streamable-http.mdx requires, and reported through `onWarning` and `rejectedTools`.
   */
  async listTools(options?: RequestOptions): Promise<ToolDefinition[]> {
    const all = await listAll<ToolDefinition>(this.#connection, 'tools/list', 'tools', options);
    return this.#tools.learn(all, this.#options.onWarning);
  }

  listPrompts(options?: RequestOptions): Promise<PromptDefinition[]> {
    return listAll(this.#connection, 'prompts/list', 'prompts', options);
  }
  listResources(options?: RequestOptions): Promise<ResourceDefinition[]> {
    return listAll(this.#connection, 'resources/list', 'resources', options);
  }
  listResourceTemplates(options?: RequestOptions): Promise<ResourceTemplateDefinition[]> {
    return listAll(this.#connection, 'resources/templates/list', 'resourceTemplates', options);
  }

  /**
   * Call a tool and carry it through every input_required round (the round loop). Resolves with the outcome; it does
   * not throw for anything the server, the network or the person does. Over HTTP it rejects with a TypeError, before
   * anything is sent, when an `x-mcp-header` argument cannot be carried in its header (an object, an array, or a
   * number that is not a safe integer): the caller's arguments break the tool's declared contract.
   */
  callTool(
    name: string,
    args: JsonObject = {},
    options: CallOptions = {},
  ): Promise<MrtrOutcome<CallToolResult>> {
    return callTool(this.#callHost, name, args, options);
  }

  /** Get a prompt, carrying it through every input_required round (the round loop). */
  getPrompt(
    name: string,
    args: Record<string, string> = {},
    options: CallOptions = {},
  ): Promise<MrtrOutcome<GetPromptResult>> {
    const call = { method: 'prompts/get', params: { name, arguments: args }, target: name };
    return driveCall<GetPromptResult>(this.#callHost, call, options);
  }

  /** Read a resource, carrying it through every input_required round (the round loop). */
  readResource(uri: string, options: CallOptions = {}): Promise<MrtrOutcome<ReadResourceResult>> {
    return driveCall<ReadResourceResult>(
      this.#callHost,
      { method: 'resources/read', params: { uri }, target: uri },
      options,
    );
  }

  /**
   * Follow a task made elsewhere (another process, an earlier run) to its end, exactly as `callTool` follows the
   * task it gets — through the same round loop: polling, its questions answered by this client's resolvers under the
   * same bounds (each tasks/update is a round), tasks/cancel on abort (not on timeout: the task goes on; nor with
   * `cancelOnAbort: false`). Resolves with the outcome; a task the server does not know ends as `server_error`.
   */
  followTask(taskId: string, options: FollowTaskOptions = {}): Promise<MrtrOutcome<CallToolResult>> {
    this.#checkFollowsTasks('followTask', taskId);
    const { task, cancelOnAbort, ...call } = options;
    if (task !== undefined) readTask(task, 'options.task', taskId);
    if (cancelOnAbort !== undefined && typeof cancelOnAbort !== 'boolean')
      throw new InvalidOptionError('followTask: cancelOnAbort must be a boolean');
    const resume = { taskId, seed: task, cancelOnAbort: cancelOnAbort ?? true };
    return driveCall<CallToolResult>(
      this.#callHost,
      { method: 'tools/call', params: {}, target: undefined, resume },
      call,
    );
  }

  /**
   * One tasks/get: the task's current state (its result, error or questions inlined). Throws RemoteError for a
   * JSON-RPC error (-32602 for an unknown, expired or someone else's task), ProtocolViolation for a malformed task,
   * TransportFailure or RequestAborted as `request` does.
   */
  async getTask(taskId: string, options?: RequestOptions): Promise<DetailedTask> {
    this.#checkFollowsTasks('getTask', taskId);
    const result = await taskRequest(this.#connection, 'get', taskId, options);
    return readTask(result, 'tasks/get', taskId);
  }

  /**
   * tasks/cancel: ask the server to stop a task. Cancellation is cooperative: the server acknowledges, and the task
   * may still end otherwise. Throws as `getTask` does.
   */
  async cancelTask(taskId: string, options?: RequestOptions): Promise<void> {
    this.#checkFollowsTasks('cancelTask', taskId);
    await taskRequest(this.#connection, 'cancel', taskId, options);
  }

  /** Refuse a task request from a client that does not declare the extension: the server would refuse it (-32021). */
  #checkFollowsTasks(what: string, taskId: unknown): asserts taskId is string {
    if (!this.followsTasks) throw new InvalidOptionError(`${what}: this client was made with tasks: false`);
    if (typeof taskId !== 'string' || taskId === '')
      throw new InvalidArgumentError(`${what}: taskId must be a non-empty string`);
  }

  /**
   * One round of a tools/call, prompts/get or resources/read, and its raw answer: `complete`, or `input_required` with
   * the server's `inputRequests` and the `requestState` to send back, with their answers, in the next round. Nothing
   * is answered and no loop is driven. The round is built as the round loop builds its rounds (the same `_meta` and
   * headers); `requestState` goes out byte for byte and `inputResponses` as given.
   *
   * A 2025 server asks mid-call instead: its call is held open, its requests come back as `input_required` whose
   * `requestState` is a handle to the held call — unguessable, good for one round, and only for `options.holder`
   * (see `heldCalls` for the bounds and the time limit). Throws RemoteError for a JSON-RPC error (its code kept),
   * MrtrError ERR_INVALID_ARGUMENT for a bad argument, HeldCallError for a handle it cannot go on with, the 429
   * RoundRefused of a holder past its share, and ProtocolViolation, TransportFailure or RequestAborted as `request`
   * does. The work is one-round.ts's.
   */
  round<R extends Result = Result>(
    method: string,
    params: JsonObject,
    options: RoundOptions = {},
  ): Promise<RoundResult<R>> {
    return oneRound<R>(this.#roundHost, method, params, options);
  }

  async close(): Promise<void> {
    this.#held.dropAll();
    for (const r of this.resolvers) r.close?.();
    await this.transport.close();
  }
}
