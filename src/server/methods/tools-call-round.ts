// The round of one tools/call: the tool's handler run through the round chain, with the arguments as prepared, and
// its output checked. A call whose client declared tasks hands its round to tools-call-task.ts.
import type { JsonObject, Result } from '../../protocol/index.js';
import type { ToolEntry } from '../catalog/entries.js';
import type { HandlerOptions } from '../handlers.js';
import type { MaybePromise } from '../maybe-async.js';
import { newTaskId } from '../tasks/task-book.js';
import { TaskStart } from '../tasks/task-start.js';
import type { Call, Core } from './method.js';
import { asTask } from './tools-call-task.js';

/** A tools/call as checked and prepared: what its round runs. */
export interface ToolRun {
  readonly name: string;
  readonly tool: ToolEntry;
  /** The arguments as prepared once: what the state binds, the guards judge and the handler gets. */
  readonly args: JsonObject;
  /** Enforces the tool's outputSchema on a complete result. */
  readonly checkOutput: ((r: Result) => Result) | undefined;
  /** The client declared the tasks extension (and the call is not a task's own round): a wait may become a task. */
  readonly declared: boolean;
  /** The call itself may become a task (its tool runs as one). */
  readonly becomesTask: boolean;
}

/**
 * Rounds a task may take: its questions are paced by people, not by a client's retry loop, and a waiting approval is
 * checked again every few seconds for as long as the task lives.
 */
const TASK_MAX_ROUNDS = 100_000;

export function runToolRound(core: Core, call: Call, run: ToolRun): MaybePromise<Result> {
  const { name, tool, args } = run;
  const tasks = core.tasks;
  // A task's state never leaves the server, and its questions wait for people: it lives as long as the task does.
  const options: HandlerOptions =
    call.env.taskId !== undefined && tasks
      ? { ...tool.mrtr, maxRounds: TASK_MAX_ROUNDS, stateTtlMs: tool.task?.ttlMs ?? tasks.ttlMs }
      : tool.mrtr;
  // Where the call becomes a task: before the handler ('call'), or where it calls ctx.startTask() ('handler').
  const startTask =
    run.becomesTask && tasks
      ? () => {
          // The audit event names the task once it is stored: a call that fails on the way makes none.
          throw new TaskStart(newTaskId(), tool.task?.ttlMs ?? tasks.ttlMs);
        }
      : undefined;
  const round = (): MaybePromise<Result> =>
    core.rounds.round(call, 'tools/call', {
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
      finalize: run.checkOutput,
      tool,
      ...(startTask ? { startTask } : {}),
    });
  return !run.declared || !tasks ? round() : asTask(tasks, call, name, tool, round);
}
