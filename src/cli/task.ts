// `mrtr task get|cancel <id> <server>`: pick up a task a call left running (io.modelcontextprotocol/tasks) — follow
// it to its end as `mrtr call` would have, look at it once (--no-wait), or cancel it.
import {
  type DetailedTask,
  type McpClient,
  type MrtrOutcome,
  ProtocolViolation,
  RemoteError,
  RequestAborted,
  type SafeText,
  safe,
  safeLine,
  TransportFailure,
  taskState,
} from '../client/index.js';
import type { JsonObject } from '../protocol/index.js';
import { CALL, type CommandContext, EXIT, type MrtrCommand, mrtrCommand } from './call.js';
import { PRUNED_NOTE, printableJson, printContent } from './show-result.js';
import { printJson, printLine, printUsage, printUsageError } from './terminal/print.js';
import { taskLine, taskStatusLine } from './terminal/task-progress.js';

export const TASK_USAGE = `usage: mrtr task get <id> <url> [--answers JSON] [--token T | --token-env NAME] [--json]
                        [--no-wait] [--max-rounds N] [--timeout SECONDS]
       mrtr task get <id> --stdio [options] -- <command> [args…]
       mrtr task cancel <id> <url> [--token T | --token-env NAME] [--json]
       mrtr task cancel <id> --stdio [options] -- <command> [args…]

  A tool call the server runs as a task (the io.modelcontextprotocol/tasks extension) can be picked
  up again by its id, which mrtr call prints ("resume with: …"). An id that starts with - is still
  the id when it comes first (mrtr task get -4rQf… <url>), or after -- (mrtr task get -- <id> <url>).

  get      follow the task to its end, answering its questions as mrtr call does (--answers, or
           in place in a terminal), and print its result as mrtr call does; exit codes as for
           mrtr call. --no-wait prints the task's state once (JSON with --json) and exits 0.
  cancel   ask the server to cancel the task (tasks/cancel), then print what became of it:
           "task <id> cancelled", or that it had already ended (completed, failed) or is still
           ending (cancelling is cooperative). --json prints {"taskId","before","status","cancelled"}.


  Options reach the server as for mrtr call (--token, --token-env, --stdio, --env, --protocol,
  OAuth sign-in).
  An id the server does not know (unknown, expired, or another user's task) exits 1; with --json,
  stdout says so too ({"status":"server_error","error":{…},"message":…}).
  Ctrl-C while following a task stops watching it and exits 130: the task goes on (mrtr task
  cancel ends it).
`;

/**
 * A task request that failed: one line, the exit code mrtr call uses for the same failure, and the report --json
 * prints (the statuses of mrtr call --json).
 */
function failure(
  error: unknown,
  id: string,
  server: SafeText,
): { line: SafeText; code: number; report: JsonObject } {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof RemoteError) {
    const report = { status: 'server_error', error: { code: error.code, message }, exitCode: EXIT.toolError };
    if (error.code === -32602)
      return {
        line: safe`task ${safeLine(id)} is not known to ${server}: ${safeLine(message)}`,
        code: EXIT.toolError,
        report: { ...report, message: `task ${id} is not known to the server` },
      };
    return { line: safe`server error ${error.code}: ${safeLine(message)}`, code: EXIT.toolError, report };
  }
  if (error instanceof ProtocolViolation)
    return {
      line: safe`protocol error: ${safeLine(message)}`,
      code: EXIT.protocolError,
      report: { status: 'protocol_error', message, exitCode: EXIT.protocolError },
    };
  if (error instanceof TransportFailure) {
    const code = error.httpStatus === 404 ? EXIT.usage : EXIT.unreachable;
    return { line: safeLine(message), code, report: { status: 'transport_error', message, exitCode: code } };
  }
  if (error instanceof RequestAborted && (error.reason as { code?: string })?.code === 'ERR_ABORTED')
    return {
      line: safe`interrupted`,
      code: EXIT.aborted,
      report: { status: 'aborted', exitCode: EXIT.aborted },
    };
  return {
    line: safeLine(message),
    code: EXIT.unreachable,
    report: { status: 'transport_error', message, exitCode: EXIT.unreachable },
  };
}

/** Says why a task request failed: on stderr always, and as a report on stdout under --json. */
function reportFailure(error: unknown, id: string, client: McpClient, ctx: CommandContext): number {
  const { line, code, report } = failure(error, id, serverOf(client));
  printLine(process.stderr, safe`${ctx.me}: ${line}`);
  if (ctx.json) printJson(process.stdout, printableJson(report).text);
  return code;
}

const serverOf = (client: McpClient) => safeLine(client.serverInfo?.name ?? client.transport.label);

