// Keys a client chooses — in arguments, answers, `_meta`, completion context and x-mcp-header-bound arguments — are
// plain data on every server path: `__proto__`, `constructor` and `prototype` never lend a handler values through
// inheritance, never skip a check, and never vanish. Every request here is raw JSON text, as it arrives off the
// wire (JSON.parse makes `__proto__` an own key; copying it with `obj[key] = v` or Object.assign is what bites),
// sent both over HTTP and in-process to the same server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { JsonRpcRequest } from '../../src/protocol/index.js';
import {
  type HttpEndpoint,
  inputRequired,
  McpServer,
  type RequestEnvironment,
  text,
} from '../../src/server/index.js';
import { META, parseReply, rawPost } from '../helpers/mcp-http.js';

const KEYS = ['__proto__', 'constructor', 'prototype'] as const;
const quiet = { info() {}, warn() {}, error() {} };
const env: RequestEnvironment = { principal: undefined, signal: new AbortController().signal, notify() {} };

/** What an attacker hides under a special key: values a handler would act on if they were inherited. */
const SMUGGLED = { isAdmin: true, name: 'Mallory', region: 'eu', id: 'ACC-666' };

/** How a handler sees an object a client built: own keys, and whether the smuggled values show through. */
const probe = (obj: Record<string, unknown>) => ({
  keys: Object.keys(obj).sort(),
  inherited: ['isAdmin', 'name', 'region', 'id'].filter((k) => k in obj && !Object.hasOwn(obj, k)),
});

const askName = () =>
  inputRequired({
    inputRequests: {
      user_name: {
        method: 'elicitation/create',
        params: {
          mode: 'form',
          message: 'Name?',
          requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        },
      },
    },
  });
const acceptedName = (answer: unknown): unknown =>
  (answer as { action?: string; content?: { name?: unknown } } | undefined)?.action === 'accept'
    ? (answer as { content?: { name?: unknown } }).content?.name
    : undefined;

// JSON Schemas are built from JSON text: an object literal `{ __proto__: … }` would set a prototype, not a property.
const schemaWithHeader = (property: string) =>
  JSON.parse(
    `{"type":"object","properties":{${JSON.stringify(property)}:{"type":"string","x-mcp-header":"P"}}}`,
  );

function buildServer(): McpServer {
  const server = new McpServer({ name: 'keys', version: '1', logger: quiet })
    .tool({ name: 'probe_args', description: 'Reports how it sees its arguments' }, (args) =>
      text(JSON.stringify(probe(args as Record<string, unknown>))),
    )
    .tool(
      {
        name: 'probe_json_schema',
        description: 'Reports how it sees arguments checked by a JSON Schema',
        input: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      },
      (args) => text(JSON.stringify(probe(args as Record<string, unknown>))),
    )
    .tool(
      {
        name: 'probe_zod',
        description: 'Reports how it sees arguments checked by zod',
        input: z.object({ name: z.string() }),
      },
      (args) => text(JSON.stringify(probe(args as Record<string, unknown>))),
    )
    .tool(
      { name: 'greet_unsealed', description: 'Asks a name; answers without a state', unsealedAnswers: true },
      (_args, ctx) => {
        const name = acceptedName(ctx.inputResponses.user_name);
        return typeof name === 'string' ? text(`Hello, ${name}!`) : askName();
      },
    )
    .tool({ name: 'greet_sealed', description: 'Asks a name through the flow API' }, async (_a, { ask }) => {
      const { name } = await ask.form('Name?', z.object({ name: z.string() }), { key: 'user_name' });
      return text(`Hello, ${name}!`);
    })
    .tool(
      {
        name: 'routed',
        description: 'Routed on its region',
        input: {
          type: 'object',
          properties: { region: { type: 'string', 'x-mcp-header': 'Region' } },
        },
      },
      (args) => text(JSON.stringify(probe(args as Record<string, unknown>))),
    )
    .prompt(
      {
        name: 'greeting',
        arguments: [{ name: 'name', required: true }],
        complete: { name: (_value, context) => ({ values: [JSON.stringify(probe(context))] }) },
      },
      (args) => ({
        messages: [{ role: 'user', content: { type: 'text', text: JSON.stringify(probe(args)) } }],
      }),
    )
    .resource({ uri: 'mem://statement', name: 'statement', unsealedAnswers: true }, (uri, ctx) => {
      const id = (ctx.inputResponses.account as { content?: { id?: unknown } } | undefined)?.content?.id;
      return typeof id === 'string'
        ? { contents: [{ uri, text: `statement of ${id}` }] }
        : inputRequired({
            inputRequests: {
              account: {
                method: 'elicitation/create',
                params: {
                  mode: 'form',
                  message: 'Account?',
                  requestedSchema: { type: 'object', properties: { id: { type: 'string' } } },
                },
              },
            },
          });
    });
  for (const key of KEYS) {
    // Names the author chose that happen to be special: they must work like any other name.
    server
      .tool(
        {
          name: `bound_${key}`,
          description: `x-mcp-header on a property named ${key}`,
          input: schemaWithHeader(key),
        },
        (args) => text(JSON.stringify(probe(args as Record<string, unknown>))),
      )
      .prompt({ name: `prompt_${key}`, arguments: [{ name: key, required: true }] }, (args) => ({
        messages: [
          { role: 'user', content: { type: 'text', text: `${Object.hasOwn(args, key)}:${args[key]}` } },
        ],
      }));
  }
  return server;
}

