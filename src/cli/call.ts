// `mrtr call <url> <tool>`: run one tool call through all its rounds — asking in place in a terminal, answering from
// --answers in scripts, and printing JSON for machines.
import { parseArgs } from 'node:util';
import {
  type ClientTransport,
  capabilitiesFor,
  describeOutcome,
  HttpClientTransport,
  type InputQuestion,
  type InputResolver,
  McpClient,
  type MrtrOutcome,
  RemoteError,
  readForm,
  type ScriptedAnswer,
  StdioClientTransport,
  safeText,
  scriptedResolver,
  TransportFailure,
  terminalResolver,
} from '../client/index.js';
import {
  type CallToolResult,
  type ElicitResult,
  emptyRecord,
  type InputResponse,
  isJsonObject,
  type JsonObject,
} from '../protocol/index.js';
import { CallUi } from './terminal/ui.js';

export const CALL_USAGE = `usage: mrtr call <url> <tool> [--args JSON] [--answers JSON] [--token T] [--json]
                 [--max-rounds N] [--timeout SECONDS]

  <url>            the MCP endpoint (http://host/mcp), or stdio:<command> to launch a server
  --args JSON      the tool's arguments, a JSON object (default {})
  --answers JSON   answers by input key: {"key": {"field": value}} accepts a form with that content,
                   {"key": value} fills a one-field form, "decline"/"cancel" refuse; confirmations
                   (a single yes/no field) default to yes. Questions a person must answer (consent,
                   second factor, approval, links) are never answered from --answers.
  --json           print {"status","rounds","result",…} on stdout
  --max-rounds N   retries at most (default 10)
  --timeout S      total time limit in seconds, including time spent answering (default 300)
  --token T        bearer token

  In a terminal, questions are asked in place. Exit codes: 0 success, 1 tool error, 2 usage,
  3 declined, 4 round cap, 5 protocol error, 6 needs a person, 7 timeout or unreachable, 130 interrupted.
`;

/** Exit codes of `mrtr call` (and `mrtr tools`, which uses the subset that applies). */
export const EXIT = {
  ok: 0,
  /** The tool ran and reported an error (isError), or the server rejected the request with a JSON-RPC error. */
  toolError: 1,
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

/** `http(s)://…` → Streamable HTTP; `stdio:<command> [args…]` → a child process speaking stdio. */
export function transportFor(target: string, token: string | undefined): ClientTransport {
  if (target.startsWith('stdio:')) {
    const words = target.slice('stdio:'.length).trim().split(/\s+/).filter(Boolean);
    const [command, ...args] = words;
    if (!command) throw new Error('stdio: target needs a command, e.g. "stdio:node server.js"');
    return new StdioClientTransport({ command, args, stderr: 'ignore' });
  }
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new Error(`'${target}' is not a URL (expected http(s)://host/path or stdio:<command>)`);
  }
  return new HttpClientTransport({ url, token });
}

/** Turn one --answers entry into an answer for whatever question comes with that key. */
export function answerFromCli(value: unknown): ScriptedAnswer {
  return (q: InputQuestion): InputResponse | undefined => {
    if (q.kind === 'sampling' || q.kind === 'roots')
      return isJsonObject(value) ? (value as unknown as InputResponse) : undefined;
    if (value === 'decline' || value === 'cancel') return { action: value };
    if (q.kind === 'elicitation.url')
      return value === true || value === 'accept' ? { action: 'accept' } : undefined;
    if (isJsonObject(value)) {
      if (value.action === 'accept' || value.action === 'decline' || value.action === 'cancel')
        return value as unknown as ElicitResult;
      return { action: 'accept', content: value as ElicitResult['content'] };
    }
    // A bare value fills a one-field form.
    const fields = readForm((q.request.params as JsonObject).requestedSchema as JsonObject);
    if (fields.length === 1 && fields[0] && value !== null)
      return {
        action: 'accept',
        content: { [fields[0].name]: value as string | number | boolean | string[] },
      };
    return undefined;
  };
}

