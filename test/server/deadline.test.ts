// Handler time limits: the request is answered when the limit passes, the handler's signal aborts, and whatever
// the handler does afterwards (progress, logs, a late failure) goes nowhere and breaks nothing.
import { getEventListeners } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonRpcRequest } from '../../src/protocol/index.js';
import { type HttpEndpoint, McpServer, text } from '../../src/server/index.js';
import { serveStdio } from '../../src/server/stdio.js';
import { META, mcp } from '../helpers/mcp-http.js';
import { stdioPipes } from '../helpers/stdio-pipes.js';
import { overtimeEvents, testServer } from './test-server.js';

let endpoint: HttpEndpoint;
beforeAll(async () => {
  endpoint = await testServer().listen({ port: 0 });
});
afterAll(() => endpoint.close());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('handler time limits over HTTP', () => {
  it('ends a tool past its limit with an isError result as the last SSE event, after the progress sent in time', async () => {
    const started = Date.now();
    const reply = await mcp(
      endpoint.url,
      'tools/call',
      { name: 'overtime', arguments: {} },
      { meta: { progressToken: 'p1' } },
    );
    const took = Date.now() - started;
    expect(reply.status).toBe(200);
    expect(reply.messages).toHaveLength(2);
    expect(reply.messages[0]).toMatchObject({
      method: 'notifications/progress',
      params: { progressToken: 'p1', progress: 0 },
    });
    expect(reply.response.result).toMatchObject({
      resultType: 'complete',
      isError: true,
      content: [{ type: 'text', text: 'overtime did not finish within 100 ms' }],
    });
    expect(took).toBeGreaterThanOrEqual(90);
    expect(took).toBeLessThan(2_000);
    await sleep(150);
    // The handler saw why it was stopped, and its late progress and log (sent after the answer) broke nothing.
    expect(overtimeEvents).toContain('aborted:HandlerTimeoutError');
    expect(overtimeEvents).toContain('late progress sent');
    expect((await mcp(endpoint.url, 'tools/list')).status).toBe(200);
  });

  it('drops a failure that comes after the limit (no unhandled rejection) and keeps serving', async () => {
    const reply = await mcp(endpoint.url, 'tools/call', { name: 'overtime_failure', arguments: {} });
    expect(reply.response.result).toMatchObject({ isError: true });
    await sleep(200);
    expect(overtimeEvents).toContain('late failure thrown');
    expect((await mcp(endpoint.url, 'tools/list')).status).toBe(200);
  });

  it('counts a flow step against the limit', async () => {
    const reply = await mcp(endpoint.url, 'tools/call', { name: 'overtime_step', arguments: {} });
    expect(reply.response.result).toMatchObject({
      isError: true,
      content: [{ text: 'overtime_step did not finish within 50 ms' }],
    });
  });

  it('answers a prompt, a resource and a completion past their limit with -32603 naming them', async () => {
    const prompt = await mcp(endpoint.url, 'prompts/get', { name: 'overtime_prompt' });
    expect(prompt.status).toBe(500);
    expect(prompt.response.error).toEqual({
      code: -32603,
      message: 'Request timed out: overtime_prompt did not finish within 50 ms',
    });
    const resource = await mcp(endpoint.url, 'resources/read', { uri: 'test://overtime' });
    expect(resource.response.error).toEqual({
      code: -32603,
      message: 'Request timed out: test://overtime did not finish within 50 ms',
    });
    const completion = await mcp(endpoint.url, 'completion/complete', {
      ref: { type: 'ref/prompt', name: 'overtime_prompt' },
      argument: { name: 'topic', value: 'x' },
    });
    expect(completion.response.error).toEqual({
      code: -32603,
      message: 'Request timed out: completion of topic did not finish within 50 ms',
    });
  });

  it('keeps limits and other server-only options out of listed definitions', async () => {
    const prompts = await mcp(endpoint.url, 'prompts/list');
    const resources = await mcp(endpoint.url, 'resources/list');
    const templates = await mcp(endpoint.url, 'resources/templates/list');
    const tools = await mcp(endpoint.url, 'tools/list');
    const listed = JSON.stringify([prompts, resources, templates, tools].map((r) => r.response.result));
    expect(listed).toContain('overtime_prompt');
    expect(listed).toContain('test://overtime');
    for (const key of [
      '"timeoutMs":',
      '"complete":',
      '"maxRounds":',
      '"stateTtlMs":',
      '"unsealedAnswers":',
    ]) {
      expect(listed).not.toContain(key);
    }
  });

  it('applies the server-wide handlerTimeoutMs to handlers without their own', async () => {
    const server = new McpServer({
      name: 't',
      version: '1',
      handlerTimeoutMs: 60,
      logger: { info() {}, warn() {}, error() {} },
    })
      .tool({ name: 'slow', description: 'sleeps 400 ms' }, async () => {
        await sleep(400);
        return text('done');
      })
      .tool({ name: 'patient', description: 'sleeps 100 ms, allowed 1 s', timeoutMs: 1_000 }, async () => {
        await sleep(100);
        return text('done');
      });
    const ep = await server.listen({ port: 0 });
    try {
      const slow = await mcp(ep.url, 'tools/call', { name: 'slow', arguments: {} });
      expect(slow.response.result).toMatchObject({
        isError: true,
        content: [{ text: 'slow did not finish within 60 ms' }],
      });
      const patient = await mcp(ep.url, 'tools/call', { name: 'patient', arguments: {} });
      expect(patient.response.result).toMatchObject({ content: [{ text: 'done' }] });
      expect(patient.response.result?.isError).toBeUndefined();
    } finally {
      await ep.close();
    }
  });

  it('refuses a limit that is not a positive whole number of milliseconds, naming the option', () => {
    expect(() => new McpServer({ name: 't', version: '1', handlerTimeoutMs: 0 })).toThrow(
      'McpServer: handlerTimeoutMs must be an integer from 1 to 2147483647, got 0',
    );
    expect(() =>
      new McpServer({ name: 't', version: '1' }).tool({ name: 'x', timeoutMs: 1.5 }, () => text('x')),
    ).toThrow('handler options: timeoutMs must be an integer from 1 to 2147483647, got 1.5');
  });
});

