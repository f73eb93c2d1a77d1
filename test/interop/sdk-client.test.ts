// Interop: the official TypeScript SDK client (@modelcontextprotocol/client) against mrtr's server, over real
// Streamable HTTP on 127.0.0.1. The SDK negotiates 2026-07-28 with `server/discover` (versionNegotiation 'auto'),
// then fulfils every input_required result itself through the handlers registered with setRequestHandler and
// retries with inputResponses + the byte-exact requestState. A recording fetch lets each test check the wire too.
import {
  Client,
  type ClientCapabilities,
  type CreateMessageResult,
  type ElicitResult,
  type FetchLike,
  type ListRootsResult,
  ProtocolError,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { z } from 'zod';
import { conformanceServer } from '../../src/cli/demo-servers/conformance.js';
import { exampleServer } from '../../src/cli/demo-servers/example.js';
import { approvalServer } from '../fixtures/approval-server.js';

const PROTOCOL = '2026-07-28';
const INVALID_PARAMS = -32602;

type JsonObject = Record<string, unknown>;

/** One HTTP exchange as the SDK's transport made it. */
interface Exchange {
  method: string;
  headers: Record<string, string>;
  body: JsonObject | undefined;
  status: number;
  response: JsonObject | undefined;
}

/** One embedded input request the SDK dispatched to a handler of ours. */
interface HandlerCall {
  method: string;
  /** ctx.mcpReq.id: the SDK passes the inputRequests key as the synthetic request id. */
  key: string;
  params: JsonObject;
}

type Answer<R> = (params: JsonObject, key: string) => R | Promise<R>;

interface Handlers {
  elicit?: Answer<ElicitResult>;
  sample?: Answer<CreateMessageResult>;
  roots?: Answer<ListRootsResult>;
}

interface Harness {
  client: Client;
  calls: HandlerCall[];
  wire: Exchange[];
  /** The POSTs of one JSON-RPC method, in order. */
  posts(method: string): Exchange[];
}

interface Endpoint {
  url: string;
  close(): Promise<void> | void;
}

const endpoints: { conformance?: Endpoint; approval?: Endpoint; example?: Endpoint } = {};
const open: Client[] = [];

/** What the servers log (kept off stderr; the requestState tests read the rejection reasons). */
const serverLog: { level: string; message: string; fields: Record<string, unknown> }[] = [];
const logger = {
  info: (fields: Record<string, unknown>, message: string) =>
    serverLog.push({ level: 'info', message, fields }),
  warn: (fields: Record<string, unknown>, message: string) =>
    serverLog.push({ level: 'warn', message, fields }),
  error: (fields: Record<string, unknown>, message: string) =>
    serverLog.push({ level: 'error', message, fields }),
};

beforeAll(async () => {
  endpoints.conformance = await conformanceServer({ logger }).listen({ port: 0 });
  endpoints.approval = await approvalServer({ logger }).listen({ port: 0 });
  endpoints.example = await exampleServer({ logger }).listen({ port: 0 });
});

afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
  serverLog.length = 0;
});

afterAll(async () => {
  await Promise.all(Object.values(endpoints).map((e) => e?.close()));
});

function urlOf(name: keyof typeof endpoints): string {
  const e = endpoints[name];
  if (!e) throw new Error(`${name} server is not listening`);
  return e.url;
}

function recordingFetch(wire: Exchange[]): FetchLike {
  return async (url, init) => {
    const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as JsonObject) : undefined;
    const res = await fetch(url, init);
    const exchange: Exchange = {
      method: init?.method ?? 'GET',
      headers: Object.fromEntries(new Headers(init?.headers).entries()),
      body,
      status: res.status,
      response: undefined,
    };
    // Only buffered JSON answers are read back (an SSE clone would block until the stream ends).
    if (res.headers.get('content-type')?.startsWith('application/json')) {
      exchange.response = (await res.clone().json()) as JsonObject;
    }
    wire.push(exchange);
    return res;
  };
}

