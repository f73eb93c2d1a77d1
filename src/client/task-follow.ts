// The round loop's source for a task (io.modelcontextprotocol/tasks): poll tasks/get at the server's pace, hand its
// new inputRequests to the loop (answered by the call's own resolvers under the call's bounds, sent back with
// tasks/update: each update is a round), and end as the call would have ended had it answered at once. The loop
// cancels the task on abort (tasks/cancel, best effort and bounded), but not on the call's own timeout: the caller
// stopped waiting, not the work, and `followTask` picks it up again.
import type { DetailedTask, InputKind, JsonObject, JsonRpcError, Result } from '../protocol/index.js';
import type { TaskWire } from './driver.js';
import { parseInputRequired } from './input.js';
import type { LoopContext, Step } from './loop-steps.js';
import { pollDelayMs, readTask } from './task-shape.js';

/** How long a tasks/cancel sent on the way out may take: the caller is leaving and must not wait on the server. */
export const CANCEL_TIMEOUT_MS = 5000;

/** Tell the server to stop the task, without waiting long or failing for it: the caller has already given up. */
export async function cancelQuietly(wire: TaskWire, taskId: string): Promise<void> {
  try {
    await wire.cancel(taskId, AbortSignal.timeout(CANCEL_TIMEOUT_MS));
  } catch {
    // Cancellation is cooperative and best effort (tasks.md "Task Cancellation"): nothing more to do.
  }
}

/**
 * The first step of following `taskId` from `seed` (the CreateTaskResult, or a tasks/get answer; undefined: ask
 * first). Throws ProtocolViolation for a malformed task, and what the wire throws.
 */
export function taskSteps<R extends Result>(
  taskId: string,
  seed: DetailedTask | undefined,
  wire: TaskWire,
  loop: LoopContext,
  declared: ReadonlySet<InputKind>,
  maxQuestions: number,
): Promise<Step<R>> {
  const { signal } = loop;
  // tasks.md: keys are unique over a task's lifetime, so a key answered once is never shown to anyone again.
  const answered = new Set<string>();
  let shown: { status: string; statusMessage: string | undefined } | undefined;
  const end = (e: Extract<Step<R>, { kind: 'end' }>['end']): Step<R> => ({ kind: 'end', end: e });
  const pollAfter = (task: DetailedTask): Step<R> => ({
    kind: 'wait',
    delayMs: pollDelayMs(task),
    next: () => look(undefined),
  });

  const look = async (known: DetailedTask | undefined): Promise<Step<R>> => {
    let task = known;
    if (task === undefined) {
      const response = await wire.get(taskId, signal);
      if ('error' in response) return end({ status: 'server_error', error: response.error });
      task = readTask(response.result, 'tasks/get', taskId);
    }
    if (shown?.status !== task.status || shown.statusMessage !== task.statusMessage) {
      shown = { status: task.status, statusMessage: task.statusMessage };
      loop.emit({ type: 'task', taskId, status: task.status, statusMessage: task.statusMessage });
    }
    switch (task.status) {
      case 'completed':
        return end({ status: 'complete', result: task.result as unknown as R });
      case 'failed':
        return end({ status: 'server_error', error: task.error as unknown as JsonRpcError });
      case 'cancelled':
        return end({
          status: 'cancelled',
          taskId,
          message: task.statusMessage ?? `task ${taskId} was cancelled`,
        });
      case 'input_required': {
        const fresh: JsonObject = {};
        for (const [key, request] of Object.entries(task.inputRequests ?? {}))
          if (!answered.has(key)) Object.defineProperty(fresh, key, { value: request, enumerable: true });
        if (Object.keys(fresh).length === 0) return pollAfter(task);
        // Read as strictly as an MRTR round: declared kinds only, at most maxQuestionsPerRound new questions.
        const { questions } = parseInputRequired({ inputRequests: fresh }, declared, maxQuestions);
        const asked = task;
        return {
          kind: 'ask',
          questions,
          reply: async (answers) => {
            loop.startRound('tasks/update');
            const ack = await wire.update(taskId, answers ?? {}, signal);
            if ('error' in ack) return end({ status: 'server_error', error: ack.error });
            for (const q of questions) answered.add(q.key);
            return pollAfter(asked);
          },
        };
      }
      default:
        return pollAfter(task);
    }
  };
  return look(seed);
}