describe('handler time limits over stdio', () => {
  it('answers a timed-out call, writes nothing after it, and still sends nothing for a cancelled one', async () => {
    const { input, output, messages: lines } = stdioPipes();
    const done = serveStdio(testServer().core, { input, output });
    const call = (id: number) =>
      `${JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'overtime', arguments: {}, _meta: { ...META, progressToken: `t${id}` } },
      })}\n`;
    input.write(call(1));
    input.write(call(2));
    await sleep(20);
    input.write(
      `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2 } })}\n`,
    );
    await sleep(400);
    input.end();
    await done;
    const forOne = lines.filter(
      (l) => l.id === 1 || (l.params as { progressToken?: string })?.progressToken === 't1',
    );
    expect(forOne.map((l) => l.method ?? 'response')).toEqual(['notifications/progress', 'response']);
    expect(forOne[1]).toMatchObject({ result: { isError: true } });
    expect(lines.filter((l) => l.id === 2)).toEqual([]);
  });
});

describe('Deadline and a long-lived transport signal', () => {
  it('leaves no abort listener behind on a signal shared by every request', async () => {
    const shutdown = new AbortController();
    const env = { principal: undefined, signal: shutdown.signal, notify() {} };
    const core = testServer().core;
    const call = (id: number, wait: boolean): JsonRpcRequest => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'signal_reader', arguments: { wait }, _meta: META },
    });
    for (let i = 0; i < 20; i++) {
      const reply = await core.handle(call(i, i % 2 === 0), env);
      expect(reply).toMatchObject({ result: { content: [{ text: 'false' }] } });
    }
    // Handlers that read the signal and then fail, synchronously or not, release it too.
    for (let i = 0; i < 6; i++) {
      const failing = call(100 + i, i % 2 === 0);
      (failing.params as { arguments: Record<string, unknown> }).arguments.fail = true;
      const reply = await core.handle(failing, env);
      expect(reply).toMatchObject({ error: { code: -32603 } });
    }
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
  });
});