async function connect(
  server: keyof typeof endpoints,
  handlers: Handlers = {},
  options: { capabilities?: ClientCapabilities; maxRounds?: number } = {},
): Promise<Harness> {
  const capabilities: ClientCapabilities = options.capabilities ?? {
    ...(handlers.elicit && { elicitation: { form: {} } }),
    ...(handlers.sample && { sampling: {} }),
    ...(handlers.roots && { roots: {} }),
  };
  const client = new Client(
    { name: 'mrtr-interop', version: '1.0.0' },
    {
      capabilities,
      versionNegotiation: { mode: 'auto' },
      ...(options.maxRounds !== undefined && { inputRequired: { maxRounds: options.maxRounds } }),
    },
  );
  const calls: HandlerCall[] = [];
  const record = (method: string, params: unknown, key: unknown) => {
    const call = { method, key: String(key), params: structuredClone((params ?? {}) as JsonObject) };
    calls.push(call);
    return call;
  };
  const { elicit, sample, roots } = handlers;
  if (elicit) {
    client.setRequestHandler('elicitation/create', async (request, ctx) => {
      const c = record(request.method, request.params, ctx.mcpReq.id);
      return elicit(c.params, c.key);
    });
  }
  if (sample) {
    client.setRequestHandler('sampling/createMessage', async (request, ctx) => {
      const c = record(request.method, request.params, ctx.mcpReq.id);
      return sample(c.params, c.key);
    });
  }
  if (roots) {
    client.setRequestHandler('roots/list', async (request, ctx) => {
      const c = record(request.method, request.params, ctx.mcpReq.id);
      return roots(c.params, c.key);
    });
  }
  const wire: Exchange[] = [];
  await client.connect(
    new StreamableHTTPClientTransport(new URL(urlOf(server)), { fetch: recordingFetch(wire) }),
  );
  open.push(client);
  return {
    client,
    calls,
    wire,
    posts: (method) => wire.filter((x) => x.method === 'POST' && x.body?.method === method),
  };
}

const paramsOf = (x: Exchange | undefined): JsonObject => (x?.body?.params ?? {}) as JsonObject;
const resultOf = (x: Exchange | undefined): JsonObject => (x?.response?.result ?? {}) as JsonObject;

/**
 * The MRTR contract on the wire: the first leg carries neither inputResponses nor requestState, every retry echoes
 * the previous leg's requestState byte for byte, keeps the original name/arguments, and uses a fresh JSON-RPC id.
 */
function expectRetryChain(legs: Exchange[], expectedResponseKeys: string[][]): void {
  expect(legs).toHaveLength(expectedResponseKeys.length + 1);
  const first = paramsOf(legs[0]);
  expect(first).not.toHaveProperty('inputResponses');
  expect(first).not.toHaveProperty('requestState');
  const ids = new Set(legs.map((l) => l.body?.id));
  expect(ids.size).toBe(legs.length);
  for (let i = 1; i < legs.length; i++) {
    const prev = resultOf(legs[i - 1]);
    const params = paramsOf(legs[i]);
    expect(prev.resultType).toBe('input_required');
    expect(typeof prev.requestState).toBe('string');
    expect(params.requestState).toBe(prev.requestState);
    expect(params.name).toEqual(first.name);
    expect(params.arguments).toEqual(first.arguments);
    expect(Object.keys(params.inputResponses as JsonObject).sort()).toEqual(
      [...(expectedResponseKeys[i - 1] ?? [])].sort(),
    );
  }
  expect(resultOf(legs.at(-1)).resultType).toBe('complete');
  for (const leg of legs) {
    expect(leg.status).toBe(200);
    expect(leg.headers['mcp-protocol-version']).toBe(PROTOCOL);
  }
}

const accept = (content: Record<string, string | number | boolean>): ElicitResult => ({
  action: 'accept',
  content,
});

