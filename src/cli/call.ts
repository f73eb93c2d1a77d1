// `mrtr call <url> <tool>`: run one tool call through all its rounds — asking in place in a terminal, answering from
// --answers in scripts, and printing JSON for machines.
import {
  afterLabel,
  capabilitiesFor,
  describeOutcome,
  type InputResolver,
  joinSafe,
  McpClient,
  type MrtrOutcome,
  RemoteError,
  RequestAborted,
  rootsResolver,
  type SafeText,
  safe,
  safeLine,
  TransportFailure,
  terminalResolver,
} from '../client/index.js';
import { type JsonObject, type Result, TimeLimitError } from '../protocol/index.js';
import { cliAnswers } from './answers.js';
import {
  CONNECT_OPTIONS,
  envFlags,
  jsonObjectFlag,
  parseCommandLine,
  protocolFlag,
  UsageError,
} from './cli-args.js';
import { rootsFromFlag } from './roots-option.js';
import { PRUNED_NOTE, printableJson, printContent } from './show-result.js';
import { openInBrowser, signIn } from './sign-in.js';
import { stdioTransport, transportFor } from './target.js';
import { printJson, printLine, printUsage, printUsageError } from './terminal/print.js';
import { TaskProgress, taskLine } from './terminal/task-progress.js';
import { CallUi } from './terminal/ui.js';
import { DEFAULT_TOKEN_ENV, tokenFromFlags } from './token-option.js';

export { answerFromCli } from './answers.js';
export { transportFor } from './target.js';

export const CALL_USAGE = `usage: mrtr call <url> <tool> [--args JSON] [--answers JSON] [--token T] [--json]
                 [--max-rounds N] [--timeout SECONDS]
       mrtr call --stdio <tool> [options] [--env NAME[=VALUE]]… -- <command> [args…]

  <url>            the MCP endpoint (http://host/mcp)
  --stdio          launch the server: the command after -- speaks MCP on its stdin/stdout
  --env NAME=VALUE give the stdio server a variable (repeatable); --env NAME passes this one on.
                   A stdio server gets only HOME, LOGNAME, PATH, SHELL, TERM, USER otherwise.
  --args JSON      the tool's arguments, a JSON object (default {}); @FILE reads it from a file,
                   @- from stdin (so does --answers)
  --answers JSON   answers by input key: {"key": {"field": value}} accepts a form with that content,
                   {"key": value} fills a one-field form ("yes"/"no" for yes/no, "17" for a number),
                   "decline"/"cancel" refuse. Only questions it names are answered: an unnamed yes/no
                   is not confirmed for you. Questions a person must answer (consent, second factor,
                   approval, links) are never answered from --answers.
  --roots DIR      the workspace roots offered to a server that asks (roots/list), repeatable;
                   default: the working directory; --roots none offers none
  --json           print {"status","rounds","result",…} on stdout
  --max-rounds N   answered rounds at most: the call sends at most N+1 requests (default 10)
  --timeout S      total time limit in seconds, answering and signing in included (default 300)
  --token T        bearer token (else: an HTTP server that asks for OAuth gets a sign-in in the
                   browser, and the tokens are kept in ~/.config/mrtr/tokens.json, mode 0600)
  --token-env NAME the bearer token from the variable NAME (as MRTR_TOKEN): kept out of the command
                   line and of the resume line mrtr prints
  --client-id ID   a client registered with the server's authorization server beforehand
  --client-secret S   its secret, if it has one
  --scope S        the scopes to ask for (default: those the server names)
  --protocol V     speak only this MCP version: 2026-07-28, or a legacy one (2025-11-25, 2025-06-18,
                   2025-03-26). Default: 2026-07-28, falling back to the legacy protocol when the
                   server does not speak it

  A call the server runs as a task (io.modelcontextprotocol/tasks) is followed to its end: its id and
  how to resume it (mrtr task get <id> <url> --token-env MRTR_TOKEN) are printed once, then its status;
  Ctrl-C cancels the task. The resume line never holds the token: it reads it from a variable.
  A task someone else cancelled exits 1.

  In a terminal, questions are asked in place; each names its input key for --answers. Exit codes:
  0 success, 1 tool error, 2 usage (also: no MCP endpoint at the URL, an --answers entry that does not
  fit), 3 declined, 4 round cap, 5 protocol error, 6 needs a person, 7 timeout or unreachable,
  130 interrupted.
`;

