// JSON-Schema tool arguments go through the one Ajv setup of protocol/schema-validator.ts: formats are checked,
// peers' missing keys are not filled from Object.prototype, and nothing is written to the console.
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import type { JsonObject, JsonRpcRequest } from '../../src/protocol/index.js';
import { McpServer, text } from '../../src/server/index.js';
import { META } from '../helpers/mcp-http.js';

const quiet = { info() {}, warn() {}, error() {} };
const env = { principal: undefined, signal: new AbortController().signal, notify() {} };

let consoleSpies: MockInstance[];
beforeEach(() => {
  consoleSpies = (['log', 'info', 'warn', 'error', 'debug'] as const).map((m) =>
    vi.spyOn(console, m).mockImplementation(() => {}),
  );
});
afterEach(() => {
  for (const spy of consoleSpies) expect(spy).not.toHaveBeenCalled();
  vi.restoreAllMocks();
});

async function callWith(input: JsonObject, args: JsonObject): Promise<{ isError?: boolean; text: string }> {
  const server = new McpServer({ name: 's', version: '1', logger: quiet }).tool(
    { name: 'signup', description: 'd', input },
    () => text('ok'),
  );
  const request: JsonRpcRequest = {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'signup', arguments: args, _meta: META },
  };
  const response = (await server.core.handle(request, env)) as unknown as {
    result: { isError?: boolean; content: Array<{ text: string }> };
  };
  return { isError: response.result.isError, text: response.result.content[0]?.text ?? '' };
}

const emailTool = {
  type: 'object',
  properties: {
    email: { type: 'string', format: 'email' },
    note: { type: 'string', format: 'not-a-format' },
  },
  required: ['email'],
};

describe('JSON-Schema tool arguments', () => {
  it('refuses a value that breaks its format, naming the argument', async () => {
    expect(await callWith(emailTool, { email: 'not-an-email' })).toEqual({
      isError: true,
      text: 'Invalid arguments for tool signup: email: must match format "email"',
    });
  });

  it('accepts a value in the format, and treats an unknown format as an annotation, silently', async () => {
    expect(await callWith(emailTool, { email: 'a@example.com', note: 'anything' })).toEqual({
      isError: undefined,
      text: 'ok',
    });
  });

  it('checks formats inside nested arguments too', async () => {
    const input = {
      type: 'object',
      properties: { who: { type: 'object', properties: emailTool.properties } },
    };
    const r = await callWith(input, { who: { email: 'nope' } });
    expect(r.text).toBe('Invalid arguments for tool signup: who.email: must match format "email"');
  });

  it('does not see Object.prototype members as arguments the client sent', async () => {
    const input = {
      type: 'object',
      properties: { constructor: { type: 'string' }, toString: { type: 'string' } },
    };
    expect((await callWith(input, {})).text).toBe('ok');
    const required = { ...input, required: ['constructor'] };
    expect(await callWith(required, {})).toEqual({
      isError: true,
      text: "Invalid arguments for tool signup: (arguments): must have required property 'constructor'",
    });
    expect((await callWith(required, JSON.parse('{"constructor":"c"}'))).text).toBe('ok');
  });
});