interface Reply {
  status?: number;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

type Send = (method: string, paramsJson: string, headers?: Record<string, string>) => Promise<Reply>;

let nextId = 1;
/** A request as raw JSON text; `paramsJson` is the members of `params` besides `_meta`, or a whole `_meta`. */
const body = (method: string, paramsJson: string) => {
  const params = paramsJson.includes('"_meta"')
    ? paramsJson
    : `"_meta":${JSON.stringify(META)},${paramsJson}`;
  return `{"jsonrpc":"2.0","id":${nextId++},"method":${JSON.stringify(method)},"params":{${params}}}`;
};

let endpoint: HttpEndpoint;
let server: McpServer;
beforeAll(async () => {
  server = buildServer();
  endpoint = await server.listen({ port: 0 });
});
afterAll(() => endpoint.close());

const overHttp: Send = async (method, paramsJson, headers = {}) => {
  const text = body(method, paramsJson);
  const name = (JSON.parse(text) as JsonRpcRequest).params?.[method === 'resources/read' ? 'uri' : 'name'];
  const raw = await rawPost(endpoint.url, text, {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
    ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
    ...headers,
  });
  const reply = parseReply(method, raw);
  return { status: reply.status, ...reply.response };
};

const inProcess: Send = async (method, paramsJson) =>
  (await server.core.handle(JSON.parse(body(method, paramsJson)) as JsonRpcRequest, env)) as Reply;

const textOf = (reply: Reply): string => {
  const content = reply.result?.content as Array<{ text: string }> | undefined;
  const messages = reply.result?.messages as Array<{ content: { text: string } }> | undefined;
  const contents = reply.result?.contents as Array<{ text: string }> | undefined;
  return content?.[0]?.text ?? messages?.[0]?.content.text ?? contents?.[0]?.text ?? '';
};

const smuggledUnder = (key: string) => `{${JSON.stringify(key)}:${JSON.stringify(SMUGGLED)}}`;

describe.each([
  ['over HTTP', overHttp],
  ['in-process', inProcess],
] as const)('%s', (_transport, send) => {
  describe.each(KEYS)('a "%s" key', (key) => {
    const hidden = smuggledUnder(key);

    it('in tools/call arguments stays a plain argument of a tool without a schema', async () => {
      const reply = await send('tools/call', `"name":"probe_args","arguments":${hidden}`);
      expect(JSON.parse(textOf(reply))).toEqual({ keys: [key], inherited: [] });
    });

    it('in tools/call arguments does not satisfy a JSON Schema "required"', async () => {
      const reply = await send('tools/call', `"name":"probe_json_schema","arguments":${hidden}`);
      expect(reply.result).toMatchObject({ isError: true });
      expect(textOf(reply)).toBe(
        "Invalid arguments for tool probe_json_schema: (arguments): must have required property 'name'",
      );
    });

    it('in tools/call arguments does not satisfy a zod field', async () => {
      const reply = await send('tools/call', `"name":"probe_zod","arguments":${hidden}`);
      expect(reply.result).toMatchObject({ isError: true });
      expect(textOf(reply)).toMatch(/^Invalid arguments for tool probe_zod: name: /);
    });

    it('in unsealed inputResponses answers nothing', async () => {
      const answers = `{${JSON.stringify(key)}:{"user_name":{"action":"accept","content":{"name":"Mallory"}}}}`;
      const reply = await send(
        'tools/call',
        `"name":"greet_unsealed","arguments":{},"inputResponses":${answers}`,
      );
      expect(reply.result).toMatchObject({ resultType: 'input_required', inputRequests: { user_name: {} } });
      expect(JSON.stringify(reply)).not.toContain('Mallory');
    });

    it('in sealed inputResponses answers nothing, and an honest answer next to it still counts', async () => {
      const first = await send('tools/call', '"name":"greet_sealed","arguments":{}');
      const state = JSON.stringify(first.result?.requestState);
      const hiddenAnswer = `{${JSON.stringify(key)}:{"user_name":{"action":"accept","content":{"name":"Mallory"}}}}`;
      const smuggled = await send(
        'tools/call',
        `"name":"greet_sealed","arguments":{},"requestState":${state},"inputResponses":${hiddenAnswer}`,
      );
      expect(smuggled.result).toMatchObject({
        resultType: 'input_required',
        inputRequests: { user_name: {} },
      });
      expect(JSON.stringify(smuggled)).not.toContain('Mallory');
      const both = `{${JSON.stringify(key)}:{"x":1},"user_name":{"action":"accept","content":{"name":"Ada"}}}`;
      const honest = await send(
        'tools/call',
        `"name":"greet_sealed","arguments":{},"requestState":${state},"inputResponses":${both}`,
      );
      expect(textOf(honest)).toBe('Hello, Ada!');
    });

    it('inside a form answer fills no field of an ask.form question', async () => {
      const first = await send('tools/call', '"name":"greet_sealed","arguments":{}');
      const state = JSON.stringify(first.result?.requestState);
      const answer = `{"user_name":{"action":"accept","content":{${JSON.stringify(key)}:"Mallory"}}}`;
      const reply = await send(
        'tools/call',
        `"name":"greet_sealed","arguments":{},"requestState":${state},"inputResponses":${answer}`,
      );
      // The answer lacks the name: the flow asks again, it never greets.
      expect(reply.result).toMatchObject({ resultType: 'input_required', inputRequests: { user_name: {} } });
      expect(textOf(reply)).toBe('');
    });

    it('in resources/read inputResponses answers nothing', async () => {
      const answers = `{${JSON.stringify(key)}:{"account":{"action":"accept","content":{"id":"ACC-666"}}}}`;
      const reply = await send('resources/read', `"uri":"mem://statement","inputResponses":${answers}`);
      expect(reply.result).toMatchObject({ resultType: 'input_required', inputRequests: { account: {} } });
      expect(JSON.stringify(reply)).not.toContain('ACC-666');
    });

    it('in prompts/get arguments is refused when it hides an object, and supplies no required argument', async () => {
      const objectUnder = await send('prompts/get', `"name":"greeting","arguments":${hidden}`);
      expect(objectUnder.error).toEqual({
        code: -32602,
        message: `Invalid params: arguments/${key} must be string`,
      });
      const stringUnder = await send(
        'prompts/get',
        `"name":"greeting","arguments":{${JSON.stringify(key)}:"Mallory"}`,
      );
      expect(stringUnder.error).toEqual({
        code: -32602,
        message: 'Invalid params: prompt greeting requires argument "name"',
      });
    });

    it('as the name of a required prompt argument is required, and given, reaches the prompt', async () => {
      const missing = await send('prompts/get', `"name":"prompt_${key}","arguments":{}`);
      expect(missing.error).toEqual({
        code: -32602,
        message: `Invalid params: prompt prompt_${key} requires argument "${key}"`,
      });
      const given = await send(
        'prompts/get',
        `"name":"prompt_${key}","arguments":{${JSON.stringify(key)}:"v"}`,
      );
      expect(textOf(given)).toBe('true:v');
    });

    it('in completion/complete context arguments is refused when it hides an object, else a plain key', async () => {
      const complete = (args: string) =>
        send(
          'completion/complete',
          `"ref":{"type":"ref/prompt","name":"greeting"},"argument":{"name":"name","value":""},` +
            `"context":{"arguments":${args}}`,
        );
      const objectUnder = await complete(hidden);
      expect(objectUnder.error).toEqual({
        code: -32602,
        message: `Invalid params: context/arguments/${key} must be string`,
      });
      const stringUnder = await complete(`{${JSON.stringify(key)}:"Mallory"}`);
      const completion = stringUnder.result?.completion as { values: string[] } | undefined;
      expect(JSON.parse(completion?.values[0] ?? 'null')).toEqual({ keys: [key], inherited: [] });
    });

    it('as the argument to complete finds no completer (an empty list, no crash)', async () => {
      const reply = await send(
        'completion/complete',
        `"ref":{"type":"ref/prompt","name":"greeting"},"argument":{"name":${JSON.stringify(key)},"value":""}`,
      );
      expect(reply.result).toMatchObject({ completion: { values: [] } });
    });

    it('in _meta does not stand in for the protocol version and capabilities', async () => {
      const meta = `"_meta":${smuggledUnder(key).replace(JSON.stringify(SMUGGLED), JSON.stringify(META))}`;
      const reply = await send('tools/call', `${meta},"name":"probe_args","arguments":{}`);
      expect(reply.error).toEqual({
        code: -32602,
        message: 'Invalid params: _meta["io.modelcontextprotocol/protocolVersion"] is required',
      });
    });

    it('in the client capabilities declares nothing: the server asks as it would a client with none', async () => {
      const capabilities = (caps: string) =>
        `"_meta":${JSON.stringify({ ...META, 'io.modelcontextprotocol/clientCapabilities': 'CAPS' }).replace('"CAPS"', caps)}`;
      const hiddenCaps = `{${JSON.stringify(key)}:{"elicitation":{"form":{}}}}`;
      const smuggled = await send(
        'tools/call',
        `${capabilities(hiddenCaps)},"name":"greet_sealed","arguments":{}`,
      );
      const none = await send('tools/call', `${capabilities('{}')},"name":"greet_sealed","arguments":{}`);
      expect(smuggled.error).toMatchObject({
        code: -32021,
        message:
          'Missing required client capability: the handler needs elicitation, which the client did not declare',
      });
      expect(smuggled.error).toEqual(none.error);
    });
  });
});

describe.each(KEYS)('x-mcp-header and a "%s" key (HTTP)', (key) => {
  it('an argument hidden under it is not set: its header is refused, and without one the tool sees no region', async () => {
    const hidden = smuggledUnder(key);
    const withHeader = await overHttp('tools/call', `"name":"routed","arguments":${hidden}`, {
      'mcp-param-region': 'eu',
    });
    expect(withHeader.status).toBe(400);
    expect(withHeader.error).toEqual({
      code: -32020,
      message: 'Header mismatch: the Mcp-Param-Region header is sent but region is not set',
    });
    const without = await overHttp('tools/call', `"name":"routed","arguments":${hidden}`);
    expect(JSON.parse(textOf(without))).toEqual({ keys: [key], inherited: [] });
  });

  it('a property of that name carries its header like any other', async () => {
    const args = `{${JSON.stringify(key)}:"v"}`;
    const matched = await overHttp('tools/call', `"name":"bound_${key}","arguments":${args}`, {
      'mcp-param-p': 'v',
    });
    expect(JSON.parse(textOf(matched))).toEqual({ keys: [key], inherited: [] });
    const missing = await overHttp('tools/call', `"name":"bound_${key}","arguments":${args}`);
    expect(missing.error).toEqual({
      code: -32020,
      message: `Header mismatch: the Mcp-Param-P header is required when ${key} is set`,
    });
    const other = await overHttp('tools/call', `"name":"bound_${key}","arguments":${args}`, {
      'mcp-param-p': 'w',
    });
    expect(other.error?.code).toBe(-32020);
  });
});

describe('zod argument schemas and names of Object members', () => {
  const server = () =>
    new McpServer({ name: 'zod', version: '1', logger: quiet }).tool(
      {
        name: 'options',
        description: 'Optional arguments named like Object members',
        input: z.object({
          constructor: z.string().optional(),
          toString: z.string().optional(),
          nested: z.object({ valueOf: z.number().optional() }).optional(),
        }),
      },
      (args) => text(JSON.stringify(args)),
    );

  it.each([
    ['{}', '{}'],
    ['{"toString":"t"}', '{"toString":"t"}'],
    ['{"nested":{}}', '{"nested":{}}'],
    ['{"constructor":"c","nested":{"valueOf":1}}', '{"constructor":"c","nested":{"valueOf":1}}'],
  ])('a call with arguments %s is valid: absent means absent, not Object.prototype', async (args, seen) => {
    const core = server().core;
    const reply = (await core.handle(
      JSON.parse(body('tools/call', `"name":"options","arguments":${args}`)) as JsonRpcRequest,
      env,
    )) as Reply;
    expect(textOf(reply)).toBe(seen);
  });

  it('a zod argument named __proto__ is refused at registration: zod would never hand it over', () => {
    const shape = { ['__proto__']: z.string(), region: z.string() };
    expect(() =>
      new McpServer({ name: 'zod', version: '1', logger: quiet }).tool(
        { name: 'bad', description: 'd', input: z.object(shape) },
        () => text('never'),
      ),
    ).toThrow(
      'tool bad: argument __proto__ cannot be used with a zod schema (zod skips that key); rename it',
    );
  });
});

describe('JSON Schema tools and prompts: an optional argument named like an Object member', () => {
  const typesSeen = (args: Record<string, unknown>) =>
    JSON.stringify({ toString: typeof args.toString, constructor: typeof args.constructor });
  const server = () =>
    new McpServer({ name: 'members', version: '1', logger: quiet })
      .tool(
        {
          name: 'members',
          description: 'Optional arguments named like Object members',
          input: {
            type: 'object',
            properties: { toString: { type: 'string' }, constructor: { type: 'string' } },
          },
        },
        (args) => text(typesSeen(args)),
      )
      .prompt(
        {
          name: 'members',
          arguments: [{ name: 'toString' }, { name: 'constructor', required: false }],
          complete: {
            toString: (_value: string, context: Record<string, string>) => ({ values: [typesSeen(context)] }),
          },
        },
        (args) => ({ messages: [{ role: 'user', content: { type: 'text', text: typesSeen(args) } }] }),
      );
  const send = async (method: string, params: string) =>
    textOf((await server().core.handle(JSON.parse(body(method, params)) as JsonRpcRequest, env)) as Reply);

  it.each(['tools/call', 'prompts/get'])('%s: left out, it is undefined to the handler', async (method) => {
    expect(await send(method, '"name":"members","arguments":{}')).toBe(
      '{"toString":"undefined","constructor":"undefined"}',
    );
    expect(await send(method, '"name":"members","arguments":{"toString":"t"}')).toBe(
      '{"toString":"string","constructor":"undefined"}',
    );
  });

  it('completion/complete: left out of the context, it is undefined to the completer', async () => {
    const reply = (await server().core.handle(
      JSON.parse(
        body(
          'completion/complete',
          '"ref":{"type":"ref/prompt","name":"members"},"argument":{"name":"toString","value":""},"context":{"arguments":{}}',
        ),
      ) as JsonRpcRequest,
      env,
    )) as Reply;
    expect(reply.result?.completion).toEqual({
      values: ['{"toString":"undefined","constructor":"undefined"}'],
    });
  });
});