/** Exit codes of `mrtr call` (and `mrtr tools`, which uses the subset that applies). */
export const EXIT = {
  ok: 0,
  /** The tool ran and reported an error (isError), or the server rejected the request with a JSON-RPC error. */
  toolError: 1,
  /** Bad command line: options, JSON, a URL with no MCP endpoint (404), an --answers entry that does not fit. */
  usage: 2,
  /** A question was declined or cancelled and the call did not succeed. */
  declined: 3,
  /** The round cap was hit: the server still asked for input after --max-rounds retries. */
  roundCap: 4,
  /** The server broke the protocol (bad JSON, unknown resultType, undeclared input kind, …). */
  protocolError: 5,
  /** A question only a person may answer (or that nothing else could answer) and no person to ask. */
  needsPerson: 6,
  /** No answer in time, or no connection (refused, reset, HTTP error without a JSON-RPC body). */
  unreachable: 7,
  /** Interrupted (Ctrl-C, or the input closed). */
  aborted: 130,
} as const;

export function exitCodeFor(outcome: MrtrOutcome): number {
  switch (outcome.status) {
    case 'complete':
      if ((outcome.result as JsonObject).isError !== true) return EXIT.ok;
      return outcome.declined.length > 0 ? EXIT.declined : EXIT.toolError;
    case 'server_error':
    case 'resolver_error':
    // A task someone else cancelled (the server, `mrtr task cancel`): the call was refused, not interrupted here.
    case 'cancelled':
      return EXIT.toolError;
    case 'needs_person':
      return EXIT.needsPerson;
    case 'round_cap':
      return EXIT.roundCap;
    case 'protocol_error':
      return EXIT.protocolError;
    case 'transport_error':
      // A URL whose path has no MCP endpoint is a mistake on the command line, not an outage.
      return outcome.httpStatus === 404 ? EXIT.usage : EXIT.unreachable;
    case 'timeout':
      return EXIT.unreachable;
    case 'aborted':
      return EXIT.aborted;
  }
}

function jsonReport(outcome: MrtrOutcome, exitCode: number): JsonObject {
  const { status, rounds } = outcome;
  const report: JsonObject = { status, rounds, retries: Math.max(0, rounds - 1), exitCode };
  switch (outcome.status) {
    case 'complete':
      report.result = outcome.result;
      report.declined = outcome.declined;
      break;
    case 'needs_person':
    case 'round_cap':
      report.pending = outcome.pending;
      if (outcome.status === 'round_cap') report.maxRounds = outcome.maxRounds;
      break;
    case 'server_error':
      report.error = outcome.error;
      break;
    case 'timeout':
      report.timeoutMs = outcome.timeoutMs;
      break;
    case 'aborted':
      break;
    case 'cancelled':
      report.taskId = outcome.taskId;
      report.message = outcome.message;
      break;
    default:
      report.message = outcome.message;
  }
  return report;
}

const CALL_OPTIONS = {
  args: { type: 'string' },
  answers: { type: 'string' },
  'max-rounds': { type: 'string' },
  timeout: { type: 'string' },
  roots: { type: 'string', multiple: true },
  ...CONNECT_OPTIONS,
} as const;

const { args: _args, ...WITHOUT_ARGS } = CALL_OPTIONS;

interface CallValues {
  args?: string;
  answers?: string;
  token?: string;
  'token-env'?: string;
  json: boolean;
  'max-rounds'?: string;
  timeout?: string;
  roots?: string[];
  stdio: boolean;
  env?: string[];
  protocol?: string;
  'client-id'?: string;
  'client-secret'?: string;
  scope?: string;
  help: boolean;
}

/** What a command's own hooks get once the client is connected. */
export interface CommandContext {
  me: SafeText;
  /** The command's own boolean flags (`MrtrCommand.flags`), by name. */
  flags: Record<string, boolean>;
  json: boolean;
  signal: AbortSignal;
  timeoutMs: number;
}

/**
 * One of the three MRTR methods, as a command: `call` (tools/call), `prompt` (prompts/get), `read` (resources/read);
 * or a task followed as a call is (`task get`, `task cancel`).
 */
