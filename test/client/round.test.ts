// McpClient.round() as the gateway uses it against a 2026-07-28 server: one upstream round per downstream round, the
// raw result back (complete or input_required), the requestState sent byte for byte and the answers as given, with
// the driver's own _meta and headers; and the arguments it refuses, each with a message naming what is wrong.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleServer } from '../../src/cli/demo-servers/example.js';
import {
  capabilitiesFor,
  McpClient,
  RemoteError,
  type RoundResult,
  StdioClientTransport,
} from '../../src/client/index.js';
import type { InputRequiredResult } from '../../src/protocol/index.js';
import type { HttpEndpoint } from '../../src/server/index.js';
import { CLI, confirmForm, fakeServer, json, requireBuiltCli, result, toolCallServer } from './helpers.js';

const capabilities = capabilitiesFor(['elicitation.form']);

let endpoint: HttpEndpoint;
beforeAll(async () => {
  endpoint = await exampleServer().listen({ port: 0 });
});
afterAll(() => endpoint?.close());

function asked(r: RoundResult): InputRequiredResult {
  expect(r.resultType).toBe('input_required');
  return r as InputRequiredResult;
}

/** resolve_bug on the example server, one round at a time: resolution, then confirm, then the result. */
async function resolveBugByRounds(client: McpClient) {
  const params = { name: 'resolve_bug', arguments: { id: 5 } };
  const first = asked(await client.round('tools/call', params));
  expect(Object.keys(first.inputRequests ?? {})).toEqual(['resolution']);
  expect(first.inputRequests?.resolution).toMatchObject({ method: 'elicitation/create' });
  const second = asked(
    await client.round('tools/call', params, {
      requestState: first.requestState,
      inputResponses: { resolution: { action: 'accept', content: { resolution: 'Fixed' } } },
    }),
  );
  expect(Object.keys(second.inputRequests ?? {})).toEqual(['confirm']);
  expect(second.requestState).not.toBe(first.requestState);
  const done = await client.round('tools/call', params, {
    requestState: second.requestState,
    inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
  });
  expect(done).toMatchObject({ resultType: 'complete', content: [{ text: 'Bug 5 resolved as Fixed' }] });
  // A sealed requestState one bit off does not open: the rounds above went through only because it came back exact.
  const bent = `${second.requestState?.slice(0, -2)}${second.requestState?.endsWith('AA') ? 'AB' : 'AA'}`;
  await expect(
    client.round('tools/call', params, {
      requestState: bent,
      inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
    }),
  ).rejects.toMatchObject({
    name: 'RemoteError',
    code: -32602,
    message: 'Invalid params: invalid requestState',
  });
}

describe('round() against a 2026-07-28 mrtr server', () => {
  it('over HTTP: input_required, input_required, complete — each round one request, nothing answered for it', async () => {
    const client = new McpClient({ server: endpoint.url, capabilities });
    await resolveBugByRounds(client);
    expect(client.generation).toBe('modern');
    await client.close();
  });

  it('over stdio (the built CLI serving the same server)', async () => {
    requireBuiltCli();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'serve', '--fixture', 'example', '--stdio'],
      stderr: 'ignore',
    });
    const client = new McpClient({ server: transport, capabilities });
    await resolveBugByRounds(client);
    await client.close();
  });

  it('prompts/get and resources/read have rounds too', async () => {
    const client = new McpClient({ server: endpoint.url, capabilities });
    const params = { name: 'triage_note', arguments: {} };
    const first = asked(await client.round('prompts/get', params));
    const done = await client.round('prompts/get', params, {
      requestState: first.requestState,
      inputResponses: { severity: { action: 'accept', content: { severity: 'high' } } },
    });
    expect(done).toMatchObject({
      resultType: 'complete',
      messages: [{ content: { text: /high-severity/ } }],
    });
    expect(await client.round('resources/read', { uri: 'helpdesk://policy' })).toMatchObject({
      resultType: 'complete',
      contents: [{ text: 'Duplicates must name the original bug.' }],
    });
    await client.close();
  });
});