describe('version negotiation', () => {
  it("mode 'auto' selects 2026-07-28 through one server/discover probe, never initialize", async () => {
    const h = await connect('approval');
    expect(h.client.getProtocolEra()).toBe('modern');
    expect(h.client.getNegotiatedProtocolVersion()).toBe(PROTOCOL);
    expect(h.client.getServerVersion()).toEqual({ name: 'mrtr-approval', version: '0.1.0' });
    expect(h.client.getServerCapabilities()).toMatchObject({ tools: {} });
    expect(h.client.getDiscoverResult()?.supportedVersions).toEqual([PROTOCOL]);
    expect(h.wire.map((x) => x.body?.method)).toEqual(['server/discover']);
    expect(h.wire[0]?.headers['mcp-protocol-version']).toBe(PROTOCOL);
    expect(h.wire[0]?.headers['mcp-method']).toBe('server/discover');
  });

  it('without versionNegotiation the SDK sends a legacy initialize, which a server with legacyClients: false refuses with 400 naming its version', async () => {
    const wire: Exchange[] = [];
    const client = new Client({ name: 'mrtr-interop-legacy', version: '1.0.0' });
    const modernOnly = await approvalServer({ logger, legacyClients: false }).listen({ port: 0 });
    onTestFinished(() => modernOnly.close());
    const failure = await client
      .connect(new StreamableHTTPClientTransport(new URL(modernOnly.url), { fetch: recordingFetch(wire) }))
      .then(
        () => undefined,
        (error: unknown) => error as Error,
      );
    // What the SDK shows its user is our message: the one place a legacy client learns which version to speak.
    expect(String(failure)).toContain('This server speaks only MCP 2026-07-28');
    expect(wire[0]?.response).toMatchObject({
      error: { code: -32020, data: { requested: '2025-11-25', supported: ['2026-07-28'] } },
    });
    await client.close();
    expect(wire).toHaveLength(1);
    expect(wire[0]?.body?.method).toBe('initialize');
    expect(wire[0]?.headers).not.toHaveProperty('mcp-protocol-version');
    expect(wire[0]?.status).toBe(400);
  });
});

describe('two rounds: approve_change', () => {
  it('elicits approval once, retries with the answer and returns the exact result', async () => {
    const h = await connect('approval', { elicit: () => accept({ approve: true }) });
    const result = await h.client.callTool({ name: 'approve_change', arguments: { change: 'deploy-42' } });

    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: 'text', text: 'approved deploy-42' }]);
    expect(h.calls).toEqual([
      {
        method: 'elicitation/create',
        key: 'confirm',
        params: {
          mode: 'form',
          message: 'Approve deploy-42?',
          requestedSchema: {
            type: 'object',
            properties: { approve: { type: 'boolean' } },
            required: ['approve'],
          },
        },
      },
    ]);
    const legs = h.posts('tools/call');
    expectRetryChain(legs, [['confirm']]);
    expect(paramsOf(legs[1]).inputResponses).toEqual({
      confirm: { action: 'accept', content: { approve: true } },
    });
    expect(legs.every((l) => l.headers['mcp-name'] === 'approve_change')).toBe(true);
  });

  it('a refusal makes the server ask again each round until the SDK round cap trips', async () => {
    const h = await connect('approval', { elicit: () => accept({ approve: false }) }, { maxRounds: 3 });
    const err = await h.client.callTool({ name: 'approve_change', arguments: { change: 'deploy-43' } }).then(
      () => undefined,
      (e: unknown) => e as { code?: unknown; message?: string },
    );
    expect(err?.code).toBe('INPUT_REQUIRED_ROUNDS_EXCEEDED');
    expect(h.calls.map((c) => c.key)).toEqual(['confirm', 'confirm', 'confirm']);
    const legs = h.posts('tools/call');
    expect(legs).toHaveLength(4);
    // Every round mints a fresh requestState; the SDK echoes the latest one.
    const states = legs.map((l) => resultOf(l).requestState);
    expect(new Set(states).size).toBe(4);
    for (let i = 1; i < legs.length; i++) expect(paramsOf(legs[i]).requestState).toBe(states[i - 1]);
  });
});