export interface MrtrCommand {
  name: 'call' | 'prompt' | 'read' | 'task get' | 'task cancel';
  usage: string;
  /** What the second positional is, for messages: "tool", "prompt", "uri". */
  target: string;
  /** Whether --args applies (resources/read takes none). */
  takesArgs: boolean;
  /** Refuse arguments the method cannot carry (a UsageError), before anything is sent. */
  checkArgs?(args: JsonObject): void;
  run(
    client: McpClient,
    name: string,
    args: JsonObject,
    options: Parameters<McpClient['callTool']>[2],
  ): Promise<MrtrOutcome>;
  /** Print a complete result for people (content blocks, prompt messages, resource contents). */
  print(result: Result, stream: NodeJS.WriteStream): { pruned: boolean };
  /** The name comes before the server on the command line (`mrtr task get ID <url>`). */
  nameFirst?: boolean;
  /** Boolean flags of this command only (e.g. `no-wait`). */
  flags?: readonly string[];
  /** Runs in place of the call when it returns an exit code (`task get --no-wait`, `task cancel`). */
  instead?(client: McpClient, name: string, ctx: CommandContext): Promise<number | undefined>;
  /** The line shown before the call starts (default: `→ <name> <args> on <server>`). */
  announce?(name: string, server: SafeText): SafeText;
  /** The one line to print for a failed outcome instead of describeOutcome's, when the command knows better. */
  explain?(
    outcome: MrtrOutcome,
    name: string,
    sawTask: boolean,
    /** How to reach the same server again: the arguments after `mrtr task get <id>`. */
    again: readonly string[],
  ): SafeText | undefined;
}

export const CALL: MrtrCommand = {
  name: 'call',
  usage: '',
  target: 'tool',
  takesArgs: true,
  run: (client, name, args, options) => client.callTool(name, args, options),
  print: (result, stream) => printContent(result as JsonObject, stream),
  explain: (outcome, _name, sawTask) =>
    // Ctrl-C on a call that became a task ends the task too (the client sent tasks/cancel).
    outcome.status === 'aborted' && sawTask ? safe`interrupted: the task was cancelled` : undefined,
};