describe('what a round sends', () => {
  it('requestState byte for byte, inputResponses as given, with the driver’s _meta and Mcp-* headers', async () => {
    // Unicode, escapes and spaces a careless client would normalise or re-encode.
    const state = ' é\u2028"\\/ +=\u{1F600}\t';
    const answers = { ok: { action: 'accept', content: { ok: true } }, extra: { kept: [1, 'two'] } };
    const server = await toolCallServer((s, res) => {
      const { params } = s.body as { params: Record<string, unknown> };
      if (params.requestState === undefined)
        return json(
          res,
          result(s.body.id, {
            resultType: 'input_required',
            inputRequests: { ok: confirmForm() },
            requestState: state,
          }),
        );
      json(res, result(s.body.id, { resultType: 'complete', content: [{ type: 'text', text: 'done' }] }));
    });
    try {
      const client = new McpClient({ server: server.url, capabilities });
      const first = asked(await client.round('tools/call', { name: 'echo', arguments: { a: 1 } }));
      expect(first.requestState).toBe(state);
      await client.round(
        'tools/call',
        { name: 'echo', arguments: { a: 1 }, _meta: { trace: 't1' } },
        {
          requestState: first.requestState,
          inputResponses: answers,
        },
      );
      const [one, two] = server.calls('tools/call');
      // The JSON text itself carries the state exactly (no re-encoding on the way).
      expect(two?.raw).toContain(`"requestState":${JSON.stringify(state)}`);
      expect(two?.body.params.requestState).toBe(state);
      expect(two?.body.params.inputResponses).toEqual(answers);
      expect(two?.body.params.arguments).toEqual({ a: 1 });
      expect(one?.body.params).not.toHaveProperty('requestState');
      expect(one?.body.params).not.toHaveProperty('inputResponses');
      // The same _meta and headers the driver sends for callTool (the caller's own _meta kept beside them).
      await client.callTool('echo', { a: 1 });
      const driven = server.calls('tools/call').at(-1);
      // …except the tasks extension: a raw round hands back one answer and cannot carry a task on for its caller.
      const drivenMeta = driven?.body.params._meta;
      expect(drivenMeta['io.modelcontextprotocol/clientCapabilities'].extensions).toEqual({
        'io.modelcontextprotocol/tasks': {},
      });
      expect(two?.body.params._meta).toEqual({
        ...drivenMeta,
        'io.modelcontextprotocol/clientCapabilities': capabilities,
        trace: 't1',
      });
      for (const h of ['mcp-method', 'mcp-name', 'mcp-protocol-version'])
        expect(two?.headers[h], h).toBe(driven?.headers[h]);
      await client.close();
    } finally {
      await server.close();
    }
  });

  it('the Mcp-Param-* headers of a tool’s x-mcp-header arguments, planned from tools/list as callTool plans them', async () => {
    // A server listing a tool whose `region` argument goes in a header.
    const listing = await fakeServer((s, res) => {
      const body = s.body as { id: number; method: string };
      if (body.method === 'tools/list')
        return json(
          res,
          result(body.id, {
            resultType: 'complete',
            tools: [
              {
                name: 'deploy',
                inputSchema: {
                  type: 'object',
                  properties: { region: { type: 'string', 'x-mcp-header': 'Region' } },
                },
              },
            ],
          }),
        );
      if (body.method === 'tools/call')
        return json(res, result(body.id, { resultType: 'complete', content: [] }));
      return 'default';
    });
    try {
      const client = new McpClient({ server: listing.url, capabilities });
      await client.round('tools/call', { name: 'deploy', arguments: { region: 'eu-west-1' } });
      expect(listing.calls('tools/list')).toHaveLength(1);
      expect(listing.calls('tools/call')[0]?.headers['mcp-param-region']).toBe('eu-west-1');
      await client.close();
    } finally {
      await listing.close();
    }
  });
  it('the Mcp-Param-* headers planned from knownTools (a listing made elsewhere), without a tools/list', async () => {
    const server = await fakeServer((s, res) => {
      const body = s.body as { id: number; method: string };
      if (body.method === 'tools/call')
        return json(res, result(body.id, { resultType: 'complete', content: [] }));
      return 'default';
    });
    try {
      const deploy = {
        name: 'deploy',
        inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } },
      };
      const client = new McpClient({ server: server.url, capabilities, knownTools: [deploy] });
      await client.round('tools/call', { name: 'deploy', arguments: { region: 'eu-west-1' } });
      expect(server.calls('tools/list')).toHaveLength(0);
      expect(server.calls('tools/call')[0]?.headers['mcp-param-region']).toBe('eu-west-1');
      await client.close();
    } finally {
      await server.close();
    }
  });

  it('after a HeaderMismatch the tool’s headers are planned anew from tools/list for the next round', async () => {
    let calls = 0;
    const listing = await fakeServer((s, res) => {
      const body = s.body as { id: number; method: string };
      if (body.method === 'tools/list')
        return json(
          res,
          result(body.id, {
            resultType: 'complete',
            tools: [{ name: 'deploy', inputSchema: { type: 'object' } }],
          }),
        );
      if (body.method !== 'tools/call') return 'default';
      if (++calls === 1)
        return json(
          res,
          { jsonrpc: '2.0', id: body.id, error: { code: -32020, message: 'Header mismatch' } },
          400,
        );
      return json(res, result(body.id, { resultType: 'complete', content: [] }));
    });
    try {
      const client = new McpClient({ server: listing.url, capabilities });
      const params = { name: 'deploy', arguments: {} };
      await expect(client.round('tools/call', params)).rejects.toMatchObject({
        name: 'RemoteError',
        code: -32020,
      });
      expect(await client.round('tools/call', params)).toMatchObject({ resultType: 'complete' });
      expect(listing.calls('tools/list')).toHaveLength(2);
      await client.close();
    } finally {
      await listing.close();
    }
  });
});

