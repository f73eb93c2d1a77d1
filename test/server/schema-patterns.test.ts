// A tool's JSON-Schema `pattern` is matched in linear time: a hostile argument gets the usual "invalid arguments"
// answer at once instead of holding the event loop, and a pattern that needs backtracking (lookaround,
// backreferences) is refused when the tool is registered, with the tool and the pattern named.
import { describe, expect, it } from 'vitest';
import type { JsonObject, JsonRpcRequest } from '../../src/protocol/index.js';
import { McpServer, text } from '../../src/server/index.js';
import { META } from '../helpers/mcp-http.js';

const quiet = { info() {}, warn() {}, error() {} };
const env = { principal: undefined, signal: new AbortController().signal, notify() {} };

/** A common nested-quantifier e-mail pattern: 39 characters of `a` and one `!` backtrack for seconds. */
const EMAIL =
  '^([a-zA-Z0-9])(([\\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$';
const HOSTILE = `${'a'.repeat(5000)}!`;

function serverWith(input: JsonObject): McpServer {
  return new McpServer({ name: 's', version: '1', logger: quiet }).tool(
    { name: 'signup', description: 'd', input },
    () => text('ok'),
  );
}

async function call(server: McpServer, args: JsonObject): Promise<{ isError?: boolean; text: string }> {
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

describe('JSON-Schema patterns in tool arguments', () => {
  it('answers a 5000-character hostile argument with the pattern error, and still serves a good one', async () => {
    const server = serverWith({ type: 'object', properties: { email: { type: 'string', pattern: EMAIL } } });
    const [hostile, good] = await Promise.all([
      call(server, { email: HOSTILE }),
      call(server, { email: 'ann.lee@example.com' }),
    ]);
    expect(hostile.isError).toBe(true);
    expect(hostile.text).toMatch(/^Invalid arguments for tool signup: email: must match pattern/);
    expect(good).toEqual({ isError: undefined, text: 'ok' });
  });

  it('matches a hostile argument name against patternProperties at once', async () => {
    const server = serverWith({
      type: 'object',
      patternProperties: { [EMAIL]: { type: 'string' } },
      additionalProperties: false,
    });
    const reply = await call(server, { [HOSTILE]: 'x' });
    expect(reply.isError).toBe(true);
    expect(reply.text).toContain('must NOT have additional properties');
    expect(await call(server, { 'ann@example.com': 'x' })).toEqual({ isError: undefined, text: 'ok' });
  });

  it.each([
    ['(?=x)', 'properties'],
    ['(a)\\1', 'properties'],
    ['(?=x)', 'patternProperties'],
  ])('refuses to register a tool whose %s sits in %s, naming the tool and the pattern', (pattern, where) => {
    const input: JsonObject =
      where === 'properties'
        ? { type: 'object', properties: { v: { type: 'string', pattern } } }
        : { type: 'object', patternProperties: { [pattern]: { type: 'string' } } };
    let thrown: unknown;
    try {
      serverWith(input);
    } catch (error) {
      thrown = error;
    }
    expect((thrown as { code?: string }).code).toBe('ERR_REGISTRATION');
    expect((thrown as Error).message).toContain('signup');
    expect((thrown as Error).message).toContain(`pattern ${JSON.stringify(pattern)} is refused`);
    expect((thrown as Error).message).toMatch(/no lookaround, no backreferences/);
  });
});