/** What the command line asks for, checked; a UsageError says what is wrong. */
function readCallLine(argv: string[], what: MrtrCommand) {
  const own = Object.fromEntries(
    (what.flags ?? []).map((f) => [f, { type: 'boolean', default: false } as const]),
  );
  const parsed = parseCommandLine<CallValues & Record<string, unknown>>(
    argv,
    { ...(what.takesArgs ? CALL_OPTIONS : WITHOUT_ARGS), ...own },
    what.target === 'id' ? taskIdArgument : undefined,
  );
  const { values, positionals } = parsed;
  let { command } = parsed;
  if (values.help) return { help: true as const };
  // `mrtr task get -- <id> <url>`: without --stdio, what follows `--` is the id and the URL, as POSIX has it.
  if (what.target === 'id' && !values.stdio && command.length > 0) {
    positionals.push(...command);
    command = [];
  }
  let target: string | undefined;
  let tool: string | undefined;
  let extra: string[];
  if (values.stdio) {
    [tool, ...extra] = positionals;
    if (!tool)
      throw new UsageError(
        `needs <${what.target}>: mrtr ${what.name} --stdio <${what.target}> -- <command> [args…]`,
      );
    if (command.length === 0) throw new UsageError('--stdio needs the server command after --');
  } else {
    [target, tool, ...extra] = positionals;
    if (what.nameFirst) [tool, target] = [target, tool];
    if (command.length > 0) throw new UsageError('a command after -- needs --stdio');
    if (!target || !tool)
      throw new UsageError(
        what.nameFirst ? `needs <${what.target}> and <url>` : `needs <url> and <${what.target}>`,
      );
  }
  if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`);
  const args =
    values.args === undefined
      ? {}
      : jsonObjectFlag('--args', values.args, "a JSON object of the tool's arguments");
  what.checkArgs?.(args);
  const answers =
    values.answers === undefined
      ? undefined
      : jsonObjectFlag('--answers', values.answers, 'a JSON object mapping input keys to answers');
  const maxRounds = values['max-rounds'] === undefined ? undefined : Number(values['max-rounds']);
  if (maxRounds !== undefined && (!Number.isInteger(maxRounds) || maxRounds < 0))
    throw new UsageError('--max-rounds must be an integer >= 0');
  const timeoutS = values.timeout === undefined ? undefined : Number(values.timeout);
  if (timeoutS !== undefined && !(timeoutS > 0))
    throw new UsageError('--timeout must be a number of seconds > 0');
  const env = envFlags(values.env, process.env);
  const protocol = protocolFlag(values.protocol);
  const roots = rootsFromFlag(values.roots, process.cwd());
  // An HTTP server that answers 401 gets the OAuth sign-in; a stdio server is the person's own process.
  const { token, envName } = tokenFromFlags(values, process.env);
  const login =
    values.stdio || token !== undefined
      ? undefined
      : signIn({
          clientId: values['client-id'],
          clientSecret: values['client-secret'],
          scope: values.scope,
          interactive: process.stdin.isTTY === true && process.stderr.isTTY === true,
          out: process.stderr,
          me: `mrtr ${what.name}`,
        });
  const transport = values.stdio
    ? stdioTransport(command, env)
    : transportFor(target as string, { token, env, auth: login?.auth });
  return {
    help: false as const,
    tool,
    args,
    answers,
    maxRounds,
    timeoutS,
    transport,
    protocol,
    login,
    roots,
    json: values.json,
    target,
    flags: Object.fromEntries((what.flags ?? []).map((f) => [f, values[f] === true])),
    // How to reach the same server again (for `mrtr task get`): never the token itself, only where to find it.
    again: [
      ...(values.stdio ? ['--stdio'] : [target as string]),
      ...(token !== undefined ? ['--token-env', envName ?? DEFAULT_TOKEN_ENV] : []),
      ...(values.protocol !== undefined ? ['--protocol', values.protocol] : []),
      ...(values.stdio ? ['--', ...command] : []),
    ],
    // A token given with --token is in no variable yet: a line of its own says which one to set, so the command
    // line above it runs pasted whole.
    againNote:
      token !== undefined && envName === undefined
        ? safe`  set your token first: export ${safeLine(DEFAULT_TOKEN_ENV)}=<your token> (mrtr never prints it)`
        : undefined,
  };
}

/**
 * A task id is the first argument of `mrtr task get|cancel`, and ours are 43 base64url characters: either is the id
 * even when it starts with `-` (older servers issued one such id in 64), unless it names one of our options.
 */
function taskIdArgument(arg: string, index: number): boolean {
  return (index === 0 && !arg.startsWith('--') && arg !== '-h') || /^-[A-Za-z0-9_-]{42}$/.test(arg);
}

/**
 * How a call failed, after our label; a message with several lines (a server's error, the last lines a stdio server
 * wrote to stderr) has every further line quoted.
 */
function printFailure(stderr: NodeJS.WriteStream, me: SafeText, message: string): void {
  const [first, ...rest] = afterLabel(message);
  printLine(stderr, safe`${me}: ${first}`);
  for (const l of rest) printLine(stderr, l);
}

export function callCommand(argv: string[]): Promise<number> {
  return mrtrCommand(argv, { ...CALL, usage: CALL_USAGE });
}

/** Run one MRTR method through all its rounds, as `mrtr call`, `mrtr prompt` or `mrtr read`. */
export async function mrtrCommand(argv: string[], what: MrtrCommand): Promise<number> {
  const stderr = process.stderr;
  const me = safeLine(`mrtr ${what.name}`);
  const usage = (message: SafeText) => {
    printUsageError(stderr, what.usage, `mrtr ${what.name} --help`, safe`${me}: ${message}`);
    return EXIT.usage;
  };
  let line: ReturnType<typeof readCallLine>;
  try {
    line = readCallLine(argv, what);
  } catch (error) {
    if (error instanceof UsageError) return usage(safeLine(error.message));
    throw error;
  }
  if (line.help) {
    printUsage(process.stdout, what.usage);
    return EXIT.ok;
  }
  const { tool, args, answers, maxRounds, timeoutS, transport, protocol, login, roots } = line as Exclude<
    typeof line,
    { help: true }
  >;
  const interactive = process.stdin.isTTY === true && stderr.isTTY === true;
  const color = stderr.isTTY === true && !process.env.NO_COLOR;
  const controller = new AbortController();
  const onSigint = () => controller.abort(new RequestAborted(undefined, 'interrupted'));
  process.once('SIGINT', onSigint);

  const resolvers: InputResolver[] = [];
  const scripted = answers
    ? cliAnswers(answers, (key, problem) =>
        printLine(
          stderr,
          safe`${me}: --answers["${safeLine(key)}"] does not fit the question: ${safeLine(problem)}`,
        ),
      )
    : undefined;
  if (scripted) resolvers.push(scripted.resolver);
  // The workspace roots are answered without asking anyone, as an IDE or the Inspector does.
  if (roots.length > 0) resolvers.push(rootsResolver(roots));
  if (interactive) resolvers.push(terminalResolver({ onInterrupt: onSigint, color, openUrl: openInBrowser }));

  const client = new McpClient({
    server: transport,
    protocol,
    resolvers,
    // Always declare form and URL elicitation, so a question nobody here can answer is reported as such rather
    // than refused by the server as a missing capability.
    capabilities: capabilitiesFor([
      'elicitation.form',
      'elicitation.url',
      ...(roots.length > 0 ? ['roots' as const] : []),
    ]),
    onWarning: (m) => printLine(stderr, safe`${me}: warning: ${safeLine(m)}`),
  });
  const serverName = () => {
    const name = safeLine(client.serverInfo?.name ?? transport.label);
    const where = safeLine(transport.endpoint ?? transport.label);
    return name === where ? name : safe`${name} (${where})`;
  };
  const ui = new CallUi({ out: stderr, live: stderr.isTTY === true, color, server: serverName });
  const asked = new Set<string>();
  // --timeout bounds the whole command: finding out about the server, signing in, and every round.
  const limitMs = (timeoutS ?? 300) * 1000;
  const startedAt = Date.now();
  const endsAt = startedAt + limitMs;
  const left = () => Math.max(1, endsAt - Date.now());
  const timedOut = () =>
    safe`timed out after ${safeLine(((Date.now() - startedAt) / 1000).toFixed(1))} s (--timeout ${safeLine(String(timeoutS ?? 300))})`;
  // The command's own deadline, for the discovery that may carry a sign-in: the OAuth requests and the wait for the
  // browser stop with it, and nothing is left running once the command has given up.
  const deadline = new AbortController();
  const deadlineTimer = setTimeout(
    () => deadline.abort(new TimeLimitError('the command timed out')),
    limitMs,
  );
  try {
    try {
      // Over HTTP the probe may carry a sign-in, which takes a person as long as it takes (within --timeout). A
      // probe limit that would end with the command's is set a moment past it: the deadline then says what happened.
      const probeMs = login ? Number.POSITIVE_INFINITY : 30_000;
      await client.discover({
        signal: AbortSignal.any([controller.signal, deadline.signal]),
        timeoutMs: probeMs < left() ? probeMs : left() + 1000,
      });
    } catch (error) {
      if (deadline.signal.aborted && !controller.signal.aborted) {
        printLine(stderr, safe`${me}: ${timedOut()}`);
        return EXIT.unreachable;
      }
      // Discovery is only for the server's name; a transport failure, though, means the call cannot work either.
      if (error instanceof TransportFailure) {
        printFailure(stderr, me, error.message);
        // The one thing to do about a 401 from a server with no authorization server is on this command line.
        if (error.httpStatus === 401 && login !== undefined)
          printLine(stderr, safe`${me}: give the token with --token TOKEN`);
        return error.httpStatus === 404 ? EXIT.usage : EXIT.unreachable;
      }
      if (!(error instanceof RemoteError) && controller.signal.aborted) return EXIT.aborted;
    }
    const ctx: CommandContext = {
      me,
      flags: line.flags,
      json: line.json,
      signal: controller.signal,
      timeoutMs: left(),
    };
    const instead = await what.instead?.(client, tool as string, ctx);
    if (instead !== undefined) return instead;
    const shownArgs = printableJson(args).text;
    ui.line(
      ui.dim(
        what.announce?.(tool as string, serverName()) ??
          safe`→ ${safeLine(tool as string)} ${safeLine(shownArgs)} on ${serverName()}`,
      ),
    );
    const progress = new TaskProgress({
      out: stderr,
      live: stderr.isTTY === true,
      say: (text) => (stderr.isTTY === true ? ui.line(text) : printLine(stderr, text)),
      resume: what.name === 'call' ? line.again : undefined,
      resumeNote: line.againNote,
    });
    const outcome = await what.run(client, tool as string, args, {
      maxRounds,
      timeoutMs: left(),
      signal: controller.signal,
      onEvent: (e) => {
        if (e.type === 'input_needed') asked.add(e.key);
        progress.onEvent(e);
        ui.onEvent(e);
      },
    });
    ui.stop();
    let code = exitCodeFor(outcome);
    // An --answers entry that did not fit its question is a mistake on the command line, not a missing person.
    if (
      outcome.status === 'needs_person' &&
      scripted &&
      outcome.pending.some((p) => scripted.invalid.has(p.key))
    )
      code = EXIT.usage;
    const unused = scripted?.unused(asked) ?? [];
    if (unused.length > 0 && outcome.status !== 'aborted') {
      const heard = [...asked].map((k) => JSON.stringify(k)).join(', ') || 'none';
      printLine(
        stderr,
        safe`${me}: warning: no question used --answers ${safeLine(unused.map((k) => JSON.stringify(k)).join(', '))} (keys asked: ${safeLine(heard)})`,
      );
    }
    if (line.json) {
      const report = printableJson(jsonReport(outcome, code));
      if (report.pruned) printLine(stderr, safe`${me}: warning: ${PRUNED_NOTE}`);
      printJson(process.stdout, report.text);
      return code;
    }
    if (outcome.status === 'complete') {
      const shown = what.print(outcome.result, process.stdout);
      if (shown.pruned) printLine(stderr, safe`${me}: warning: ${PRUNED_NOTE}`);
      const questions = ui.rounds;
      const requests = safe`${outcome.rounds} request${outcome.rounds === 1 ? safe`` : safe`s`}`;
      const how =
        questions === 0
          ? safe`(no questions)`
          : safe`after ${questions} round${questions === 1 ? safe`` : safe`s`} of questions (${requests})`;
      if (code === EXIT.ok) ui.line(ui.green(safe`✓ done ${how}`));
      else if (code === EXIT.declined) {
        const refused = outcome.declined.map((d) =>
          d.action === 'cancel' ? safe`cancelled ${safeLine(d.key)}` : safe`declined ${safeLine(d.key)}`,
        );
        printLine(stderr, safe`${me}: ${joinSafe(refused, ', ')}; the tool reported an error`);
      } else printLine(stderr, safe`${me}: the tool reported an error (${requests})`);
      return code;
    }
    // The driver counts only the rounds' share of the limit: the person is told the command's.
    if (outcome.status === 'timeout') {
      printLine(
        stderr,
        progress.taskId !== undefined
          ? safe`${me}: ${timedOut()}; the task keeps running on the server: resume it with ${taskLine('get', progress.taskId, line.again)}`
          : safe`${me}: ${timedOut()} (${outcome.rounds} rounds)`,
      );
      if (progress.taskId !== undefined && line.againNote) printLine(stderr, line.againNote);
    } else {
      const explained = what.explain?.(outcome, tool as string, progress.sawTask, line.again);
      if (explained !== undefined) printLine(stderr, safe`${me}: ${explained}`);
      else printFailure(stderr, me, describeOutcome(outcome));
    }
    if (outcome.status === 'needs_person' && !interactive && code !== EXIT.usage) {
      const keys = outcome.pending.filter((p) => p.why === 'no_resolver').map((p) => `"${p.key}": …`);
      const answers = safe`--answers '{${safeLine(keys.join(', '))}}'`;
      // A task waits on the server for its answer: running the call again would start a second one.
      const task = progress.taskId ?? (what.name === 'task get' ? (tool as string) : undefined);
      const resume = task === undefined ? undefined : taskLine('get', task, line.again);
      printLine(
        stderr,
        resume !== undefined
          ? keys.length > 0
            ? safe`${me}: the task waits on the server for the answer: give it with ${resume} ${answers}, or run that in a terminal`
            : safe`${me}: only a person may answer this; the task waits on the server: run ${resume} in a terminal`
          : keys.length > 0
            ? safe`${me}: run it in a terminal to answer, or pass ${answers}`
            : safe`${me}: only a person may answer this: run it in a terminal`,
      );
      if (resume !== undefined && line.againNote) printLine(stderr, line.againNote);
    }
    return code;
  } finally {
    clearTimeout(deadlineTimer);
    ui.stop();
    process.removeListener('SIGINT', onSigint);
    await client.close();
    await login?.close();
  }
}
