// Tools that run as tasks (the tasks extension, docs/tasks.md): a long report that asks one question on the way, and
// a name gathered by MRTR before the long part starts. test/docs/examples-run.test.ts calls both with mrtr's client.
import { elicitationForm } from 'mrtr/flow';
import { McpServer, text } from 'mrtr/server';
import { z } from 'zod';

const Scope = elicitationForm(z.object({ quarter: z.enum(['Q1', 'Q2', 'Q3', 'Q4']) }));
const Name = elicitationForm(z.object({ name: z.string() }));

/** Resolves after `ms`, or as soon as `signal` aborts (the client cancelled the task). */
function work(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

export function tasksServer(o: { stateKeys?: string; workMs?: number } = {}): McpServer {
  const workMs = o.workMs ?? 3000;
  // #region task-tool
  const server = new McpServer({
    name: 'reports',
    version: '1.0.0',
    ...(o.stateKeys ? { state: { keys: o.stateKeys } } : {}),
  });
  server.tool(
    {
      name: 'build_report',
      description: 'Builds the sales report for a quarter (takes a while)',
      // A client that declares the tasks extension gets a task; any other client, a plain (long) call.
      task: 'optional',
    },
    async (_args, ctx) => {
      // Asked inside the task: the client sees it on tasks/get and answers with tasks/update.
      const scope = await ctx.ask.elicit('Which quarter?', Scope, { key: 'quarter' });
      if (scope.action !== 'accept') return text('No report: no quarter chosen');
      await work(workMs, ctx.signal); // tasks/cancel aborts ctx.signal
      if (ctx.signal.aborted) return text('Report cancelled', { isError: true });
      return text(`Sales report for ${scope.content.quarter}: 1,204 orders`);
    },
  );
  // #endregion
  // #region start-in-handler
  server.tool(
    {
      name: 'greet_slowly',
      description: 'Asks your name, then takes its time',
      // Questions before ctx.startTask() go as ordinary MRTR rounds; the rest runs as the task.
      task: { support: 'required', start: 'handler' },
    },
    async (_args, ctx) => {
      const answer = await ctx.ask.elicit('What is your name?', Name, { key: 'name' });
      const name = answer.action === 'accept' ? answer.content.name : 'stranger';
      ctx.startTask();
      await work(workMs, ctx.signal);
      return text(`Hello, ${name}!`);
    },
  );
  // #endregion
  return server;
}
