// The dispatcher as a custom transport sees it: handle() always returns a promise, and each response is its own.
import { describe, expect, it } from 'vitest';
import type { JsonRpcRequest } from '../../src/protocol/index.js';
import { META } from '../helpers/mcp-http.js';
import { testServer } from './test-server.js';

const env = { principal: undefined, signal: new AbortController().signal, notify() {} };
const list = (id: number): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/list',
  params: { _meta: META },
});

describe('Dispatcher for custom transports', () => {
  it('handle() returns a promise even when the handler answered synchronously', async () => {
    const core = testServer().core;
    const pending = core.handle(list(1), env);
    expect(pending).toBeInstanceOf(Promise);
    expect(await pending).toMatchObject({ id: 1, result: { tools: expect.any(Array) } });
  });

  it('gives every response its own _meta, which the caller may extend', async () => {
    const core = testServer().core;
    const first = (await core.handle(list(1), env)) as { result: { _meta: Record<string, unknown> } };
    first.result._meta['example.com/trace'] = 't-1';
    const second = (await core.handle(list(2), env)) as { result: { _meta: Record<string, unknown> } };
    expect(second.result._meta).not.toHaveProperty('example.com/trace');
    expect(second.result._meta).toHaveProperty('io.modelcontextprotocol/serverInfo');
  });
});

describe('the method table', () => {
  it("routes exactly the methods the request schema defines, and the tasks extension's (which check their own params)", async () => {
    const { METHODS } = await import('../../src/server/methods/index.js');
    const { REQUEST_DEFINITION, TASK_METHODS } = await import('../../src/protocol/index.js');
    expect(Object.keys(METHODS).sort()).toEqual([...Object.keys(REQUEST_DEFINITION), ...TASK_METHODS].sort());
    // No prototype: a method named after an Object member finds no handler.
    expect(METHODS.constructor).toBeUndefined();
    expect(METHODS.toString).toBeUndefined();
  });
});
