// `mrtr tools <url>`: list a server's tools, with their arguments at a glance.
import {
  afterLabel,
  type ClientTransport,
  McpClient,
  ProtocolViolation,
  RemoteError,
  safe,
  safeLine,
  TransportFailure,
} from '../client/index.js';
import { isJsonObject, type ToolDefinition } from '../protocol/index.js';
import { EXIT } from './call.js';
import { CONNECT_OPTIONS, envFlags, parseCommandLine, protocolFlag, UsageError } from './cli-args.js';
import { printableJson } from './show-result.js';
import { type SignIn, signIn } from './sign-in.js';
import { stdioTransport, transportFor } from './target.js';
import { printJson, printLine, printUsage, printUsageError } from './terminal/print.js';
import { tokenFromFlags } from './token-option.js';

export const TOOLS_USAGE = `usage: mrtr tools <url> [--token T] [--json]
       mrtr tools --stdio [--env NAME[=VALUE]]… [--json] -- <command> [args…]

  <url>       the MCP endpoint (http://host/mcp)
  --stdio     launch the server: the command after -- speaks MCP on its stdin/stdout
  --env       give the stdio server a variable (NAME=VALUE, or NAME to pass this one on; repeatable)
  --json      print the tools/list result (tools excluded for invalid x-mcp-header are left out)
  --token T   bearer token (else an HTTP server that asks for OAuth gets a sign-in, as with mrtr call)
  --token-env NAME   the bearer token from the variable NAME (as MRTR_TOKEN): kept out of the command line
  --client-id ID, --client-secret S, --scope S   as for mrtr call
  --protocol V  speak only this MCP version (2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26)
`;

/** `id: integer`, `note?: string`, … from a tool's inputSchema. */
function signature(tool: ToolDefinition): string {
  const schema = tool.inputSchema;
  const props = isJsonObject(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  return Object.entries(props)
    .map(([name, s]) => {
      const t = isJsonObject(s)
        ? Array.isArray(s.enum)
          ? s.enum.map((v) => JSON.stringify(v)).join('|')
          : s.type
        : undefined;
      return `${name}${required.has(name) ? '' : '?'}: ${typeof t === 'string' ? t : 'any'}`;
    })
    .join(', ');
}

const TOOLS_OPTIONS = CONNECT_OPTIONS;

interface ToolsValues {
  token?: string;
  'token-env'?: string;
  json: boolean;
  stdio: boolean;
  env?: string[];
  protocol?: string;
  'client-id'?: string;
  'client-secret'?: string;
  scope?: string;
  help: boolean;
}

function readToolsLine(argv: string[]):
  | { help: true }
  | {
      help: false;
      transport: ClientTransport;
      json: boolean;
      protocol: string | undefined;
      login?: SignIn;
    } {
  const { values, positionals, command } = parseCommandLine<ToolsValues>(argv, TOOLS_OPTIONS);
  if (values.help) return { help: true };
  const env = envFlags(values.env, process.env);
  const protocol = protocolFlag(values.protocol);
  if (values.stdio) {
    if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}' before --`);
    if (command.length === 0) throw new UsageError('--stdio needs the server command after --');
    return { help: false, transport: stdioTransport(command, env), json: values.json, protocol };
  }
  if (command.length > 0) throw new UsageError('a command after -- needs --stdio');
  const [target, ...extra] = positionals;
  if (!target || extra.length > 0) throw new UsageError('needs exactly one <url>');
  const { token } = tokenFromFlags(values, process.env);
  const login =
    token !== undefined
      ? undefined
      : signIn({
          clientId: values['client-id'],
          clientSecret: values['client-secret'],
          scope: values.scope,
          interactive: process.stdin.isTTY === true && process.stderr.isTTY === true,
          out: process.stderr,
          me: 'mrtr tools',
        });
  return {
    help: false,
    login,
    transport: transportFor(target, { token, env, auth: login?.auth }),
    json: values.json,
    protocol,
  };
}

export async function toolsCommand(argv: string[]): Promise<number> {
  const stderr = process.stderr;
  let line: ReturnType<typeof readToolsLine>;
  try {
    line = readToolsLine(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    printUsageError(stderr, TOOLS_USAGE, 'mrtr tools --help', safe`mrtr tools: ${safeLine(error.message)}`);
    return EXIT.usage;
  }
  if (line.help) {
    printUsage(process.stdout, TOOLS_USAGE);
    return EXIT.ok;
  }
  const client = new McpClient({
    server: line.transport,
    protocol: line.protocol,
    onWarning: (m) => printLine(stderr, safe`mrtr tools: warning: ${safeLine(m)}`),
  });
  try {
    const tools = await client.listTools({ timeoutMs: 30_000 });
    if (line.json) {
      printJson(process.stdout, printableJson({ tools }).text);
      return EXIT.ok;
    }
    const out = process.stdout;
    if (tools.length === 0) printLine(out, safe`(no tools)`);
    const width = Math.min(32, Math.max(0, ...tools.map((t) => safeLine(t.name).length)));
    // Each line starts with our bullet or indent, never with a tool's name: a tool cannot print a line of ours.
    for (const tool of tools) {
      const about = tool.title ?? tool.description ?? '';
      printLine(out, safe`• ${safeLine(safeLine(tool.name).padEnd(width))}  ${safeLine(about)}`);
      const sig = signature(tool);
      if (sig) printLine(out, safe`  ${safeLine(' '.repeat(width))}  (${safeLine(sig)})`);
    }
    return EXIT.ok;
  } catch (error) {
    const [first, ...rest] = afterLabel((error as Error).message);
    printLine(stderr, safe`mrtr tools: ${first}`);
    for (const l of rest) printLine(stderr, l);
    if (error instanceof RemoteError) return EXIT.toolError;
    if (error instanceof ProtocolViolation) return EXIT.protocolError;
    if (error instanceof TransportFailure && error.httpStatus === 404) return EXIT.usage;
    return EXIT.unreachable;
  } finally {
    await client.close();
    await line.login?.close();
  }
}
