// Transports depend on the RequestHandler interface only: a gateway or a bridge can put its own handling behind the
// same hardened HTTP and stdio fronts (origin and header checks, body limits, SSE, drain).
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { JsonRpcRequest, JsonRpcResponse } from '../../src/protocol/index.js';
import {
  HttpServerTransport,
  type RequestEnvironment,
  type RequestHandler,
  serveStdio,
} from '../../src/server/index.js';
import { mcp, rawPost } from '../helpers/mcp-http.js';

/** An empty catalogue whose one (unlisted) tool answers with the method name after one log notification. */
const echo: RequestHandler = {
  handleRequest(request: JsonRpcRequest, env: RequestEnvironment): JsonRpcResponse {
    if (request.method === 'tools/call') {
      env.notify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'hi' } });
      const content = [{ type: 'text', text: `echo ${request.method}` }];
      return { jsonrpc: '2.0', id: request.id, result: { resultType: 'complete', content } };
    }
    const result = { resultType: 'complete', tools: [], ttlMs: 0, cacheScope: 'private' };
    return { jsonrpc: '2.0', id: request.id, result };
  },
  headerParams: () => undefined,
};

describe('a custom RequestHandler behind the transports', () => {
  it('is served over HTTP with the transport own checks still in front of it', async () => {
    const endpoint = await new HttpServerTransport(echo).listen();
    try {
      const listed = await mcp(endpoint.url, 'tools/list');
      expect(listed.response.result).toMatchObject({ tools: [] });
      // Notifications upgrade the answer to SSE, as they do for the server's own handler.
      const called = await mcp(endpoint.url, 'tools/call', { name: 'x', arguments: {} });
      expect(called.contentType).toContain('text/event-stream');
      expect(called.messages).toHaveLength(2);
      expect(called.response.result).toMatchObject({ content: [{ text: 'echo tools/call' }] });
      // The header ↔ body checks run before the handler sees anything.
      const mismatched = await mcp(
        endpoint.url,
        'tools/list',
        {},
        { headers: { 'mcp-method': 'tools/call' } },
      );
      expect(mismatched.status).toBe(400);
      expect(mismatched.response.error?.code).toBe(-32020);
    } finally {
      await endpoint.close();
    }
  });

  it('is served over stdio', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const lines: string[] = [];
    output.on('data', (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
    const done = serveStdio(echo, { input, output });
    input.end(`${JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} })}\n`);
    await done;
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      {
        jsonrpc: '2.0',
        id: 7,
        result: { resultType: 'complete', tools: [], ttlMs: 0, cacheScope: 'private' },
      },
    ]);
  });

  it('a handler that breaks its never-throw contract gets 500, is logged through the logger, and the server goes on', async () => {
    const logged: Array<[Record<string, unknown>, string]> = [];
    const logger = {
      info() {},
      warn() {},
      error: (f: Record<string, unknown>, m: string) => void logged.push([f, m]),
    };
    let calls = 0;
    const flaky: RequestHandler = {
      handleRequest(request, env) {
        calls++;
        if (calls === 1) throw new Error('handler bug');
        return echo.handleRequest(request, env);
      },
      headerParams: () => undefined,
    };
    const endpoint = await new HttpServerTransport(flaky, { logger }).listen();
    try {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
      const headers = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/list',
      };
      const failed = await rawPost(endpoint.url, body, headers);
      expect(failed.status).toBe(500);
      expect(JSON.parse(failed.text)).toMatchObject({ error: { code: -32603, message: 'Internal error' } });
      expect(logged.map(([, m]) => m)).toEqual(['unexpected transport error']);
      expect(String(logged[0]![0].err)).toContain('handler bug');
      expect((await rawPost(endpoint.url, body, headers)).status).toBe(200);
    } finally {
      await endpoint.close();
    }
  });
});
