// `mrtr conformance-client <url>`: the client under test for the official conformance runner
// (`npx conformance client --command "mrtr conformance-client"`). The scenario comes from MCP_CONFORMANCE_SCENARIO.
import {
  afterLabel,
  describeOutcome,
  type InputQuestion,
  McpClient,
  type MrtrOutcome,
  OAuthClient,
  RemoteError,
  safe,
  safeLine,
  scriptedResolver,
} from '../client/index.js';
import {
  emptyRecord,
  type InputResponse,
  isJsonObject,
  type JsonObject,
  MrtrError,
  type Result,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '../protocol/index.js';
import { printLine } from './terminal/print.js';

type Scenario = (client: McpClient, context: JsonObject) => Promise<void>;

/** The server under test did not do what the scenario needs: printed as the scenario's failure. */
/** The server under test did not do what a conformance scenario requires. */
export class ConformanceError extends MrtrError {
  override readonly name = 'ConformanceError';
  declare readonly code: 'ERR_CONFORMANCE';
  constructor(message: string) {
    super('ERR_CONFORMANCE', message);
  }
}

const scenarioFailed = (message: string): ConformanceError => new ConformanceError(message);

function expectComplete(name: string, outcome: MrtrOutcome<Result>): void {
  if (outcome.status !== 'complete') throw scenarioFailed(`${name}: ${describeOutcome(outcome)}`);
}

/** Answer any boolean confirmation with yes, and any other form field with a plausible value. */
const confirmAnything = (q: InputQuestion): InputResponse => {
  if (q.kind === 'elicitation.url') return { action: 'accept' };
  const schema = (q.request.params as JsonObject).requestedSchema as JsonObject | undefined;
  const props = isJsonObject(schema?.properties) ? schema.properties : {};
  // Field names are the server's: a field named `__proto__` gets a value like any other.
  const content = emptyRecord<string | number | boolean>();
  for (const [name, s] of Object.entries(props)) {
    const type = isJsonObject(s) ? s.type : undefined;
    // The server's default is the answer a person pressing Enter would give (SEP-1034).
    const d = isJsonObject(s) ? s.default : undefined;
    if (typeof d === 'string' || typeof d === 'number' || typeof d === 'boolean') content[name] = d;
    else if (isJsonObject(s) && Array.isArray(s.enum) && typeof s.enum[0] === 'string')
      content[name] = s.enum[0];
    else content[name] = type === 'boolean' ? true : type === 'number' || type === 'integer' ? 1 : 'ok';
  }
  return { action: 'accept', content };
};

const SCENARIOS: Record<string, Scenario> = {
  'sep-2322-client-request-state': async (client) => {
    await client.discover();
    await client.listTools();
    // Run the flows in parallel: the unrelated call must carry none of the other calls' inputResponses or state.
    const outcomes = await Promise.all([
      client.callTool('test_mrtr_echo_state', {}),
      client.callTool('test_mrtr_unrelated', {}),
      client.callTool('test_mrtr_no_state', {}),
      client.callTool('test_mrtr_no_result_type', {}),
    ]);
    for (const [i, o] of outcomes.entries()) expectComplete(`call ${i}`, o);
  },

  'request-metadata': async (client) => {
    // The mock rejects the first request with UnsupportedProtocolVersion; the client retries with a listed version.
    await client.discover();
    await client.listTools();
  },

  tools_call: async (client) => {
    const tools = await client.listTools();
    const add = tools.find((t) => t.name === 'add_numbers');
    if (!add) throw scenarioFailed('add_numbers is not listed');
    expectComplete('add_numbers', await client.callTool('add_numbers', { a: 5, b: 3 }));
  },

  'http-standard-headers': async (client) => {
    const tools = await client.listTools();
    const tool = tools[0];
    if (tool) expectComplete(tool.name, await client.callTool(tool.name, {}));
    const resources = await client.listResources();
    const resource = resources[0];
    if (resource) expectComplete(resource.uri, await client.readResource(resource.uri));
    const prompts = await client.listPrompts();
    const prompt = prompts[0];
    if (prompt) expectComplete(prompt.name, await client.getPrompt(prompt.name, {}));
  },

  'http-custom-headers': async (client, context) => {
    await client.listTools();
    const calls = Array.isArray(context.toolCalls) ? context.toolCalls : [];
    if (calls.length === 0) throw scenarioFailed('MCP_CONFORMANCE_CONTEXT has no toolCalls');
    for (const call of calls) {
      if (!isJsonObject(call) || typeof call.name !== 'string')
        throw scenarioFailed('malformed toolCalls entry');
      const args = isJsonObject(call.arguments) ? call.arguments : {};
      expectComplete(call.name, await client.callTool(call.name, args));
    }
  },

  'http-invalid-tool-headers': async (client) => {
    const tools = await client.listTools();
    // Tools with invalid x-mcp-header annotations are already excluded by listTools.
    for (const tool of tools) {
      const props = isJsonObject(tool.inputSchema.properties) ? tool.inputSchema.properties : {};
      const args: JsonObject = emptyRecord();
      for (const [name, s] of Object.entries(props)) {
        const type = isJsonObject(s) ? s.type : undefined;
        args[name] = type === 'integer' || type === 'number' ? 1 : type === 'boolean' ? true : 'us-west1';
      }
      expectComplete(tool.name, await client.callTool(tool.name, args));
    }
  },

  // Legacy (2025) servers: the client finds out from the first answer and initializes a session.
  initialize: async (client) => {
    await client.discover();
    await client.listTools();
  },

  'elicitation-sep1034-client-defaults': async (client) => {
    await client.listTools();
    expectComplete('defaults', await client.callTool('test_client_elicitation_defaults', {}));
  },

  'sse-retry': async (client) => {
    // The server closes the call's stream before answering; the client resumes with Last-Event-ID after `retry`.
    await client.listTools();
    expectComplete('test_reconnection', await client.callTool('test_reconnection', {}));
  },

  'json-schema-2020-12-preservation': async (client) => {
    const tools = await client.listTools();
    const focal = tools.find((t) => t.name === 'json_schema_2020_12_tool');
    if (!focal) throw scenarioFailed('json_schema_2020_12_tool is not listed');
    // The schema as received, keyword for keyword: the client keeps tool definitions verbatim.
    expectComplete(
      'json_schema_echo',
      await client.callTool('json_schema_echo', { schema: focal.inputSchema }),
    );
  },

  'json-schema-ref-no-deref': async (client) => {
    // Listing must not fetch the network $ref in lookup_user's schema; the client never dereferences $refs.
    const tools = await client.listTools();
    if (!tools.some((t) => t.name === 'lookup_user')) throw scenarioFailed('lookup_user is not listed');
  },
};

/** The runner's client ID metadata document URL (auth/basic-cimd). */
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';

/** auth/*: sign in (the runner's authorization server redirects at once), then use the server. */
const authScenario: Scenario = async (client) => {
  const tools = await client.listTools();
  const tool = tools[0];
  if (tool) expectComplete(tool.name, await client.callTool(tool.name, {}));
};

/** Follow the authorization endpoint's redirect without a browser: the runner approves every request at once. */
async function followRedirect(url: URL): Promise<URL> {
  const response = await fetch(url, { redirect: 'manual' });
  const location = response.headers.get('location');
  if (!location)
    throw scenarioFailed(`the authorization endpoint answered ${response.status} without a redirect`);
  return new URL(location, url);
}

export async function conformanceClientCommand(argv: string[]): Promise<number> {
  const url = argv[argv.length - 1];
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
  if (!url) {
    process.stderr.write(
      'usage: mrtr conformance-client <url>   (MCP_CONFORMANCE_SCENARIO names the scenario)\n',
    );
    return 2;
  }
  // Own entries only: a scenario named `constructor` must be unknown, not "done" by calling Object.
  const run = Object.hasOwn(SCENARIOS, scenario)
    ? SCENARIOS[scenario]
    : scenario.startsWith('auth/')
      ? authScenario
      : undefined;
  if (!run) {
    process.stderr.write(
      `mrtr conformance-client: unknown scenario '${scenario}' (known: ${Object.keys(SCENARIOS).join(', ')})\n`,
    );
    return 1;
  }
  let context: JsonObject = {};
  if (process.env.MCP_CONFORMANCE_CONTEXT) {
    try {
      const parsed = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT) as unknown;
      if (isJsonObject(parsed)) context = parsed;
    } catch {
      process.stderr.write('mrtr conformance-client: MCP_CONFORMANCE_CONTEXT is not JSON\n');
      return 1;
    }
  }
  const auth = new OAuthClient({
    authorize: (authorizationUrl) => followRedirect(authorizationUrl),
    redirectUri: 'http://127.0.0.1:3939/callback',
    clientId: typeof context.client_id === 'string' ? context.client_id : undefined,
    clientSecret: typeof context.client_secret === 'string' ? context.client_secret : undefined,
    clientMetadataUrl: CLIENT_METADATA_URL,
    clientName: 'mrtr-conformance-client',
    // The client-credentials scenario's client acts on its own behalf: no person, no browser.
    grant: scenario === 'auth/client-credentials-basic' ? 'client_credentials' : 'authorization_code',
  });
  const client = new McpClient({
    server: url,
    auth,
    clientInfo: { name: 'mrtr-conformance-client', version: '0.1.0' },
    resolvers: [scriptedResolver({}, { fallback: confirmAnything })],
    protocolVersion: SUPPORTED_PROTOCOL_VERSIONS.find(
      (v) => v === process.env.MCP_CONFORMANCE_PROTOCOL_VERSION,
    ),
    // Generous: the runner starts many scenarios at once, on a machine that may be busy with other work.
    mrtr: { timeoutMs: 80_000 },
    requestTimeoutMs: 80_000,
    onWarning: (m) => printLine(process.stderr, safe`warning: ${safeLine(m)}`),
  });
  try {
    await run(client, context);
    process.stdout.write(`scenario ${scenario}: done\n`);
    return 0;
  } catch (error) {
    const detail = error instanceof RemoteError ? ` (JSON-RPC ${error.code})` : '';
    // The message may be the server's: sanitized, and a line of its own never starts with it.
    const [first, ...rest] = afterLabel(`${(error as Error).message}${detail}`);
    printLine(process.stderr, safe`mrtr conformance-client: ${safeLine(scenario)}: ${first}`);
    for (const l of rest) printLine(process.stderr, l);
    return 1;
  } finally {
    await client.close();
  }
}