/** The task's state for a person: its status line, then what it carries (result, error, open questions). */
function printState(task: DetailedTask): { pruned: boolean } {
  const out = process.stdout;
  printLine(out, taskStatusLine({ type: 'task', ...task, statusMessage: task.statusMessage }));
  if (task.status === 'completed' && task.result) return printContent(task.result as JsonObject, out);
  if (task.status === 'failed' && task.error)
    printLine(out, safe`error ${safeLine(String(task.error.code))}: ${safeLine(String(task.error.message))}`);
  if (task.status === 'input_required')
    for (const [key, request] of Object.entries(task.inputRequests ?? {})) {
      const params = (request as { params?: { message?: unknown } }).params;
      const message = typeof params?.message === 'string' ? safe` — ${safeLine(params.message)}` : safe``;
      printLine(out, safe`  asks ${safeLine(key)}${message}`);
    }
  return { pruned: false };
}

export const TASK_GET: MrtrCommand = {
  ...CALL,
  name: 'task get',
  usage: TASK_USAGE,
  target: 'id',
  takesArgs: false,
  nameFirst: true,
  flags: ['no-wait'],
  // Another terminal's Ctrl-C stops watching; ending the task is mrtr task cancel's job.
  run: (client, id, _args, options) => client.followTask(id, { ...options, cancelOnAbort: false }),
  announce: (id, server) => safe`→ task ${safeLine(id)} on ${server}`,
  async instead(client, id, ctx: CommandContext) {
    if (!ctx.flags['no-wait']) return undefined;
    let task: DetailedTask;
    try {
      task = await client.getTask(id, { signal: ctx.signal, timeoutMs: ctx.timeoutMs });
    } catch (error) {
      return reportFailure(error, id, client, ctx);
    }
    const shown = ctx.json ? printableJson(taskState(task)) : undefined;
    if (shown) printJson(process.stdout, shown.text);
    const pruned = shown ? shown.pruned : printState(task).pruned;
    if (pruned) printLine(process.stderr, safe`${ctx.me}: warning: ${PRUNED_NOTE}`);
    return EXIT.ok;
  },
  explain(outcome: MrtrOutcome, id: string, sawTask: boolean, again: readonly string[]) {
    if (outcome.status === 'aborted')
      return safe`stopped watching task ${safeLine(id)}; it keeps running on the server (${taskLine('cancel', id, again)} ends it)`;
    // The first tasks/get failed: the id itself is what is wrong, not the task's work.
    if (outcome.status !== 'server_error' || sawTask || outcome.error.code !== -32602) return undefined;
    return safe`task ${safeLine(id)} is not known to the server: ${safeLine(outcome.error.message)}`;
  },
};

export const TASK_CANCEL: MrtrCommand = {
  ...TASK_GET,
  name: 'task cancel',
  flags: [],
  async instead(client, id, ctx: CommandContext) {
    let before: DetailedTask;
    let after: DetailedTask;
    try {
      // The acknowledgement is the same whatever the task's state: its state before and after says what it did.
      before = await client.getTask(id, { signal: ctx.signal, timeoutMs: ctx.timeoutMs });
      await client.cancelTask(id, { signal: ctx.signal, timeoutMs: ctx.timeoutMs });
      after = await client.getTask(id, { signal: ctx.signal, timeoutMs: ctx.timeoutMs });
    } catch (error) {
      return reportFailure(error, id, client, ctx);
    }
    if (ctx.json) {
      // What a script needs to tell the four endings apart, without parsing the sentence below.
      const report = {
        taskId: id,
        before: before.status,
        status: after.status,
        cancelled: after.status === 'cancelled',
      };
      printJson(process.stdout, printableJson(report).text);
      return EXIT.ok;
    }
    const task = safeLine(id);
    const status = safeLine(after.status);
    printLine(
      process.stdout,
      before.status === 'cancelled'
        ? safe`task ${task} was already cancelled: nothing to do`
        : after.status === 'cancelled'
          ? safe`task ${task} cancelled`
          : after.status === 'completed' || after.status === 'failed'
            ? safe`task ${task} had already ended (${status}): nothing to cancel`
            : safe`cancel sent for task ${task}; it is still ${status} (cancelling is cooperative)`,
    );
    return EXIT.ok;
  },
};

export async function taskCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'get':
      return mrtrCommand(rest, TASK_GET);
    case 'cancel':
      return mrtrCommand(rest, TASK_CANCEL);
    case '--help':
    case '-h':
    case 'help':
      printUsage(process.stdout, TASK_USAGE);
      return EXIT.ok;
    default:
      printUsageError(
        process.stderr,
        TASK_USAGE,
        'mrtr task --help',
        sub === undefined
          ? safe`mrtr task: needs a subcommand: get or cancel`
          : safe`mrtr task: unknown subcommand '${safeLine(sub)}' (expected get or cancel)`,
      );
      return EXIT.usage;
  }
}