describe('three rounds', () => {
  it('conformance test_input_required_result_multi_round: name, then colour, then the answer', async () => {
    const h = await connect('conformance', {
      elicit: (_p, key) => (key === 'step1' ? accept({ name: 'Alice' }) : accept({ color: 'green' })),
    });
    const result = await h.client.callTool({ name: 'test_input_required_result_multi_round', arguments: {} });

    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: 'text', text: 'Alice likes green' }]);
    expect(h.calls.map((c) => [c.method, c.key, c.params.message])).toEqual([
      ['elicitation/create', 'step1', 'Step 1: What is your name?'],
      ['elicitation/create', 'step2', 'Step 2: What is your favorite color?'],
    ]);
    expectRetryChain(h.posts('tools/call'), [['step1'], ['step2']]);
  });

  it('example resolve_bug, Duplicate path: resolution, original, confirm, then resolved', async () => {
    const answers: Record<string, ElicitResult> = {
      resolution: accept({ resolution: 'Duplicate' }),
      original: accept({ original: 3 }),
      confirm: accept({ confirm: true }),
    };
    const h = await connect('example', {
      elicit: (_p, key) => answers[key] ?? { action: 'cancel' },
    });
    const result = await h.client.callTool({ name: 'resolve_bug', arguments: { id: 7 } });

    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: 'text', text: 'Bug 7 resolved as Duplicate (duplicate of 3)' }]);
    expect(h.calls.map((c) => [c.key, c.params.message])).toEqual([
      ['resolution', 'How was bug 7 resolved?'],
      ['original', 'Bug 7 duplicates which bug?'],
      ['confirm', 'Close bug 7 as a duplicate of bug 3?'],
    ]);
    expect(h.calls[0]?.params.requestedSchema).toEqual({
      type: 'object',
      properties: {
        resolution: {
          type: 'string',
          title: 'Resolution',
          enum: ['Fixed', 'Duplicate', "Won't fix", 'Cannot reproduce'],
        },
      },
      required: ['resolution'],
    });
    expectRetryChain(h.posts('tools/call'), [['resolution'], ['original'], ['confirm']]);
  });
});

describe('prompts/get through MRTR', () => {
  it('conformance test_input_required_result_prompt asks for context, then returns the prompt', async () => {
    const h = await connect('conformance', { elicit: () => accept({ context: 'the 02:00 outage' }) });
    const result = await h.client.getPrompt({ name: 'test_input_required_result_prompt' });

    expect(result.messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'Use this context: the 02:00 outage' } },
    ]);
    expect(h.calls).toEqual([
      {
        method: 'elicitation/create',
        key: 'user_context',
        params: {
          mode: 'form',
          message: 'What context should the prompt use?',
          requestedSchema: {
            type: 'object',
            properties: { context: { type: 'string' } },
            required: ['context'],
          },
        },
      },
    ]);
    const legs = h.posts('prompts/get');
    expect(legs).toHaveLength(2);
    expect(paramsOf(legs[1]).requestState).toBe(resultOf(legs[0]).requestState);
    expect(paramsOf(legs[1]).inputResponses).toEqual({
      user_context: { action: 'accept', content: { context: 'the 02:00 outage' } },
    });
    expect(resultOf(legs[1]).resultType).toBe('complete');
  });

  it('example triage_note asks for severity, then returns the prompt', async () => {
    const h = await connect('example', { elicit: () => accept({ severity: 'high' }) });
    const result = await h.client.getPrompt({ name: 'triage_note' });
    expect(result.messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'Write a high-severity triage note.' } },
    ]);
    expect(h.calls.map((c) => [c.key, c.params.message])).toEqual([
      ['severity', 'Severity of the incident?'],
    ]);
    expect(h.posts('prompts/get')).toHaveLength(2);
  });
});

