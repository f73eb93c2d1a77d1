// A tools/call round becomes a task (the client declared the tasks extension): where it stopped to start one, or
// where it waits for a person elsewhere. The task is stored here; the task service runs its later rounds.
import { type JsonObject, META_HUMAN_REQUIRED, type Result, RoundRefused } from '../../protocol/index.js';
import type { ToolEntry } from '../catalog/entries.js';
import type { MaybePromise } from '../maybe-async.js';
import { newTaskId } from '../tasks/task-book.js';
import type { TaskOrigin, TaskService } from '../tasks/task-service.js';
import { TaskStart } from '../tasks/task-start.js';
import type { Call } from './method.js';

/** Runs the round and answers with a task where it started one or waits for a person; otherwise with its result. */
export function asTask(
  tasks: TaskService,
  call: Call,
  name: string,
  tool: ToolEntry,
  round: () => MaybePromise<Result>,
): MaybePromise<Result> {
  let result: MaybePromise<Result>;
  try {
    result = round();
  } catch (error) {
    return startedTask(tasks, call, name, tool, error);
  }
  const settled = (r: Result): MaybePromise<Result> => {
    const waiting = waitsForPerson(r, call.params.inputResponses);
    return waiting ? waitingTask(tasks, call, name, tool, r, waiting.openedUrls) : r;
  };
  if (!(result instanceof Promise)) return settled(result);
  return result.then(settled, (error: unknown) => startedTask(tasks, call, name, tool, error));
}

/** The round stopped where the task starts: the task runs that same round again, on the server's side. */
function startedTask(
  tasks: TaskService,
  call: Call,
  name: string,
  tool: ToolEntry,
  error: unknown,
): Promise<Result> {
  if (!(error instanceof TaskStart)) throw error;
  const params = call.params;
  // What the round resolved before it stopped was sealed for the task (the answers it took are inside): the task
  // continues from there. A round that never asked anything is simply run again, with the call's own state.
  const origin: TaskOrigin =
    error.requestState !== undefined
      ? { kind: 'round', requestState: error.requestState }
      : {
          kind: 'round',
          ...(typeof params.requestState === 'string' ? { requestState: params.requestState } : {}),
          ...(params.inputResponses && typeof params.inputResponses === 'object'
            ? { inputResponses: params.inputResponses as JsonObject as never }
            : {}),
        };
  const id = error.taskId;
  return stored(tasks, call, name, tool, id, origin).then(
    (created) => {
      call.trace?.note({ task: { id, status: 'working', created: true } });
      return created;
    },
    (failure: unknown) => {
      call.trace?.note({ task: { id, created: false, ...refusalNote(failure) } });
      throw failure;
    },
  );
}

/** The round asks something only a person elsewhere can end (an approval, an opened step-up): the wait becomes a task. */
function waitingTask(
  tasks: TaskService,
  call: Call,
  name: string,
  tool: ToolEntry,
  result: Result,
  openedUrls: string[],
): Promise<Result> {
  const id = newTaskId();
  return stored(tasks, call, name, tool, id, {
    kind: 'asked',
    result: result as JsonObject,
    openedUrls,
  }).then(
    (created) => {
      call.trace?.note({ task: { id, status: 'working', created: true, waiting: true } });
      return created;
    },
    (failure: unknown) => {
      call.trace?.note({ task: { id, created: false, ...refusalNote(failure) } });
      // The principal has as many unfinished tasks as it may: the wait goes on as plain rounds, as without tasks.
      if (failure instanceof RoundRefused && failure.reason === 'too_many_tasks') return result;
      throw failure;
    },
  );
}

/** Stores the task for this call; resolves with the task's answer once it is durably stored. */
function stored(
  tasks: TaskService,
  call: Call,
  name: string,
  tool: ToolEntry,
  id: string,
  origin: TaskOrigin,
): Promise<Result> {
  const flowId = call.flowId ?? call.trace?.flowId;
  return tasks.create(
    { params: call.params, principal: call.env.principal, id, flowId },
    name,
    origin,
    tool.task?.ttlMs,
  );
}

const refusalNote = (error: unknown) =>
  error instanceof RoundRefused && error.reason === 'too_many_tasks' ? { refused: 'too_many_tasks' } : {};

/**
 * Whether the round waits for a person elsewhere: an approval (the client has nothing to answer), or a second factor
 * whose link the client opened last round (it answered accept) and that is asked again — the person is still at it.
 * Returns the links the client has opened, which the task then waits out instead of asking again.
 */
function waitsForPerson(result: Result, answers: unknown): { openedUrls: string[] } | undefined {
  if (result.resultType !== 'input_required') return undefined;
  const requests = (result.inputRequests ?? {}) as Record<string, JsonObject>;
  const previous = (answers && typeof answers === 'object' ? answers : {}) as Record<
    string,
    { action?: unknown }
  >;
  let waiting = false;
  const openedUrls: string[] = [];
  for (const [key, request] of Object.entries(requests)) {
    const params = (request?.params ?? {}) as JsonObject;
    const hint = (params._meta as JsonObject | undefined)?.[META_HUMAN_REQUIRED];
    if (hint === 'approval') waiting = true;
    else if (
      hint === 'second_factor' &&
      params.mode === 'url' &&
      typeof params.url === 'string' &&
      Object.hasOwn(previous, key) &&
      previous[key]?.action === 'accept'
    ) {
      waiting = true;
      openedUrls.push(params.url);
    }
  }
  return waiting ? { openedUrls } : undefined;
}
