// Following a task to its end (io.modelcontextprotocol/tasks): poll tasks/get at the server's pace, answer its
// inputRequests with the call's own resolvers and bounds (tasks/update), and end as the call would have ended had it
// answered at once. On abort the task is cancelled (tasks/cancel), best effort and bounded; the call's own timeout
// leaves it running (the caller stopped waiting, not the work: `followTask` picks it up again).
import type {
  DetailedTask,
  InputKind,
  InputResponses,
  JsonObject,
  JsonRpcError,
  JsonRpcResponse,
  Result,
} from '../protocol/index.js';
import { MrtrError } from '../protocol/index.js';
import { pauseUntilAborted } from '../protocol/internal.js';
import { answerQuestions, type PendingQuestion, pendingOf } from './answer-questions.js';
import { abortError, RequestAborted } from './errors.js';
import { type PersonReason, parseInputRequired } from './input.js';
import type { InputResolver, ResolveContext } from './resolvers.js';
import { pollDelayMs, readTask } from './task-shape.js';

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

/** How long a tasks/cancel sent on the way out may take: the caller is leaving and must not wait on the server. */
export const CANCEL_TIMEOUT_MS = 5000;

export interface FollowContext {
  wire: TaskWire;
  /** The call's signal, its deadline included: it stops polling, answering and waiting. */
  signal: AbortSignal;
  /** An abort sends tasks/cancel (true), or only stops the following: the task goes on for whoever picks it up. */
  cancelOnAbort: boolean;
  declared: ReadonlySet<InputKind>;
  resolvers: readonly InputResolver[];
  maxQuestionsPerRound: number;
  /** tasks/update requests this task may still send; one more is the round cap. */
  updatesLeft: number;
  /** Method, target, server and endpoint for resolvers (round and signal are filled in here). */
  about: Omit<ResolveContext, 'round' | 'signal'>;
  /** Counts requests as the driver does: each tasks/update is one more round (a tasks/get is not). */
  rounds: { count: number };
  /** The driver's events, the task's own among them. */
  emit(
    event:
      | TaskEvent
      | { type: 'round'; round: number; method: string; target: string | undefined }
      | { type: 'retrying'; round: number; delayMs: number; reason: 'answered' }
      | {
          type: 'input_needed';
          round: number;
          key: string;
          kind: InputKind;
          message: string | undefined;
          why: PersonReason | undefined;
        }
      | {
          type: 'answered';
          round: number;
          key: string;
          by: string;
          action: 'accept' | 'decline' | 'cancel' | undefined;
        },
  ): void;
  /** Answers refused (decline, cancel), for the outcome. */
  onDeclined(round: number, key: string, action: 'decline' | 'cancel'): void;
}

/** How a followed task ended; the driver turns it into the call's outcome. */
export type TaskEnd<R extends Result> =
  | { status: 'complete'; result: R }
  | { status: 'server_error'; error: JsonRpcError }
  | { status: 'cancelled'; taskId: string; message: string }
  | { status: 'needs_person'; pending: PendingQuestion[] }
  | { status: 'round_cap'; pending: PendingQuestion[] };

/** Resolves after `ms`; rejects with RequestAborted when the signal aborts first. The timer never keeps Node alive. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return pauseUntilAborted(
    ms,
    signal,
    (s) => {
      throw abortError(s);
    },
    { unref: true },
  );
}

/** Tell the server to stop the task, without waiting long or failing for it: the caller has already given up. */
export async function cancelQuietly(wire: TaskWire, taskId: string): Promise<void> {
  try {
    await wire.cancel(taskId, AbortSignal.timeout(CANCEL_TIMEOUT_MS));
  } catch {
    // Cancellation is cooperative and best effort (tasks.md "Task Cancellation"): nothing more to do.
  }
}

/**
 * Follow `taskId` from `seed` (the CreateTaskResult, or a tasks/get answer; undefined: ask first) to its end.
 * Throws ProtocolViolation for a malformed task, TransportFailure, ResolverFailed, and RequestAborted when the signal
 * aborts (after sending tasks/cancel, unless `cancelOnAbort` is false or the abort is the call's timeout).
 */