describe('sampling, roots and several inputs in one round', () => {
  const ROOTS: ListRootsResult = {
    roots: [
      { uri: 'file:///work/project', name: 'project' },
      { uri: 'file:///work/docs', name: 'docs' },
    ],
  };

  it('test_input_required_result_sampling: the SDK samples through our handler', async () => {
    const h = await connect('conformance', {
      sample: () => ({
        model: 'interop-model',
        role: 'assistant',
        content: { type: 'text', text: 'The capital of France is Paris.' },
        stopReason: 'endTurn',
      }),
    });
    const result = await h.client.callTool({ name: 'test_input_required_result_sampling', arguments: {} });

    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([
      { type: 'text', text: 'The model said: The capital of France is Paris.' },
    ]);
    expect(h.calls).toEqual([
      {
        method: 'sampling/createMessage',
        key: 'capital_question',
        params: {
          messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
          maxTokens: 100,
        },
      },
    ]);
    expectRetryChain(h.posts('tools/call'), [['capital_question']]);
  });

  it('test_input_required_result_list_roots: the SDK lists roots through our handler', async () => {
    const h = await connect('conformance', { roots: () => ROOTS });
    const result = await h.client.callTool({ name: 'test_input_required_result_list_roots', arguments: {} });

    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([
      { type: 'text', text: 'Roots: file:///work/project, file:///work/docs' },
    ]);
    expect(h.calls).toEqual([{ method: 'roots/list', key: 'client_roots', params: {} }]);
    expectRetryChain(h.posts('tools/call'), [['client_roots']]);
  });

  it('test_input_required_result_multiple_inputs: elicitation, sampling and roots in a single round', async () => {
    const h = await connect('conformance', {
      elicit: () => accept({ name: 'Alice' }),
      sample: () => ({
        model: 'interop-model',
        role: 'assistant',
        content: { type: 'text', text: 'Hello there' },
      }),
      roots: () => ({ roots: [{ uri: 'file:///work/project' }] }),
    });
    const result = await h.client.callTool({
      name: 'test_input_required_result_multiple_inputs',
      arguments: {},
    });

    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([
      { type: 'text', text: 'Hello there Alice (roots: file:///work/project)' },
    ]);
    // All three are fulfilled in the same round (the SDK dispatches them concurrently, so order is not fixed).
    expect(h.calls.map((c) => `${c.method}:${c.key}`).sort()).toEqual([
      'elicitation/create:user_name',
      'roots/list:client_roots',
      'sampling/createMessage:greeting',
    ]);
    expect(h.calls.find((c) => c.key === 'user_name')?.params.message).toBe('What is your name?');
    expect(h.calls.find((c) => c.key === 'greeting')?.params).toEqual({
      messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }],
      maxTokens: 50,
    });
    const legs = h.posts('tools/call');
    expectRetryChain(legs, [['user_name', 'greeting', 'client_roots']]);
    expect(paramsOf(legs[1]).inputResponses).toMatchObject({
      user_name: { action: 'accept', content: { name: 'Alice' } },
      greeting: { role: 'assistant', content: { type: 'text', text: 'Hello there' }, model: 'interop-model' },
      client_roots: { roots: [{ uri: 'file:///work/project' }] },
    });
  });
});

describe('declined elicitation', () => {
  it('declining the first question of resolve_bug gives an isError tool result', async () => {
    const h = await connect('example', { elicit: () => ({ action: 'decline' }) });
    const result = await h.client.callTool({ name: 'resolve_bug', arguments: { id: 9 } });

    expect(result.isError).toBe(true);
    expect(result.content).toEqual([{ type: 'text', text: 'declined by the user' }]);
    expect(JSON.stringify(result.content)).toContain('declined');
    expect(h.calls.map((c) => c.key)).toEqual(['resolution']);
    expectRetryChain(h.posts('tools/call'), [['resolution']]);
    expect(paramsOf(h.posts('tools/call')[1]).inputResponses).toEqual({ resolution: { action: 'decline' } });
  });

  it('declining the final confirmation (after two accepted answers) also ends in an isError result', async () => {
    const h = await connect('example', {
      elicit: (_p, key) => (key === 'resolution' ? accept({ resolution: 'Fixed' }) : { action: 'decline' }),
    });
    const result = await h.client.callTool({ name: 'resolve_bug', arguments: { id: 11 } });

    expect(result.isError).toBe(true);
    expect(result.content).toEqual([{ type: 'text', text: 'Bug 11 left open: declined by the user' }]);
    expect(h.calls.map((c) => [c.key, c.params.message])).toEqual([
      ['resolution', 'How was bug 11 resolved?'],
      ['confirm', 'Close bug 11 as Fixed?'],
    ]);
    expectRetryChain(h.posts('tools/call'), [['resolution'], ['confirm']]);
  });
});

