// tools/call: find the tool once, check the call against it, prepare its arguments, and hand the run on. Whether it
// may become a task, its round, and the task it becomes each have their own file (tools-call-*.ts).
import {
  declaresTasks,
  ErrorCode,
  invalidParams,
  type JsonObject,
  McpError,
  type Result,
  TASKS_REQUIRED_DATA,
} from '../../protocol/index.js';
import type { ToolEntry } from '../catalog/entries.js';
import { handlerContractError } from '../errors.js';
import { type MaybePromise, thenOrNow } from '../maybe-async.js';
import type { Call, Core } from './method.js';
import { admitThenRun } from './tools-call-admission.js';

export function toolsCall(core: Core, call: Call): MaybePromise<Result> {
  const name = call.params.name as string;
  // Found once per request: by the HTTP front for the header parameters, else here.
  const found = call.found ? call.found.entry : core.catalog.findTool(name, call.env);
  return thenOrNow(found, (tool) => callTool(core, call, name, tool));
}

/** A tool hidden from this caller is not found either: the same error, byte for byte, as for an unknown name. */
function callTool(core: Core, call: Call, name: string, tool: ToolEntry | undefined): MaybePromise<Result> {
  if (!tool) throw invalidParams(`Unknown tool: ${name}`, { name });
  const inTask = call.env.taskId !== undefined;
  const declared = core.tasks !== undefined && !inTask && declaresTasks(call.meta.clientCapabilities);
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
  if (inTask) call.trace?.note({ task: { id: call.env.taskId } });
  return admitThenRun(core, call, {
    name,
    tool,
    args,
    checkOutput,
    declared,
    becomesTask: declared && tool.task !== undefined,
  });
}

/** Arguments no preparation could take (a NUL in a path): a tool error the model can read, before anything ran. */
const invalidArguments = (error: unknown): Result => ({
  resultType: 'complete',
  content: [{ type: 'text', text: `Invalid arguments: ${(error as Error)?.message ?? String(error)}` }],
  isError: true,
});