describe('what a round refuses', () => {
  it('a JSON-RPC error comes back as RemoteError with its code and data', async () => {
    const server = await toolCallServer((s, res) =>
      json(res, {
        jsonrpc: '2.0',
        id: s.body.id,
        error: { code: -32001, message: 'nope', data: { why: 'x' } },
      }),
    );
    try {
      const client = new McpClient({ server: server.url, capabilities });
      const refused = client.round('tools/call', { name: 'echo', arguments: {} });
      await expect(refused).rejects.toBeInstanceOf(RemoteError);
      await expect(refused).rejects.toMatchObject({ code: -32001, message: 'nope', data: { why: 'x' } });
      await client.close();
    } finally {
      await server.close();
    }
  });

  it('bad arguments fail before anything is sent, with a message naming what is wrong', async () => {
    const server = await toolCallServer(() => 'default');
    const client = new McpClient({ server: server.url, capabilities });
    const round = client.round.bind(client) as (m: unknown, p: unknown, o?: unknown) => Promise<unknown>;
    const params = { name: 'echo', arguments: {} };
    await expect(round('tools/list', {})).rejects.toThrow(
      'round: method must be one of tools/call, prompts/get, resources/read (the requests that have rounds), got "tools/list"',
    );
    await expect(round('tools/call', [])).rejects.toThrow(
      'round: params must be a JSON object, got an array',
    );
    await expect(round('tools/call', null)).rejects.toThrow('round: params must be a JSON object, got null');
    await expect(round('tools/call', { arguments: {} })).rejects.toThrow(
      'round: tools/call params need a non-empty string "name", got undefined',
    );
    await expect(round('resources/read', { name: 'x' })).rejects.toThrow(
      'round: resources/read params need a non-empty string "uri", got undefined',
    );
    await expect(round('tools/call', params, { requestState: 42 })).rejects.toThrow(
      'round: requestState must be a string (exactly as the server sent it), got number',
    );
    await expect(round('tools/call', params, { inputResponses: 'yes' })).rejects.toThrow(
      'round: inputResponses must be a JSON object keyed like the inputRequests it answers, got "yes"',
    );
    await expect(round('tools/call', { ...params, requestState: 'r' })).rejects.toThrow(
      'round: give requestState and inputResponses as options, not inside params',
    );
    await expect(round('tools/call', params, { holder: 7 })).rejects.toThrow(
      'round: holder must be a string, got number',
    );
    await expect(round('tools/call', params, { timeoutMs: 0 })).rejects.toThrow(
      'round: timeoutMs must be a number > 0, got number',
    );
    await expect(round('tools/call', params, { requestState: 42 })).rejects.toMatchObject({
      code: 'ERR_INVALID_ARGUMENT',
    });
    expect(server.seen).toHaveLength(0);
    await client.close();
    await server.close();
  });

  it('an input_required the driver would refuse is a ProtocolViolation (here: a kind this client did not declare)', async () => {
    const server = await toolCallServer((s, res) =>
      json(
        res,
        result(s.body.id, {
          resultType: 'input_required',
          inputRequests: {
            model: { method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } },
          },
        }),
      ),
    );
    try {
      const client = new McpClient({ server: server.url, capabilities });
      await expect(client.round('tools/call', { name: 'echo', arguments: {} })).rejects.toMatchObject({
        name: 'ProtocolViolation',
        message: 'inputRequests["model"] asks for sampling, which this client did not declare',
      });
      await client.close();
    } finally {
      await server.close();
    }
  });
});