function printResult(result: CallToolResult, stream: NodeJS.WriteStream): void {
  // The result is the server's text: on a terminal, strip control sequences; piped, pass it through untouched.
  const out = stream.isTTY ? { write: (text: string) => stream.write(safeText(text)) } : stream;
  const blocks = Array.isArray(result.content) ? result.content : [];
  let printed = false;
  for (const b of blocks) {
    if (!isJsonObject(b)) continue;
    if (b.type === 'text' && typeof b.text === 'string') out.write(`${b.text}\n`);
    else if ((b.type === 'image' || b.type === 'audio') && typeof b.data === 'string')
      out.write(`[${b.type} ${String(b.mimeType)}, ${Math.floor((b.data.length * 3) / 4)} bytes]\n`);
    else if (b.type === 'resource_link') out.write(`[link ${String(b.name)}: ${String(b.uri)}]\n`);
    else if (b.type === 'resource' && isJsonObject(b.resource)) {
      const r = b.resource;
      out.write(typeof r.text === 'string' ? `${r.text}\n` : `[resource ${String(r.uri)}]\n`);
    } else out.write(`${JSON.stringify(b)}\n`);
    printed = true;
  }
  if (!printed && result.structuredContent !== undefined)
    out.write(`${JSON.stringify(result.structuredContent, null, 2)}\n`);
}

export function exitCodeFor(outcome: MrtrOutcome<CallToolResult>): number {
  switch (outcome.status) {
    case 'complete':
      if (outcome.result.isError !== true) return EXIT.ok;
      return outcome.declined.length > 0 ? EXIT.declined : EXIT.toolError;
    case 'server_error':
    case 'resolver_error':
      return EXIT.toolError;
    case 'needs_person':
      return EXIT.needsPerson;
    case 'round_cap':
      return EXIT.roundCap;
    case 'protocol_error':
      return EXIT.protocolError;
    case 'transport_error':
    case 'timeout':
      return EXIT.unreachable;
    case 'aborted':
      return EXIT.aborted;
  }
}

function jsonReport(outcome: MrtrOutcome<CallToolResult>, exitCode: number): JsonObject {
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
    default:
      report.message = outcome.message;
  }
  return report;
}

