// What McpClient takes: its options, the options of its calls, and what a raw round declares.
import {
  type ClientCapabilities,
  capabilitiesFor,
  type DetailedTask,
  type Implementation,
  type JsonObject,
  type Result,
  type ServerCapabilities,
  TASKS_EXTENSION,
  type ToolDefinition,
} from '../protocol/index.js';
import type { DriverOptions } from './driver.js';
import type { HeldCallLimits } from './held-calls.js';
import type { OAuthClient } from './oauth/oauth-client.js';
import type { InputResolver } from './resolvers.js';
import type { ClientTransport } from './transport.js';

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
  /**
   * Tool definitions already listed elsewhere (a gateway's cached listing of this server): a call plans its
   * `Mcp-Param-*` headers from them instead of listing the tools first. A `HeaderMismatch` still lists anew.
   */
  knownTools?: readonly ToolDefinition[];
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

/**
 * What a client declares: the capabilities given (else its resolvers' kinds), with the tasks extension unless
 * `tasks: false`; and what a raw round declares, always without it (a round cannot carry a task on for its caller).
 */
export function declaredCapabilities(options: McpClientOptions): {
  declared: ClientCapabilities;
  round: ClientCapabilities;
} {
  const resolvers = options.resolvers ?? [];
  const base = options.capabilities ?? capabilitiesFor(resolvers.flatMap((r) => [...r.kinds]));
  const round = withoutTasks(base);
  if (options.tasks === false) return { declared: round, round };
  return { declared: { ...base, extensions: { ...base.extensions, [TASKS_EXTENSION]: {} } }, round };
}

/** The capabilities without the tasks extension (and without an `extensions` left empty by removing it). */
function withoutTasks(capabilities: ClientCapabilities): ClientCapabilities {
  if (!capabilities.extensions || !Object.hasOwn(capabilities.extensions, TASKS_EXTENSION))
    return capabilities;
  const { [TASKS_EXTENSION]: _tasks, ...others } = capabilities.extensions;
  const { extensions: _all, ...rest } = capabilities;
  return Object.keys(others).length > 0 ? { ...rest, extensions: others } : rest;
}