export async function followTask<R extends Result>(
  taskId: string,
  seed: DetailedTask | undefined,
  f: FollowContext,
): Promise<TaskEnd<R>> {
  const { wire, signal } = f;
  // tasks.md: keys are unique over a task's lifetime, so a key answered once is never shown to anyone again.
  const answered = new Set<string>();
  let shown: { status: string; statusMessage: string | undefined } | undefined;
  let task = seed;
  let updatesLeft = f.updatesLeft;
  const get = async (): Promise<DetailedTask | JsonRpcError> => {
    const response = await wire.get(taskId, signal);
    if ('error' in response) return response.error;
    return readTask(response.result, 'tasks/get', taskId);
  };
  try {
    for (;;) {
      if (signal.aborted) throw new RequestAborted(signal.reason);
      if (task === undefined) {
        const got = await get();
        if (!('taskId' in got)) return { status: 'server_error', error: got };
        task = got;
      }
      if (shown?.status !== task.status || shown.statusMessage !== task.statusMessage) {
        shown = { status: task.status, statusMessage: task.statusMessage };
        f.emit({ type: 'task', taskId, status: task.status, statusMessage: task.statusMessage });
      }
      switch (task.status) {
        case 'completed':
          return { status: 'complete', result: task.result as unknown as R };
        case 'failed':
          return { status: 'server_error', error: task.error as unknown as JsonRpcError };
        case 'cancelled':
          return {
            status: 'cancelled',
            taskId,
            message: task.statusMessage ?? `task ${taskId} was cancelled`,
          };
        case 'input_required': {
          const fresh: JsonObject = {};
          for (const [key, request] of Object.entries(task.inputRequests ?? {}))
            if (!answered.has(key)) Object.defineProperty(fresh, key, { value: request, enumerable: true });
          if (Object.keys(fresh).length === 0) break;
          // Read as strictly as an MRTR round: declared kinds only, at most maxQuestionsPerRound new questions.
          const { questions } = parseInputRequired(
            { inputRequests: fresh },
            f.declared,
            f.maxQuestionsPerRound,
          );
          if (updatesLeft <= 0) return { status: 'round_cap', pending: questions.map((q) => pendingOf(q)) };
          const round = f.rounds.count;
          for (const q of questions)
            f.emit({
              type: 'input_needed',
              round,
              key: q.key,
              kind: q.kind,
              message: q.message,
              why: q.personRequired,
            });
          const ctx: ResolveContext = { ...f.about, signal, round };
          const got = await answerQuestions(questions, f.resolvers, ctx, (a) => {
            if (a.action === 'decline' || a.action === 'cancel') f.onDeclined(round, a.key, a.action);
            f.emit({ type: 'answered', round, ...a });
          });
          if ('unanswerable' in got) return { status: 'needs_person', pending: got.unanswerable };
          updatesLeft--;
          const next = ++f.rounds.count;
          f.emit({ type: 'retrying', round: next, delayMs: 0, reason: 'answered' });
          f.emit({ type: 'round', round: next, method: 'tasks/update', target: f.about.target });
          const ack = await wire.update(taskId, got.answers, signal);
          if ('error' in ack) return { status: 'server_error', error: ack.error };
          for (const q of questions) answered.add(q.key);
          break;
        }
        case 'working':
          break;
      }
      await pause(pollDelayMs(task), signal);
      task = undefined;
    }
  } catch (error) {
    if (signal.aborted && f.cancelOnAbort && !timedOut(signal.reason)) await cancelQuietly(wire, taskId);
    throw error;
  }
}

/** The call's deadline passed (ERR_TIMEOUT): the caller stops waiting, the task goes on. */
function timedOut(reason: unknown): boolean {
  return reason instanceof MrtrError && reason.code === 'ERR_TIMEOUT';
}
