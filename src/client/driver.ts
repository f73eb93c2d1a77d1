// The round loop's vocabulary (the loop itself is round-loop.ts): its defaults, options, events and outcomes, and
// the target a call is driven against. Named after `driveMrtr`, the public name of the loop.

import type {
  DetailedTask,
  InputKind,
  InputResponses,
  JsonObject,
  JsonRpcError,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResponse,
  Result,
} from '../protocol/index.js';
import type { PendingQuestion } from './answer-questions.js';
import type { PersonReason } from './input.js';
import type { InputResolver } from './resolvers.js';

export type { PendingQuestion } from './answer-questions.js';

/** The three requests of the extension, each one sent with a new JSON-RPC id (and Mcp-Name: taskId over HTTP). */
export interface TaskWire {
  get(taskId: string, signal: AbortSignal): Promise<JsonRpcResponse>;
  update(taskId: string, inputResponses: InputResponses, signal: AbortSignal): Promise<JsonRpcResponse>;
  cancel(taskId: string, signal: AbortSignal): Promise<JsonRpcResponse>;
}

/** What following a task reports to a UI: the task as first seen, then every change of status or statusMessage. */
export interface TaskEvent {
  type: 'task';
  taskId: string;
  status: DetailedTask['status'];
  statusMessage: string | undefined;
}

/** The driver's defaults. */
export const CLIENT_DEFAULTS = Object.freeze({
  /** The server's own default cap: a server that keeps asking past it is looping. */
  maxRounds: 10,
  /** A whole call, rounds and a person's answers included: five minutes, then the call is abandoned. */
  timeoutMs: 300_000,
  /** A person answers a handful of questions at once; a round asking for more is flooding, not asking. */
  maxQuestionsPerRound: 32,
  /** Pages of one list (tools/list, …) followed at most: a cursor that never ends must not page for ever. */
  maxListPages: 100,
  /** Items of one list kept at most, over all its pages. */
  maxListItems: 10_000,
  /** Characters (as JSON) of one list kept at most, over all its pages: 32 Mi, whatever the page count. */
  maxListChars: 32 * 1024 * 1024,
  /** stdio.mdx's "reasonable timeout" for the server/discover probe: a legacy server may not answer it at all. */
  probeTimeoutMs: 10_000,
  /** A legacy SSE stream that keeps breaking is not resumed for ever. */
  maxResumes: 5,
  /** The pause before resuming a legacy stream when the server gave no `retry:`. */
  resumeDelayMs: 1000,
  /** A server's `retry:` is honoured up to this. */
  maxResumeDelayMs: 30_000,
  /** OAuth step-ups for one request: a server that keeps asking for more scope is refused, not followed for ever. */
  maxStepUps: 2,
  /** An OAuth access token this close to its expiry is refreshed first. */
  refreshSkewMs: 30_000,
  /** Each OAuth discovery, registration or token request: an authorization server that hangs does not hang the call. */
  oauthRequestTimeoutMs: 30_000,
  /** One HTTP response body (an MCP answer, an SSE event, an OAuth document) is read up to this: 16 MiB. */
  maxResponseBytes: 16 * 1024 * 1024,
  /**
   * A pooled keep-alive socket idle this long is closed rather than reused: below the 5 s most servers keep an idle
   * socket (Node's, uvicorn's), so a request is never written on one the server is closing. (A server's own
   * `Keep-Alive: timeout=N` hint lowers it to N − 1 s.)
   */
  idleSocketMs: 4000,
  /** A 2025 upstream call that round() holds waits this long for its next round, then is dropped (as the bridge waits). */
  heldCallMs: 10 * 60 * 1000,
  /** Held 2025 calls one holder may have: a caller starting calls it never finishes is slowed (429), nobody else. */
  maxHeldCallsPerHolder: 100,
  /** Held 2025 calls in all: each keeps an upstream request open, and its questions, in this process. */
  maxHeldCalls: 1000,
});

