// tools/call: check the arguments, run the tool through the round pipeline, enforce its outputSchema — and, for a
// client that declared the tasks extension, answer with a task when the tool runs as one or a person must be waited for.
import {
  declaresTasks,
  ErrorCode,
  invalidParams,
  type JsonObject,
  McpError,
  META_HUMAN_REQUIRED,
  type Result,
  RoundRefused,
  TASKS_REQUIRED_DATA,
} from '../../protocol/index.js';
import type { ToolEntry } from '../catalog/entries.js';
import { handlerContractError } from '../errors.js';
import type { HandlerOptions } from '../handlers.js';
import type { MaybePromise } from '../maybe-async.js';
import { newTaskId } from '../tasks/task-book.js';
import type { TaskOrigin, TaskService } from '../tasks/task-service.js';
import { TaskStart } from '../tasks/task-start.js';
import type { Call, Core } from './method.js';

/**
 * Rounds a task may take: its questions are paced by people, not by a client's retry loop, and a waiting approval is
 * checked again every few seconds for as long as the task lives.
 */
const TASK_MAX_ROUNDS = 100_000;

export function toolsCall(core: Core, call: Call): MaybePromise<Result> {
  const name = call.params.name as string;
  // Found once per request: by the HTTP front for the header parameters, else here.
  if (call.found) return callTool(core, call, name, call.found.entry);
  const found = core.catalog.findTool(name, call.env);
  return found instanceof Promise
    ? found.then((tool) => callTool(core, call, name, tool))
    : callTool(core, call, name, found);
}

/** A tool hidden from this caller is not found either: the same error, byte for byte, as for an unknown name. */
function callTool(core: Core, call: Call, name: string, tool: ToolEntry | undefined): MaybePromise<Result> {
  if (!tool) throw invalidParams(`Unknown tool: ${name}`, { name });
  const tasks = core.tasks;
  const inTask = call.env.taskId !== undefined;
  const declared = tasks !== undefined && !inTask && declaresTasks(call.meta.clientCapabilities);
  if (tool.task?.support === 'required' && !inTask && !declared)
    throw new McpError(
      ErrorCode.MissingRequiredClientCapability,
      `Missing required client capability: tool ${name} runs only as a task (declare the io.modelcontextprotocol/tasks extension)`,
      TASKS_REQUIRED_DATA,
    );
  let args = (call.params.arguments ?? {}) as JsonObject;
  if (tool.prepareArguments) {
    // Prepared once, before anything reads them: what the state binds and the guards judge is what the handler gets.
    try {
      args = tool.prepareArguments(args);
    } catch (error) {
      return invalidArguments(error);
    }
  }
  const check = tool.checkOutput;
  // The tool broke its own contract: a server bug, reported as -32603 (the detail goes to the log).
  const checkOutput = check
    ? (r: Result): Result => {
        if (r.resultType !== 'complete' || r.isError === true) return r;
        const problem = check(r.structuredContent);
        if (problem)
          throw handlerContractError(
            `tool ${name} returned structuredContent that breaks its outputSchema: ${problem}`,
          );
        return r;
      }
    : undefined;
  // Where the call becomes a task: before the handler ('call'), or where it calls ctx.startTask() ('handler').
  const becomesTask = declared && tool.task !== undefined;
  const startTask = becomesTask
    ? () => {
        // The audit event names the task once it is stored (startedTask): a call that fails on the way makes none.
        throw new TaskStart(newTaskId(), tool.task?.ttlMs ?? tasks.ttlMs);
      }
    : undefined;
  if (inTask) call.trace?.note({ task: { id: call.env.taskId } });
  // A principal at its limit of unfinished tasks is turned away before the call does any work — unless the tool may
  // also run as a plain call: then it does, as for a client without the extension.
  if (becomesTask && tasks)
    return tasks.admits(call.env.principal).then(
      () => runTool(core, call, name, tool, args, checkOutput, startTask, declared),
      (error: unknown) => {
        if (
          !(error instanceof RoundRefused) ||
          error.reason !== 'too_many_tasks' ||
          tool.task?.support !== 'optional'
        )
          throw error;
        call.trace?.note({ task: { created: false, refused: 'too_many_tasks', ranAsPlainCall: true } });
        return runTool(core, call, name, tool, args, checkOutput, undefined, false);
      },
    );
  return runTool(core, call, name, tool, args, checkOutput, startTask, declared);
}

