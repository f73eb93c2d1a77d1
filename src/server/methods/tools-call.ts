// tools/call: check the arguments, run the tool through the round pipeline, enforce its outputSchema.
import { invalidParams, type Result } from '../../protocol/index.js';
import type { ToolEntry } from '../catalog/entries.js';
import { handlerContractError } from '../errors.js';
import type { MaybePromise } from '../maybe-async.js';
import type { Call, Core } from './method.js';

export function toolsCall(core: Core, call: Call): MaybePromise<Result> {
  const name = call.params.name as string;
  const found = core.catalog.findTool(name, call.env);
  return found instanceof Promise
    ? found.then((tool) => callTool(core, call, name, tool))
    : callTool(core, call, name, found);
}

/** A tool hidden from this caller is not found either: the same error, byte for byte, as for an unknown name. */
function callTool(core: Core, call: Call, name: string, tool: ToolEntry | undefined): MaybePromise<Result> {
  if (!tool) throw invalidParams(`Unknown tool: ${name}`, { name });
  const args = call.params.arguments ?? {};
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
  return core.rounds.round(call, 'tools/call', {
    target: name,
    arguments: args,
    options: tool.mrtr,
    invoke: (ctx) => {
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
  });
}