export interface DriverOptions {
  /** Retries at most (exact): a call sends at most `maxRounds + 1` requests. Default 10. */
  maxRounds?: number;
  /** Total time for the whole call, including time spent answering questions. Default 300 000 ms. */
  timeoutMs?: number;
  /** Aborting cancels the request in flight, or stops between rounds. */
  signal?: AbortSignal;
  /** Progress for UIs: round started, input needed, answered, retrying, notifications, done. */
  onEvent?: (event: MrtrEvent) => void;
  /** Pause before retrying a state-only round (no inputRequests): doubles from `initialMs` up to `maxMs`. */
  backoff?: { initialMs?: number; maxMs?: number };
  /** Upper bound on the server's `dev.mrtr/retryAfterMs` hint. Default 30 000 ms. */
  maxRetryAfterMs?: number;
  /** Questions one round may ask; more is a protocol error, nothing is shown or answered. Default 32. */
  maxQuestionsPerRound?: number;
  /**
   * Send a round again, exactly as it was (same `requestState`, same `inputResponses`), when it got no answer: the
   * connection failed, was refused, reset or cut off, a gateway answered 502/503/504 without a JSON-RPC answer, or
   * the server said the same round is still running for an earlier identical request. Off by default: it is safe
   * only against a server with a replay guard, which runs a round once however often it is sent. `attempts` resends
   * at most per round; the pause doubles from `initialMs` (default 100) up to `maxMs` (default 2000).
   */
  retry?: { attempts: number; initialMs?: number; maxMs?: number };
}

export type MrtrEvent =
  | { type: 'round'; round: number; method: string; target: string | undefined }
  | {
      type: 'input_needed';
      round: number;
      key: string;
      kind: InputKind;
      message: string | undefined;
      /** Why a person must answer, when only a person may. */
      why: PersonReason | undefined;
    }
  | {
      type: 'answered';
      round: number;
      key: string;
      by: string;
      action: 'accept' | 'decline' | 'cancel' | undefined;
    }
  | { type: 'retrying'; round: number; delayMs: number; reason: 'answered' | 'state_only' | 'no_answer' }
  | { type: 'notification'; round: number; notification: JsonRpcNotification }
  /** The call became a task (tasks extension): sent when it is created, then on every status or message change. */
  | TaskEvent
  | { type: 'done'; status: MrtrOutcome['status']; rounds: number };

export interface DeclinedAnswer {
  round: number;
  key: string;
  action: 'decline' | 'cancel';
}

/** How a call ended. `rounds` counts the requests sent (1 for a call that completed at once). */
export type MrtrOutcome<R extends Result = Result> =
  | { status: 'complete'; rounds: number; result: R; declined: DeclinedAnswer[] }
  | { status: 'needs_person'; rounds: number; pending: PendingQuestion[] }
  | { status: 'round_cap'; rounds: number; maxRounds: number; pending: PendingQuestion[] }
  | { status: 'server_error'; rounds: number; error: JsonRpcError }
  | { status: 'protocol_error'; rounds: number; message: string }
  | { status: 'transport_error'; rounds: number; message: string; httpStatus: number | undefined }
  | { status: 'resolver_error'; rounds: number; key: string; message: string }
  | { status: 'timeout'; rounds: number; timeoutMs: number }
  | { status: 'aborted'; rounds: number; reason: unknown }
  /** The call became a task and the task ended cancelled, by someone other than this call (the server, a person). */
  | { status: 'cancelled'; rounds: number; taskId: string; message: string };

export interface DriverTarget {
  method: string;
  params: JsonObject;
  /** The tool or prompt name, or the resource URI, for events and resolvers. */
  target: string | undefined;
  /** Kinds the client declared in this call's capabilities; any other kind asked for is a protocol error. */
  declared: ReadonlySet<InputKind>;
  resolvers: readonly InputResolver[];
  server: string;
  /** The endpoint's host or the command, shown to people next to the name the server claims. */
  endpoint?: string;
  /**
   * Send one request with these params (a new JSON-RPC id each time). `onServerRequest` answers what a 2025 server
   * asks on the request's stream through the loop's resolvers and bounds; a transport without such requests ignores it.
   */
  send: (
    params: JsonObject,
    signal: AbortSignal,
    onNotification: (n: JsonRpcNotification) => void,
    onServerRequest?: (request: JsonRpcRequest) => Promise<JsonRpcResponse>,
  ) => Promise<JsonRpcResponse>;
  /**
   * Set when the client declared the tasks extension on this call and the method may become a task (tools/call):
   * a CreateTaskResult is then followed through these requests. Without it, resultType "task" is a protocol error.
   */
  tasks?: TaskWire;
  /** Follow this existing task instead of sending the call (McpClient.followTask); `seed` is its state, if known. */
  resume?: { taskId: string; seed?: DetailedTask; cancelOnAbort?: boolean };
}
