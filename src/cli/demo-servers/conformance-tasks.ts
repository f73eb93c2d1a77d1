// The tools the official conformance suite's tasks scenarios (the io.modelcontextprotocol/tasks extension) call, as
// their descriptions name them: greet (never a task), slow_compute, failing_job, protocol_error_job, confirm_delete,
// multi_input and test_tool_with_task (input gathered by MRTR first, then the task).
import { z } from 'zod';
import { elicitationForm } from '../../flow/index.js';
import { ErrorCode, McpError } from '../../protocol/index.js';
import { type McpServer, text } from '../../server/index.js';

/** Both fields optional: the suite answers every question of multi_input with `{ name, confirm }`. */
const PartForm = elicitationForm(z.object({ name: z.string().optional(), confirm: z.boolean().optional() }));
const ConfirmForm = elicitationForm(z.object({ confirm: z.boolean() }));
const NameForm = elicitationForm(z.object({ name: z.string() }));

/** Resolves after `ms`, or at once when `signal` aborts (a cancelled task stops waiting). */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}

export function addTaskScenarioTools(server: McpServer): McpServer {
  return server
    .tool(
      { name: 'greet', description: 'Greets by name (never a task)', input: z.object({ name: z.string() }) },
      ({ name }) => text(`Hello, ${name}!`),
    )
    .tool(
      {
        name: 'slow_compute',
        description: 'Works for `seconds` seconds, then answers (a task when the client declares tasks)',
        input: z.object({ seconds: z.number().min(0).max(600), label: z.string().optional() }),
        task: 'optional',
        timeoutMs: 700_000,
      },
      async ({ seconds, label }, ctx) => {
        await pause(seconds * 1000, ctx.signal);
        if (ctx.signal.aborted) return text(`${label ?? 'compute'} stopped`, { isError: true });
        return text(`${label ?? 'compute'} done after ${seconds} s`);
      },
    )
    .tool(
      {
        name: 'failing_job',
        description: 'Always ends with a tool error after about a second (only as a task)',
        task: 'required',
      },
      async (_args, ctx) => {
        await pause(1000, ctx.signal);
        return text('failing_job failed, as it always does', { isError: true });
      },
    )
    .tool(
      { name: 'protocol_error_job', description: 'Fails with a JSON-RPC error (a task)', task: 'optional' },
      () => {
        throw new McpError(
          ErrorCode.InternalError,
          'protocol_error_job failed with an internal error on purpose',
        );
      },
    )
    .tool(
      {
        name: 'confirm_delete',
        description: 'Asks to confirm, then "deletes" the file (a task that asks)',
        input: z.object({ filename: z.string() }),
        task: 'optional',
      },
      async ({ filename }, ctx) => {
        const answer = await ctx.ask.elicit(`Delete ${filename}?`, ConfirmForm, { key: 'confirm' });
        if (answer.action !== 'accept' || !answer.content.confirm) return text(`${filename} kept`);
        return text(`${filename} deleted`);
      },
    )
    .tool(
      { name: 'multi_input', description: 'Asks two questions at once (a task)', task: 'optional' },
      async (_args, ctx) => {
        const [first, second] = await ctx.ask.all([
          ctx.ask.elicit('First part?', PartForm, { key: 'first' }),
          ctx.ask.elicit('Second part?', PartForm, { key: 'second' }),
        ]);
        const part = (a: typeof first) => (a.action === 'accept' ? (a.content.name ?? 'yes') : a.action);
        return text(`first: ${part(first)}, second: ${part(second)}`);
      },
    )
    .tool(
      {
        name: 'test_tool_with_task',
        description: 'Asks for a name by MRTR, then finishes as a task',
        task: { support: 'required', start: 'handler' },
      },
      async (_args, ctx) => {
        const answer = await ctx.ask.elicit('What is your name?', NameForm, { key: 'user_name' });
        const name = answer.action === 'accept' ? answer.content.name : 'stranger';
        ctx.startTask();
        return text(`Hello, ${name}! (finished in a task)`);
      },
    );
}