describe('listing and plain requests', () => {
  it('lists the conformance tools, prompts, resources and templates', async () => {
    const h = await connect('conformance');
    const { tools } = await h.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      [
        'test_simple_text',
        'test_image_content',
        'json_schema_2020_12_tool',
        'test_audio_content',
        'test_custom_header_tool',
        'test_embedded_resource',
        'test_multiple_content_types',
        'test_error_handling',
        'test_tool_with_progress',
        'test_tool_with_logging',
        'test_sampling',
        'test_elicitation',
        'test_elicitation_sep1034_defaults',
        'test_elicitation_sep1330_enums',
        'test_reconnection',
        'test_missing_capability',
        'test_streaming_elicitation',
        'test_logging_tool',
        'test_input_required_result_elicitation',
        'test_input_required_result_sampling',
        'test_input_required_result_list_roots',
        'test_input_required_result_request_state',
        'test_input_required_result_multiple_inputs',
        'test_input_required_result_multi_round',
        'test_input_required_result_tampered_state',
        'test_input_required_result_capabilities',
        // The tasks extension's scenarios (docs/tasks.md).
        'greet',
        'slow_compute',
        'failing_job',
        'protocol_error_job',
        'confirm_delete',
        'multi_input',
        'test_tool_with_task',
      ].sort(),
    );
    for (const t of tools) expect(t.inputSchema.type).toBe('object');

    const { prompts } = await h.client.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual(
      [
        'test_simple_prompt',
        'test_prompt_with_arguments',
        'test_prompt_with_embedded_resource',
        'test_prompt_with_image',
        'test_input_required_result_prompt',
      ].sort(),
    );
    expect(prompts.find((p) => p.name === 'test_prompt_with_arguments')?.arguments).toEqual([
      { name: 'arg1', description: 'First test argument', required: true },
      { name: 'arg2', description: 'Second test argument', required: true },
    ]);

    const { resources } = await h.client.listResources();
    expect(resources.map((r) => [r.uri, r.name, r.mimeType]).sort()).toEqual([
      ['test://static-binary', 'static-binary', 'image/png'],
      ['test://static-text', 'static-text', 'text/plain'],
    ]);
    const { resourceTemplates } = await h.client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['test://template/{id}/data']);
  });

  it('reads resources and calls single-round tools and prompts', async () => {
    const h = await connect('conformance');
    expect((await h.client.readResource({ uri: 'test://static-text' })).contents).toEqual([
      {
        uri: 'test://static-text',
        mimeType: 'text/plain',
        text: 'This is the content of the static text resource.',
      },
    ]);
    expect((await h.client.readResource({ uri: 'test://template/123/data' })).contents).toEqual([
      {
        uri: 'test://template/123/data',
        mimeType: 'application/json',
        text: JSON.stringify({ id: '123', templateTest: true, data: 'Data for ID: 123' }),
      },
    ]);
    const simple = await h.client.callTool({ name: 'test_simple_text', arguments: {} });
    expect(simple.content).toEqual([{ type: 'text', text: 'This is a simple text response for testing.' }]);
    const failing = await h.client.callTool({ name: 'test_error_handling', arguments: {} });
    expect(failing.isError).toBe(true);
    const prompt = await h.client.getPrompt({
      name: 'test_prompt_with_arguments',
      arguments: { arg1: 'a', arg2: 'b' },
    });
    expect(prompt.messages).toEqual([
      { role: 'user', content: { type: 'text', text: "Prompt with arguments: arg1='a', arg2='b'" } },
    ]);
    // No MRTR legs for single-round calls.
    expect(h.posts('tools/call').every((l) => !('inputResponses' in paramsOf(l)))).toBe(true);
  });

  it('lists the example server tools with their input schemas', async () => {
    const h = await connect('example');
    const { tools } = await h.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['check_workspace', 'echo', 'resolve_bug']);
    const resolve = tools.find((t) => t.name === 'resolve_bug');
    expect(resolve?.title).toBe('Resolve a bug');
    expect(resolve?.inputSchema).toMatchObject({
      type: 'object',
      properties: { id: { type: 'integer' } },
      required: ['id'],
    });
    const { resources } = await h.client.listResources();
    expect(resources.map((r) => r.uri)).toContain('helpdesk://policy');
    const echo = await h.client.callTool({ name: 'echo', arguments: { message: 'hi there' } });
    expect(echo.content).toEqual([{ type: 'text', text: 'hi there' }]);
  });
});

