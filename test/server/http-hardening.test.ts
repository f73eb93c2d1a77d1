// The HTTP server against hostile or odd requests: rebinding on wide binds, unserializable results, long URIs,
// oversized or unbindable state, and compression of sealed state.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { type HttpEndpoint, inputRequired, McpServer, text } from '../../src/server/index.js';
import { UriTemplate } from '../../src/server/uri-template.js';
import { accept, META, mcp, rawPost } from '../helpers/mcp-http.js';

const quiet = { info() {}, warn() {}, error() {} };

function hardenedServer(): McpServer {
  return new McpServer({ name: 'hardened', version: '1', logger: quiet })
    .tool({ name: 'bigint', description: 'Returns an unserializable result' }, (_a, ctx) => {
      ctx.progress({ progress: 1, total: 2 });
      return { content: [{ type: 'text', text: 'x' }], structuredContent: { n: 10n as unknown as number } };
    })
    .tool(
      { name: 'ask_name', description: 'One question', input: z.object({ deep: z.unknown().optional() }) },
      async (_a, { ask }) => text(`hi ${await ask.text('Name?')}`),
    )
    .tool({ name: 'big_state', description: 'Keeps a large, repetitive state' }, (_a, ctx) => {
      if (ctx.state) return text('done');
      return inputRequired({ state: { filler: 'a'.repeat(3000) } });
    })
    .resourceTemplate(
      { uriTemplate: 'repo://{+owner}/{+path}.md', name: 'doc', description: 'A doc' },
      (uri) => ({
        contents: [{ uri, text: 'doc' }],
      }),
    );
}

describe('a server bound to all interfaces (policy only; the socket listens on 127.0.0.1)', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    const transport = hardenedServer().http({ host: '0.0.0.0', allowedOrigins: ['https://app.example'] });
    server = createServer(transport.listener);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/list',
  };
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: META } });

  it('refuses a same-host Origin it was not told about (DNS rebinding names both)', async () => {
    const port = new URL(url).port;
    const r = await rawPost(url, body, {
      ...headers,
      host: `rebind.evil.example:${port}`,
      origin: `http://rebind.evil.example:${port}`,
    });
    expect(r.status).toBe(403);
  });

  it('accepts configured origins, and requests without an Origin (non-browser clients)', async () => {
    expect((await rawPost(url, body, { ...headers, origin: 'https://app.example' })).status).toBe(200);
    expect((await rawPost(url, body, headers)).status).toBe(200);
  });
});

describe('hostile or odd requests', () => {
  let endpoint: HttpEndpoint;
  beforeAll(async () => {
    endpoint = await hardenedServer().listen({ port: 0 });
  });
  afterAll(() => endpoint.close());

  it('answers a result it cannot serialize with -32603, also after an SSE stream started', async () => {
    const plain = await mcp(endpoint.url, 'tools/call', { name: 'bigint', arguments: {} });
    expect(plain.response.error).toMatchObject({
      code: -32603,
      message: expect.stringContaining('could not be serialized'),
    });
    const streamed = await mcp(
      endpoint.url,
      'tools/call',
      { name: 'bigint', arguments: {} },
      { meta: { progressToken: 't' } },
    );
    expect(streamed.contentType).toBe('text/event-stream');
    expect(streamed.response.error?.code).toBe(-32603);
  });

  it('refuses an overlong resource URI before template matching', async () => {
    // Matching is a regular expression that backtracks on such input: it must not run at all, not merely run fast.
    const match = vi.spyOn(UriTemplate.prototype, 'match');
    try {
      const uri = `repo://${'a/'.repeat(6000)}x`;
      const r = await mcp(endpoint.url, 'resources/read', { uri });
      expect(r.response.error).toMatchObject({
        code: -32602,
        message: expect.stringContaining('longer than 8192'),
      });
      expect(match).not.toHaveBeenCalled();
      // The spy does see matching when a URI gets that far.
      const fits = await mcp(endpoint.url, 'resources/read', { uri: 'repo://a/b.md' });
      expect(fits.response.result?.contents).toEqual([{ uri: 'repo://a/b.md', text: 'doc' }]);
      expect(match).toHaveBeenCalledWith('repo://a/b.md');
    } finally {
      match.mockRestore();
    }
  });

  it('keeps only the fields a question reads: junk added to an answer never grows the sealed journal', async () => {
    const r1 = await mcp(endpoint.url, 'tools/call', { name: 'ask_name', arguments: {} });
    const junk = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`junk${i}`, 'x'.repeat(100)]));
    const r2 = await mcp(endpoint.url, 'tools/call', {
      name: 'ask_name',
      arguments: {},
      requestState: r1.response.result?.requestState,
      inputResponses: { q1: { ...accept({ text: 'Ada', ...junk }), _meta: { filler: 'y'.repeat(1000) } } },
    });
    expect(r2.response.result?.content).toEqual([{ type: 'text', text: 'hi Ada' }]);
  });

  it('answers arguments too deeply nested to bind with -32602 naming the limit, not a crash', async () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 1500; i++) deep = { d: deep };
    const r = await mcp(endpoint.url, 'tools/call', { name: 'ask_name', arguments: { deep } });
    expect(r.response.error).toMatchObject({
      code: -32602,
      message: 'Invalid params: arguments nests deeper than 64 levels',
    });
    // _meta is bounded the same way, at the same front door.
    const m = await mcp(endpoint.url, 'tools/call', { name: 'ask_name', arguments: {} }, { meta: { deep } });
    expect(m.response.error).toMatchObject({
      code: -32602,
      message: 'Invalid params: _meta nests deeper than 64 levels',
    });
  });

  it('does not compress sealed state by default (no length oracle on mixed client and server data)', async () => {
    const r = await mcp(endpoint.url, 'tools/call', { name: 'big_state', arguments: {} });
    expect(String(r.response.result?.requestState).length).toBeGreaterThan(4000);
    const compressed = await new McpServer({
      name: 'review',
      version: '1',
      logger: quiet,
      stateCompression: true,
    })
      .tool({ name: 'big_state', description: 'd' }, () =>
        inputRequired({ state: { filler: 'a'.repeat(3000) } }),
      )
      .listen({ port: 0 });
    try {
      const c = await mcp(compressed.url, 'tools/call', { name: 'big_state', arguments: {} });
      expect(String(c.response.result?.requestState).length).toBeLessThan(400);
    } finally {
      await compressed.close();
    }
  });
});