export async function callCommand(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  const parse = () =>
    parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        args: { type: 'string' },
        answers: { type: 'string' },
        token: { type: 'string' },
        json: { type: 'boolean', default: false },
        'max-rounds': { type: 'string' },
        timeout: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  const usage = (message: string) => {
    process.stderr.write(`mrtr call: ${message}\n\n${CALL_USAGE}`);
    return EXIT.usage;
  };
  try {
    parsed = parse();
  } catch (error) {
    return usage((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(CALL_USAGE);
    return EXIT.ok;
  }
  const [target, tool, ...extra] = positionals;
  if (!target || !tool) return usage('needs <url> and <tool>');
  if (extra.length > 0) return usage(`unexpected argument '${extra[0]}'`);
  let args: JsonObject = {};
  let answers: JsonObject | undefined;
  try {
    if (values.args !== undefined) {
      const a = JSON.parse(values.args) as unknown;
      if (!isJsonObject(a)) return usage('--args must be a JSON object');
      args = a;
    }
    if (values.answers !== undefined) {
      const a = JSON.parse(values.answers) as unknown;
      if (!isJsonObject(a)) return usage('--answers must be a JSON object mapping input keys to answers');
      answers = a;
    }
  } catch (error) {
    return usage(`invalid JSON: ${(error as Error).message}`);
  }
  const maxRounds = values['max-rounds'] === undefined ? undefined : Number(values['max-rounds']);
  if (maxRounds !== undefined && (!Number.isInteger(maxRounds) || maxRounds < 0))
    return usage('--max-rounds must be an integer >= 0');
  const timeoutS = values.timeout === undefined ? undefined : Number(values.timeout);
  if (timeoutS !== undefined && !(timeoutS > 0)) return usage('--timeout must be a number of seconds > 0');

  const stderr = process.stderr;
  const interactive = process.stdin.isTTY === true && stderr.isTTY === true;
  const color = stderr.isTTY === true && !process.env.NO_COLOR;
  const controller = new AbortController();
  const onSigint = () => controller.abort(new Error('interrupted'));
  process.once('SIGINT', onSigint);

  const resolvers: InputResolver[] = [];
  if (answers) {
    // Input keys are the server's: an answer to a question keyed `__proto__` must stay an answer.
    const map = emptyRecord<ScriptedAnswer>();
    for (const [k, v] of Object.entries(answers)) map[k] = answerFromCli(v);
    resolvers.push(
      scriptedResolver(map, {
        confirmDefault: true,
        validate: true,
        onInvalid: (key, problem) =>
          stderr.write(`mrtr call: --answers["${key}"] does not fit the question: ${problem}\n`),
      }),
    );
  }
  if (interactive) resolvers.push(terminalResolver({ onInterrupt: onSigint, color }));

  let transport: ReturnType<typeof transportFor>;
  try {
    transport = transportFor(target, values.token);
  } catch (error) {
    process.removeListener('SIGINT', onSigint);
    return usage((error as Error).message);
  }
  const client = new McpClient({
    server: transport,
    resolvers,
    // Always declare form and URL elicitation, so a question nobody here can answer is reported as such rather
    // than refused by the server as a missing capability.
    capabilities: capabilitiesFor(['elicitation.form', 'elicitation.url']),
    onWarning: (m) => stderr.write(`mrtr call: warning: ${m}\n`),
  });
  const ui = new CallUi({
    out: stderr,
    live: stderr.isTTY === true,
    color,
    server: () => client.serverInfo?.name ?? target,
  });
  try {
    try {
      await client.discover({
        signal: controller.signal,
        timeoutMs: Math.min(30_000, (timeoutS ?? 300) * 1000),
      });
    } catch (error) {
      // Discovery is only for the server's name; a transport failure, though, means the call cannot work either.
      if (error instanceof TransportFailure) {
        stderr.write(`mrtr call: ${safeText(error.message)}\n`);
        return EXIT.unreachable;
      }
      if (!(error instanceof RemoteError) && controller.signal.aborted) return EXIT.aborted;
    }
    ui.line(ui.dim(safeText(`→ ${tool} ${JSON.stringify(args)} on ${client.serverInfo?.name ?? target}`)));
    const outcome = await client.callTool(tool, args, {
      maxRounds,
      timeoutMs: timeoutS === undefined ? undefined : timeoutS * 1000,
      signal: controller.signal,
      onEvent: ui.onEvent,
    });
    ui.stop();
    const code = exitCodeFor(outcome);
    if (values.json) {
      process.stdout.write(`${JSON.stringify(jsonReport(outcome, code))}\n`);
      return code;
    }
    if (outcome.status === 'complete') {
      printResult(outcome.result, process.stdout);
      const r = `${outcome.rounds} round${outcome.rounds === 1 ? '' : 's'}`;
      if (code === EXIT.ok) ui.line(ui.green(`✓ done in ${r}`));
      else if (code === EXIT.declined)
        stderr.write(
          `mrtr call: declined (${outcome.declined.map((d) => d.key).join(', ')}); the tool reported an error\n`,
        );
      else stderr.write(`mrtr call: the tool reported an error (${r})\n`);
      return code;
    }
    stderr.write(`mrtr call: ${safeText(describeOutcome(outcome))}\n`);
    if (outcome.status === 'needs_person' && !interactive)
      stderr.write('mrtr call: run it in a terminal to answer, or pass the answers with --answers\n');
    return code;
  } finally {
    ui.stop();
    process.removeListener('SIGINT', onSigint);
    await client.close();
  }
}
