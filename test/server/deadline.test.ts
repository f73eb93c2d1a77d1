// Handler time limits: the request is answered when the limit passes, the handler's signal aborts, and whatever
// the handler does afterwards (progress, logs, a late failure) goes nowhere and breaks nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpEndpoint } from '../../src/server/index.js';
import { McpServer, text } from '../../src/server/index.js';
import { META, mcp } from '../helpers/mcp-http.js';
import { overtimeEvents, testServer } from './test-server.js';

let endpoint: HttpEndpoint;
beforeAll(async () => {
  endpoint = await testServer().listen({ port: 0 });
});
afterAll(() => endpoint.close());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('handler time limits', () => {
  it('answers a tool that runs past its limit with an isError result, and aborts its signal', async () => {
    const started = Date.now();
    const reply = await mcp(endpoint.url, 'tools/call', {
      name: 'overtime',
      arguments: {},
      _meta: { ...META, progressToken: 'p1' },
    });
    const took = Date.now() - started;
    expect(reply.status).toBe(200);
    expect(reply.response.result).toMatchObject({
      resultType: 'complete',
      isError: true,
      content: [{ type: 'text', text: 'overtime did not finish within 100 ms' }],
    });
    expect(took).toBeGreaterThanOrEqual(90);
    expect(took).toBeLessThan(2_000);
    // The late progress went nowhere: the reply holds the answer and no notification.
    expect(reply.messages.filter((m) => 'method' in m)).toEqual([]);
    await sleep(150);
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

  it('answers a prompt past its limit with -32603 naming it', async () => {
    const reply = await mcp(endpoint.url, 'prompts/get', { name: 'overtime_prompt' });
    expect(reply.status).toBe(500);
    expect(reply.response.error).toEqual({
      code: -32603,
      message: 'Request timed out: overtime_prompt did not finish within 50 ms',
    });
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
      /handlerTimeoutMs must be an integer number of milliseconds/,
    );
    expect(() =>
      new McpServer({ name: 't', version: '1' }).tool({ name: 'x', timeoutMs: 1.5 }, () => text('x')),
    ).toThrow(/timeoutMs must be an integer number of milliseconds/);
  });
});