function runTool(
  core: Core,
  call: Call,
  name: string,
  tool: ToolEntry,
  args: JsonObject,
  checkOutput: ((r: Result) => Result) | undefined,
  startTask: (() => void) | undefined,
  declared: boolean,
): MaybePromise<Result> {
  const tasks = core.tasks;
  const inTask = call.env.taskId !== undefined;
  // A task's state never leaves the server, and its questions wait for people: it lives as long as the task does.
  const options: HandlerOptions =
    inTask && tasks
      ? { ...tool.mrtr, maxRounds: TASK_MAX_ROUNDS, stateTtlMs: tool.task?.ttlMs ?? tasks.ttlMs }
      : tool.mrtr;
  let round: MaybePromise<Result>;
  try {
    round = core.rounds.round(call, 'tools/call', {
      target: name,
      arguments: args,
      options,
      invoke: (ctx) => {
        if (startTask && tool.task?.start !== 'handler') startTask();
        const checked = tool.args.check(args);
        if (!checked.ok) {
          return {
            content: [{ type: 'text', text: `Invalid arguments for tool ${name}: ${checked.message}` }],
            isError: true,
          };
        }
        // Not awaited here: a synchronous handler then completes without an extra turn of the event loop.
        return tool.handler(checked.value as Record<string, unknown>, ctx);
      },
      finalize: checkOutput,
      tool,
      ...(startTask ? { startTask } : {}),
    });
  } catch (error) {
    if (!(error instanceof TaskStart) || !tasks) throw error;
    return startedTask(tasks, call, name, tool, error);
  }
  if (!declared || !tasks) return round;
  const asTask = (result: Result) => {
    const waiting = waitsForPerson(result, call.params.inputResponses);
    return waiting ? waitingTask(tasks, call, name, tool, result, waiting.openedUrls) : result;
  };
  if (!(round instanceof Promise)) return asTask(round);
  return round.then(asTask, (error: unknown) => {
    if (!(error instanceof TaskStart)) throw error;
    return startedTask(tasks, call, name, tool, error);
  });
}

/** The round stopped where the task starts: the task runs that same round again, on the server's side. */
function startedTask(
  tasks: TaskService,
  call: Call,
  name: string,
  tool: ToolEntry,
  start: TaskStart,
): Promise<Result> {
  const params = call.params;
  // What the round resolved before it stopped was sealed for the task (the answers it took are inside): the task
  // continues from there. A round that never asked anything is simply run again, with the call's own state.
  const origin: TaskOrigin =
    start.requestState !== undefined
      ? { kind: 'round', requestState: start.requestState }
      : {
          kind: 'round',
          ...(typeof params.requestState === 'string' ? { requestState: params.requestState } : {}),
          ...(params.inputResponses && typeof params.inputResponses === 'object'
            ? { inputResponses: params.inputResponses as JsonObject as never }
            : {}),
        };
  return tasks
    .create(
      {
        params,
        principal: call.env.principal,
        id: start.taskId,
        flowId: call.flowId ?? call.trace?.flowId,
      },
      name,
      origin,
      tool.task?.ttlMs,
    )
    .then(
      (created) => {
        call.trace?.note({ task: { id: start.taskId, status: 'working', created: true } });
        return created;
      },
      (error: unknown) => {
        call.trace?.note({ task: { id: start.taskId, created: false, ...refusalNote(error) } });
        throw error;
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
  return tasks
    .create(
      {
        params: call.params,
        principal: call.env.principal,
        id,
        flowId: call.flowId ?? call.trace?.flowId,
      },
      name,
      { kind: 'asked', result: result as JsonObject, openedUrls },
      tool.task?.ttlMs,
    )
    .then(
      (created) => {
        call.trace?.note({ task: { id, status: 'working', created: true, waiting: true } });
        return created;
      },
      (error: unknown) => {
        call.trace?.note({ task: { id, created: false, ...refusalNote(error) } });
        // The principal has as many unfinished tasks as it may: the wait goes on as plain rounds, as without tasks.
        if (error instanceof RoundRefused && error.reason === 'too_many_tasks') return result;
        throw error;
      },
    );
}

/** Arguments no preparation could take (a NUL in a path): a tool error the model can read, before anything ran. */
const invalidArguments = (error: unknown): Result => ({
  resultType: 'complete',
  content: [{ type: 'text', text: `Invalid arguments: ${(error as Error)?.message ?? String(error)}` }],
  isError: true,
});

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
