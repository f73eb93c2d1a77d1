// `mrtr tools <url>`: list a server's tools, with their arguments at a glance.
import { parseArgs } from 'node:util';
import { McpClient, ProtocolViolation, RemoteError, RequestAborted, safeText } from '../client/index.js';
import { isJsonObject, type ToolDefinition } from '../protocol/index.js';
import { EXIT, transportFor } from './call.js';

export const TOOLS_USAGE = `usage: mrtr tools <url> [--token T] [--json]

  <url>       the MCP endpoint (http://host/mcp), or stdio:<command> to launch a server
  --json      print the tools/list result (tools excluded for invalid x-mcp-header are left out)
  --token T   bearer token
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

export async function toolsCommand(argv: string[]): Promise<number> {
  let values: { token?: string; json?: boolean; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        token: { type: 'string' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }));
  } catch (error) {
    process.stderr.write(`mrtr tools: ${(error as Error).message}\n\n${TOOLS_USAGE}`);
    return EXIT.usage;
  }
  if (values.help) {
    process.stdout.write(TOOLS_USAGE);
    return EXIT.ok;
  }
  const [target, ...extra] = positionals;
  if (!target || extra.length > 0) {
    process.stderr.write(`mrtr tools: needs exactly one <url>\n\n${TOOLS_USAGE}`);
    return EXIT.usage;
  }
  let client: McpClient;
  try {
    client = new McpClient({
      server: transportFor(target, values.token),
      onWarning: (m) => process.stderr.write(`mrtr tools: warning: ${m}\n`),
    });
  } catch (error) {
    process.stderr.write(`mrtr tools: ${safeText((error as Error).message)}\n`);
    return EXIT.usage;
  }
  try {
    const tools = await client.listTools({ timeoutMs: 30_000 });
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ tools })}\n`);
      return EXIT.ok;
    }
    if (tools.length === 0) process.stdout.write('(no tools)\n');
    const width = Math.min(32, Math.max(0, ...tools.map((t) => t.name.length)));
    for (const tool of tools) {
      const about = tool.title ?? tool.description ?? '';
      process.stdout.write(safeText(`${tool.name.padEnd(width)}  ${about}\n`));
      const sig = signature(tool);
      if (sig) process.stdout.write(safeText(`${' '.repeat(width)}  (${sig})\n`));
    }
    return EXIT.ok;
  } catch (error) {
    process.stderr.write(`mrtr tools: ${safeText((error as Error).message)}\n`);
    if (error instanceof RemoteError) return EXIT.toolError;
    if (error instanceof ProtocolViolation) return EXIT.protocolError;
    if (error instanceof RequestAborted) return EXIT.unreachable;
    return EXIT.unreachable;
  } finally {
    await client.close();
  }
}
