// Client-chosen names are plain keys on the server too: `__proto__`, `constructor` and `prototype` in
// inputResponses can never lend a handler answers through inheritance (a probe's finding on the unsealed path).
import { describe, expect, it } from 'vitest';
import type { JsonRpcRequest } from '../../src/protocol/index.js';
import { META } from '../helpers/mcp-http.js';
import { testServer } from './test-server.js';

const env = { principal: undefined, signal: new AbortController().signal, notify() {} };

const callWith = (inputResponsesJson: string): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  // JSON.parse makes `__proto__` an own key, as it arrives off the wire.
  params: {
    _meta: META,
    name: 'test_input_required_result_elicitation',
    arguments: {},
    inputResponses: JSON.parse(inputResponsesJson),
  },
});

describe('client-chosen keys in inputResponses', () => {
  for (const key of ['__proto__', 'constructor', 'prototype']) {
    it(`a "${key}" answer does not make an unasked answer appear through inheritance`, async () => {
      const smuggled = `{"${key}": {"user_name": {"action": "accept", "content": {"name": "Mallory"}}}}`;
      const response = await testServer().core.handle(callWith(smuggled), env);
      // The tool still asks for the name: nothing answered user_name.
      expect(response).toMatchObject({ result: { resultType: 'input_required' } });
      expect(JSON.stringify(response)).not.toContain('Mallory');
    });
  }

  it('an honest answer next to a "__proto__" key still counts', async () => {
    const both = '{"__proto__": {"x": 1}, "user_name": {"action": "accept", "content": {"name": "Ada"}}}';
    const response = await testServer().core.handle(callWith(both), env);
    expect(response).toMatchObject({ result: { content: [{ type: 'text', text: 'Hello, Ada!' }] } });
  });
});

describe('resources and client-chosen names', () => {
  const quiet = { info() {}, warn() {}, error() {} };
  const read = (uri: string, extra: Record<string, unknown> = {}): JsonRpcRequest => ({
    jsonrpc: '2.0',
    id: 1,
    method: 'resources/read',
    params: { _meta: META, uri, ...extra },
  });

  it('a template variable named by the author "__proto__" stays a plain key', async () => {
    const { McpServer } = await import('../../src/server/index.js');
    const seen: unknown[] = [];
    const core = new McpServer({ name: 'r', version: '1', logger: quiet }).resourceTemplate(
      { uriTemplate: 'mem://{__proto__}', name: 'p' },
      (uri, _ctx, variables) => {
        seen.push(Object.getPrototypeOf(variables), Object.keys(variables));
        return { contents: [{ uri, text: 'x' }] };
      },
    ).core;
    await core.handle(read('mem://value'), env);
    expect(seen).toEqual([null, ['__proto__']]);
  });

  it('a result shaped by answers sent without a state (unsealedAnswers) is never publicly cacheable', async () => {
    const { McpServer, inputRequired } = await import('../../src/server/index.js');
    const core = new McpServer({ name: 'r', version: '1', logger: quiet }).resource(
      { uri: 'mem://statement', name: 's', unsealedAnswers: true },
      (uri, ctx) => {
        const answer = ctx.inputResponses.account as { content?: { id?: string } } | undefined;
        if (!answer?.content?.id)
          return inputRequired({
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
        return { contents: [{ uri, text: `statement of ${answer.content.id}` }] };
      },
    ).core;
    const plain = await core.handle(read('mem://statement'), env);
    expect(plain).toMatchObject({ result: { resultType: 'input_required' } });
    const answered = await core.handle(
      read('mem://statement', {
        inputResponses: { account: { action: 'accept', content: { id: 'ACC-42' } } },
      }),
      env,
    );
    expect(answered).toMatchObject({ result: { ttlMs: 0, cacheScope: 'private' } });
  });
});

describe('answers nested too deep', () => {
  let deep: Record<string, unknown> = {};
  for (let i = 0; i < 100_000; i++) deep = { nested: deep };
  const call = (id: number, name: string, extra: Record<string, unknown>): JsonRpcRequest => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { _meta: META, name, arguments: {}, ...extra },
  });

  it('get -32602 naming the key on the unsealed path, before any recursive walk could overflow the stack', async () => {
    const answer = { action: 'accept', content: { name: 'x' }, _meta: deep };
    const response = await testServer().core.handle(
      call(1, 'test_input_required_result_elicitation', { inputResponses: { user_name: answer } }),
      env,
    );
    expect(response).toMatchObject({
      error: {
        code: -32602,
        message: 'Invalid params: inputResponses["user_name"] nests deeper than 64 levels',
      },
    });
  });

  it('and on the sealed path (a sampling answer with a hostile _meta)', async () => {
    const core = testServer().core;
    const first = (await core.handle(call(1, 'test_input_required_result_sampling', {}), env)) as unknown as {
      result: { requestState: string };
    };
    const answer = { role: 'assistant', content: { type: 'text', text: 'Paris', _meta: deep }, model: 'm' };
    const response = await core.handle(
      call(2, 'test_input_required_result_sampling', {
        requestState: first.result.requestState,
        inputResponses: { capital_question: answer },
      }),
      env,
    );
    expect(response).toMatchObject({
      error: {
        code: -32602,
        message: 'Invalid params: inputResponses["capital_question"] nests deeper than 64 levels',
      },
    });
  });
});