describe('requestState bound to its request', () => {
  /** Round 1 through the SDK in manual mode: hands back the input_required result instead of fulfilling it. */
  async function mint(h: Harness, name: string, args: JsonObject): Promise<string> {
    const first = (await h.client.request(
      { method: 'tools/call', params: { name, arguments: args } },
      { allowInputRequired: true },
    )) as JsonObject;
    expect(first.resultType).toBe('input_required');
    expect(typeof first.requestState).toBe('string');
    return first.requestState as string;
  }

  async function replay(h: Harness, name: string, args: JsonObject, responses: JsonObject, state: string) {
    return h.client.request(
      {
        method: 'tools/call',
        params: { name, arguments: args, inputResponses: responses, requestState: state },
      },
      { allowInputRequired: true },
    );
  }

  async function codeOf(p: Promise<unknown>): Promise<number | string | undefined> {
    const outcome = await p.then(
      () => ({ error: undefined }),
      (error: unknown) => ({ error }),
    );
    expect(outcome.error).toBeInstanceOf(ProtocolError);
    return (outcome.error as ProtocolError).code;
  }

  const approve = { confirm: { action: 'accept', content: { approve: true } } };
  const rejections = () =>
    serverLog.filter((l) => l.message === 'requestState rejected').map((l) => l.fields.target);

  it('control: the untouched state with the same tool and arguments completes', async () => {
    const h = await connect('approval', { elicit: () => accept({ approve: true }) });
    const state = await mint(h, 'approve_change', { change: 'alpha' });
    const done = (await replay(h, 'approve_change', { change: 'alpha' }, approve, state)) as JsonObject;
    expect(done.content).toEqual([{ type: 'text', text: 'approved alpha' }]);
    expect(rejections()).toEqual([]);
  });

  it('rejects a state minted for other arguments with -32602', async () => {
    const h = await connect('approval', { elicit: () => accept({ approve: true }) });
    const state = await mint(h, 'approve_change', { change: 'alpha' });
    expect(await codeOf(replay(h, 'approve_change', { change: 'beta' }, approve, state))).toBe(
      INVALID_PARAMS,
    );
  });

  it('rejects a state minted for another tool with -32602', async () => {
    const h = await connect('conformance', { elicit: () => accept({ ok: true }) });
    const state = await mint(h, 'test_input_required_result_request_state', {});
    const ok = { confirm: { action: 'accept', content: { ok: true } } };
    expect(await codeOf(replay(h, 'test_input_required_result_tampered_state', {}, ok, state))).toBe(
      INVALID_PARAMS,
    );
    expect(rejections()).toEqual(['test_input_required_result_tampered_state']);
    // …while the same state on the tool that minted it is accepted.
    const done = (await replay(h, 'test_input_required_result_request_state', {}, ok, state)) as JsonObject;
    expect(done.content).toEqual([{ type: 'text', text: 'state-ok: confirmed' }]);
  });

  it('rejects a tampered state (one character changed) with -32602', async () => {
    const h = await connect('approval', { elicit: () => accept({ approve: true }) });
    const state = await mint(h, 'approve_change', { change: 'alpha' });
    const i = Math.floor(state.length / 2);
    const tampered = state.slice(0, i) + (state[i] === 'A' ? 'B' : 'A') + state.slice(i + 1);
    expect(tampered).not.toBe(state);
    expect(await codeOf(replay(h, 'approve_change', { change: 'alpha' }, approve, tampered))).toBe(
      INVALID_PARAMS,
    );
  });

  it('on the wire (plain fetch): a foreign state comes back as a JSON-RPC error with code -32602', async () => {
    const h = await connect('approval', { elicit: () => accept({ approve: true }) });
    const state = await mint(h, 'approve_change', { change: 'alpha' });
    const meta = {
      'io.modelcontextprotocol/protocolVersion': PROTOCOL,
      'io.modelcontextprotocol/clientInfo': { name: 'raw-fetch', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
    };
    const res = await fetch(urlOf('approval'), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': PROTOCOL,
        'mcp-method': 'tools/call',
        'mcp-name': 'approve_change',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'raw-1',
        method: 'tools/call',
        params: {
          name: 'approve_change',
          arguments: { change: 'gamma' },
          inputResponses: approve,
          requestState: state,
          _meta: meta,
        },
      }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as {
      jsonrpc?: string;
      id?: unknown;
      error?: { code?: number };
      result?: unknown;
    };
    expect(body.jsonrpc).toBe('2.0');
    expect(body.id).toBe('raw-1');
    expect(body.result).toBeUndefined();
    expect(body.error?.code).toBe(INVALID_PARAMS);
  });
});

describe('SDK quirks, pinned', () => {
  it('a spec-mandated 404 + -32601 (unknown method) surfaces as SdkHttpError, not ProtocolError', async () => {
    // The SDK's Streamable HTTP transport unwraps a JSON-RPC error body only for HTTP 400 on modern requests;
    // the spec (transports/streamable-http: "MUST respond with 404 Not Found and ... -32601") uses 404 here.
    const h = await connect('conformance');
    const err = await h.client.request({ method: 'nonexistent/method', params: {} }, z.looseObject({})).then(
      () => undefined,
      (e: unknown) => e as { code?: unknown; data?: { status?: number; text?: string } },
    );
    expect(err).toBeDefined();
    expect(err).not.toBeInstanceOf(ProtocolError);
    expect(err?.code).toBe('CLIENT_HTTP_NOT_IMPLEMENTED');
    expect(err?.data?.status).toBe(404);
    expect(JSON.parse(err?.data?.text ?? '{}')).toMatchObject({ error: { code: -32601 } });
  });

  it('400 JSON-RPC errors do surface typed: unknown tool and unknown resource are ProtocolError -32602', async () => {
    const h = await connect('conformance');
    const tool = await h.client.callTool({ name: 'no_such_tool', arguments: {} }).catch((e: unknown) => e);
    expect(tool).toBeInstanceOf(ProtocolError);
    expect((tool as ProtocolError).code).toBe(INVALID_PARAMS);
    const resource = await h.client.readResource({ uri: 'test://nope' }).catch((e: unknown) => e);
    expect(resource).toBeInstanceOf(ProtocolError);
    expect((resource as ProtocolError).code).toBe(INVALID_PARAMS);
  });

  it('handlers can only be registered for capabilities the client declared', () => {
    const client = new Client(
      { name: 'mrtr-interop', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' } },
    );
    expect(() =>
      client.setRequestHandler('elicitation/create', async () => ({ action: 'decline' as const })),
    ).toThrow(/elicitation capability/);
  });

  it('without the elicitation capability the server refuses up front with -32021, naming what it needs', async () => {
    const h = await connect('approval');
    const err = await h.client
      .callTool({ name: 'approve_change', arguments: { change: 'x' } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProtocolError);
    expect((err as ProtocolError).code).toBe(-32021);
    expect((err as ProtocolError).data).toEqual({ requiredCapabilities: { elicitation: { form: {} } } });
  });
});
