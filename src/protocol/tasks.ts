// The tasks extension (io.modelcontextprotocol/tasks, SEP-2663) on the wire: its name, the task shapes tasks/get
// answers, and the rule that says whether a request's client declared it. Server and client read these alike.
import type { ClientCapabilities, JsonObject } from './wire.js';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** The methods the extension adds; each names its task in `params.taskId` (and the Mcp-Name header over HTTP). */
export const TASK_METHODS = ['tasks/get', 'tasks/update', 'tasks/cancel'] as const;
export type TaskMethod = (typeof TASK_METHODS)[number];

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'cancelled' | 'failed';
export const TERMINAL_TASK_STATUSES: ReadonlySet<TaskStatus> = new Set(['completed', 'cancelled', 'failed']);

/** A task as tasks/get and notifications/tasks show it, with the payload of its status inlined. */
export interface DetailedTask {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  /** ISO 8601. */
  createdAt: string;
  lastUpdatedAt: string;
  /** From creation; null for unlimited. */
  ttlMs: number | null;
  pollIntervalMs?: number;
  /** input_required: every request still waiting for the client, under keys unique over the task's lifetime. */
  inputRequests?: JsonObject;
  /** completed: the result the request would have returned (a CallToolResult, isError included). */
  result?: JsonObject;
  /** failed: the JSON-RPC error the request failed with. */
  error?: JsonObject;
}

/** True when the request's per-request capabilities declare the extension (an empty object is support). */
export function declaresTasks(capabilities: ClientCapabilities | undefined): boolean {
  const extensions = capabilities?.extensions;
  return (
    typeof extensions === 'object' &&
    extensions !== null &&
    Object.hasOwn(extensions, TASKS_EXTENSION) &&
    typeof extensions[TASKS_EXTENSION] === 'object' &&
    extensions[TASKS_EXTENSION] !== null
  );
}

/** The `data` of a -32021 error naming the extension as what the client must declare. */
export const TASKS_REQUIRED_DATA: JsonObject = Object.freeze({
  requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
}) as JsonObject;
