// A task as the server shows it (io.modelcontextprotocol/tasks, SEP-2663), read strictly: a CreateTaskResult in
// answer to tools/call and a DetailedTask in answer to tasks/get. Anything malformed is a ProtocolViolation naming
// the field, so a confused server ends the call instead of leaving it polling for ever.
import {
  type DetailedTask,
  isJsonObject,
  type JsonObject,
  type TaskStatus,
  TERMINAL_TASK_STATUSES,
} from '../protocol/index.js';
import { ProtocolViolation } from './errors.js';

const STATUSES: ReadonlySet<string> = new Set<TaskStatus>([
  'working',
  'input_required',
  'completed',
  'cancelled',
  'failed',
]);

/** The bounds on a server's pollIntervalMs: faster is hammering, slower leaves a person staring at nothing. */
export const POLL_BOUNDS = Object.freeze({ minMs: 100, maxMs: 30_000, defaultMs: 1000 });

/** The pause before the next tasks/get: the server's pollIntervalMs clamped to POLL_BOUNDS, 1 s when it gave none. */
export function pollDelayMs(task: Pick<DetailedTask, 'pollIntervalMs'>): number {
  const asked = task.pollIntervalMs;
  if (typeof asked !== 'number' || !Number.isFinite(asked)) return POLL_BOUNDS.defaultMs;
  return Math.min(POLL_BOUNDS.maxMs, Math.max(POLL_BOUNDS.minMs, asked));
}

export function isTerminal(status: TaskStatus): boolean {
  return TERMINAL_TASK_STATUSES.has(status);
}

/**
 * Read a task out of a result (`where` names the answer in messages: "the CreateTaskResult", "tasks/get"). The
 * payload its status needs must be there: inputRequests on input_required, result on completed, a JSON-RPC error
 * (numeric code, string message) on failed. `expectedId` is the task asked about, when one was.
 */
export function readTask(value: unknown, where: string, expectedId?: string): DetailedTask {
  if (!isJsonObject(value)) throw new ProtocolViolation(`${where} is not an object`);
  const { taskId, status, statusMessage, pollIntervalMs, ttlMs } = value;
  if (typeof taskId !== 'string' || taskId === '')
    throw new ProtocolViolation(`${where} has no taskId (a non-empty string)`);
  if (expectedId !== undefined && taskId !== expectedId)
    throw new ProtocolViolation(
      `${where} describes task ${JSON.stringify(taskId)}, not the one asked about (${JSON.stringify(expectedId)})`,
    );
  if (typeof status !== 'string' || !STATUSES.has(status))
    throw new ProtocolViolation(
      `${where} has an unknown task status ${JSON.stringify(status ?? null)} (expected one of ${[...STATUSES].join(', ')})`,
    );
  if (statusMessage !== undefined && typeof statusMessage !== 'string')
    throw new ProtocolViolation(`${where}: statusMessage must be a string`);
  if (pollIntervalMs !== undefined && (typeof pollIntervalMs !== 'number' || !(pollIntervalMs >= 0)))
    throw new ProtocolViolation(`${where}: pollIntervalMs must be a number of milliseconds >= 0`);
  if (ttlMs !== undefined && ttlMs !== null && typeof ttlMs !== 'number')
    throw new ProtocolViolation(`${where}: ttlMs must be a number of milliseconds or null`);
  const task = value as unknown as DetailedTask;
  switch (status as TaskStatus) {
    case 'input_required':
      if (!isJsonObject(value.inputRequests))
        throw new ProtocolViolation(
          `${where}: task ${taskId} is input_required but has no inputRequests object`,
        );
      break;
    case 'completed':
      if (!isJsonObject(value.result))
        throw new ProtocolViolation(`${where}: task ${taskId} is completed but has no result object`);
      break;
    case 'failed': {
      const e = value.error;
      if (!isJsonObject(e) || typeof e.code !== 'number' || typeof e.message !== 'string')
        throw new ProtocolViolation(
          `${where}: task ${taskId} failed without a JSON-RPC error (an object with a numeric code and a string message)`,
        );
      break;
    }
    default:
      break;
  }
  return task;
}

/** A task's state for people and --json: the task without the answer-envelope fields (`resultType`, `_meta`). */
export function taskState(task: DetailedTask): JsonObject {
  const { resultType: _r, _meta: _m, ...rest } = task as unknown as JsonObject;
  return rest;
}
