// Every kind of bad HTTP input gets a clear JSON-RPC error with the spec's status, and the server keeps serving.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpEndpoint } from '../../src/server/index.js';
import { META, mcp, rawPost } from '../helpers/mcp-http.js';
import { testServer } from './test-server.js';

let endpoint: HttpEndpoint;
beforeAll(async () => {
  endpoint = await testServer().listen({ port: 0, maxBodyBytes: 64 * 1024 });
});
afterAll(() => endpoint.close());

const HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/list',
};
const listBody = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: { _meta: META }, ...extra });

async function expectStillServing() {
  const reply = await mcp(endpoint.url, 'tools/list');
  expect(reply.status).toBe(200);
  expect(Array.isArray(reply.response.result?.tools)).toBe(true);
}

describe('framing', () => {
  it('answers malformed JSON with -32700 and 400', async () => {
    const r = await rawPost(endpoint.url, '{"jsonrpc": "2.0", "id": 1,', HEADERS);
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text).error).toMatchObject({
      code: -32700,
      message: expect.stringContaining('not valid JSON'),
    });
    await expectStillServing();
  });

  it('refuses a JSON-RPC batch array with -32600', async () => {
    const r = await rawPost(endpoint.url, `[${listBody()}]`, HEADERS);
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text).error).toMatchObject({
      code: -32600,
      message: expect.stringContaining('batches'),
    });
  });

  it('refuses a wrong Content-Type with 415', async () => {
    const r = await rawPost(endpoint.url, listBody(), { ...HEADERS, 'content-type': 'text/plain' });
    expect(r.status).toBe(415);
    expect(JSON.parse(r.text).error.message).toContain('Content-Type must be application/json');
  });

  it('refuses a body over the limit with 413 before reading it all (declared length)', async () => {
    const big = Buffer.alloc(200 * 1024, 0x20);
    const r = await rawPost(endpoint.url, big, HEADERS);
    expect(r.status).toBe(413);
    expect(JSON.parse(r.text).error.message).toContain('exceeds the limit of 65536 bytes');
    await expectStillServing();
  });

  it('refuses a chunked body that grows past the limit with 413', async () => {
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(endpoint.url, { method: 'POST', headers: HEADERS }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', () => resolve(-1));
      const chunk = Buffer.alloc(16 * 1024, 0x20);
      let sent = 0;
      const pump = () => {
        // Keep writing well past the limit; the server must answer without waiting for the end.
        while (sent < 40 && req.write(chunk)) sent++;
        if (sent < 40) req.once('drain', pump);
      };
      pump();
      // Settled already if an answer came; a hang is left to the test timeout.
      req.on('close', () =>
        reject(new Error('connection closed without an answer to an oversized chunked body')),
      );
    });
    expect(status).toBe(413);
    await expectStillServing();
  });

  it('accepts a notification with 202 and an empty body', async () => {
    const r = await rawPost(
      endpoint.url,
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }),
      HEADERS,
    );
    expect(r.status).toBe(202);
    expect(r.text).toBe('');
  });

  it('refuses a response message sent by the client', async () => {
    const r = await rawPost(endpoint.url, JSON.stringify({ jsonrpc: '2.0', id: 1, result: {} }), HEADERS);
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text).error.message).toContain('must not send responses');
  });

  it('refuses a null id and a wrong jsonrpc version', async () => {
    const a = await rawPost(endpoint.url, listBody({ id: null }), HEADERS);
    expect(JSON.parse(a.text).error).toMatchObject({ code: -32600, message: expect.stringContaining('id') });
    const b = await rawPost(endpoint.url, listBody({ jsonrpc: '1.0' }), HEADERS);
    expect(JSON.parse(b.text).error).toMatchObject({
      code: -32600,
      message: expect.stringContaining('jsonrpc'),
    });
  });

  it('answers GET and DELETE with 405', async () => {
    for (const method of ['GET', 'DELETE']) {
      const r = await rawPost(endpoint.url, '', { accept: 'text/event-stream' }, method);
      expect(r.status).toBe(405);
      expect(r.headers.allow).toBe('POST');
    }
  });

  it('answers another path with 404', async () => {
    const r = await rawPost(endpoint.url.replace('/mcp', '/other'), listBody(), HEADERS);
    expect(r.status).toBe(404);
  });

  it('refuses a foreign Origin or Host with 403 (DNS rebinding)', async () => {
    const origin = await rawPost(endpoint.url, listBody(), { ...HEADERS, origin: 'http://evil.example.com' });
    expect(origin.status).toBe(403);
    const port = new URL(endpoint.url).port;
    const host = await rawPost(endpoint.url, listBody(), { ...HEADERS, host: `evil.example.com:${port}` });
    expect(host.status).toBe(403);
    const ok = await rawPost(endpoint.url, listBody(), {
      ...HEADERS,
      origin: `http://localhost:${port}`,
      host: `localhost:${port}`,
    });
    expect(ok.status).toBe(200);
  });
});

describe('_meta and headers', () => {
  it('requires _meta with protocolVersion and clientCapabilities (-32602, 400)', async () => {
    for (const meta of [
      undefined,
      { 'io.modelcontextprotocol/clientCapabilities': {} },
      { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' },
    ]) {
      const r = await rawPost(
        endpoint.url,
        JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: meta ? { _meta: meta } : {} }),
        HEADERS,
      );
      expect(r.status).toBe(400);
      const body = JSON.parse(r.text);
      expect(body.id).toBe(3);
      expect(body.error.code).toBe(-32602);
      expect(body.error.message).toMatch(/_meta/);
    }
  });

  it('rejects an unknown protocol version with -32022 listing what is supported', async () => {
    const reply = await mcp(
      endpoint.url,
      'tools/list',
      {},
      {
        meta: { 'io.modelcontextprotocol/protocolVersion': '1999-01-01' },
        headers: { 'mcp-protocol-version': '1999-01-01' },
      },
    );
    expect(reply.status).toBe(400);
    expect(reply.response.error).toMatchObject({
      code: -32022,
      data: { supported: ['2026-07-28'], requested: '1999-01-01' },
    });
    const long = 'v'.repeat(300);
    const cut = await mcp(
      endpoint.url,
      'tools/list',
      {},
      {
        meta: { 'io.modelcontextprotocol/protocolVersion': long },
        headers: { 'mcp-protocol-version': long },
      },
    );
    expect(cut.response.error).toMatchObject({ code: -32022, data: { requested: `${'v'.repeat(64)}…` } });
  });

  it('rejects header/body mismatches with -32020', async () => {
    const cases: Array<[string, Record<string, string>, string]> = [
      ['tools/list', { 'mcp-protocol-version': '2025-11-25' }, 'MCP-Protocol-Version'],
      ['tools/list', { 'mcp-method': 'prompts/list' }, 'Mcp-Method'],
      ['tools/call', { 'mcp-name': 'other_tool' }, 'Mcp-Name'],
      ['tools/call', { 'mcp-name': '=?base64?!!!?=' }, 'malformed'],
    ];
    for (const [method, headers, mention] of cases) {
      const reply = await mcp(
        endpoint.url,
        method,
        method === 'tools/call' ? { name: 'test_simple_text' } : {},
        { headers },
      );
      expect(reply.status).toBe(400);
      expect(reply.response.error?.code).toBe(-32020);
      expect(reply.response.error?.message).toContain(mention);
    }
  });

  it('rejects missing standard headers with -32020', async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 9,
      method: 'tools/call',
      params: { name: 'test_simple_text', _meta: META },
    });
    for (const drop of ['mcp-protocol-version', 'mcp-method', 'mcp-name']) {
      const headers: Record<string, string> = {
        ...HEADERS,
        'mcp-method': 'tools/call',
        'mcp-name': 'test_simple_text',
      };
      delete headers[drop];
      const r = await rawPost(endpoint.url, body, headers);
      expect(r.status).toBe(400);
      expect(JSON.parse(r.text).error.code).toBe(-32020);
    }
  });

  it('decodes a base64 sentinel Mcp-Name before comparing', async () => {
    const reply = await mcp(
      endpoint.url,
      'tools/call',
      { name: 'test_simple_text' },
      {
        headers: { 'mcp-name': `=?base64?${Buffer.from('test_simple_text').toString('base64')}?=` },
      },
    );
    expect(reply.status).toBe(200);
  });

  it('checks Mcp-Param-* headers declared with x-mcp-header', async () => {
    const args = { region: 'us-west1', query: 'q' };
    const ok = await mcp(
      endpoint.url,
      'tools/call',
      { name: 'regional', arguments: args },
      { headers: { 'mcp-param-region': 'us-west1' } },
    );
    expect(ok.response.result?.content).toEqual([{ type: 'text', text: 'us-west1:q' }]);
    const missing = await mcp(endpoint.url, 'tools/call', { name: 'regional', arguments: args });
    expect(missing.response.error).toMatchObject({
      code: -32020,
      message: expect.stringContaining('Mcp-Param-Region'),
    });
    const wrong = await mcp(
      endpoint.url,
      'tools/call',
      { name: 'regional', arguments: args },
      { headers: { 'mcp-param-region': 'eu' } },
    );
    expect(wrong.response.error?.code).toBe(-32020);
    const absent = await mcp(endpoint.url, 'tools/call', { name: 'regional', arguments: { query: 'q' } });
    expect(absent.response.result?.content).toEqual([{ type: 'text', text: 'undefined:q' }]);
    // A header whose value the body does not carry (absent or null) is a mismatch too: a router would see "eu".
    for (const body of [{ query: 'q' }, { region: null, query: 'q' }]) {
      const orphan = await mcp(
        endpoint.url,
        'tools/call',
        { name: 'regional', arguments: body },
        { headers: { 'mcp-param-region': 'eu' } },
      );
      expect(orphan.status).toBe(400);
      expect(orphan.response.error).toMatchObject({
        code: -32020,
        message: expect.stringContaining('Mcp-Param-Region header is sent but region is not set'),
      });
    }
  });

  it('refuses a repeated Mcp-Name or Mcp-Param-* header, which node would join into one value', async () => {
    const send = (headerPairs: string[], body: object) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const payload = JSON.stringify({
          jsonrpc: '2.0',
          id: 9,
          method: 'tools/call',
          params: { _meta: META, ...body },
        });
        // A flat header list (so a name can repeat) gets no automatic Host or framing headers: state them.
        const req = httpRequest(
          endpoint.url,
          {
            method: 'POST',
            headers: [
              'host',
              new URL(endpoint.url).host,
              'content-type',
              'application/json',
              'accept',
              'application/json, text/event-stream',
              'mcp-protocol-version',
              '2026-07-28',
              'mcp-method',
              'tools/call',
              'content-length',
              String(Buffer.byteLength(payload)),
              ...headerPairs,
            ],
          },
          (res) => {
            let text = '';
            res.on('data', (c: Buffer) => {
              text += c.toString('utf8');
            });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
          },
        );
        req.on('error', reject);
        req.end(
          JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { _meta: META, ...body } }),
        );
      });
    const twoNames = await send(['mcp-name', 'regional', 'mcp-name', 'other'], { name: 'regional, other' });
    expect(twoNames.status).toBe(400);
    expect(JSON.parse(twoNames.text).error).toMatchObject({
      code: -32020,
      message: expect.stringContaining('mcp-name header is sent 2 times'),
    });
    const twoParams = await send(
      ['mcp-name', 'regional', 'Mcp-Param-Region', 'us', 'mcp-param-region', 'eu'],
      {
        name: 'regional',
        arguments: { region: 'us, eu', query: 'q' },
      },
    );
    expect(twoParams.status).toBe(400);
    // One header whose value happens to hold ", " is still fine.
    const one = await send(['mcp-name', 'regional', 'mcp-param-region', 'us, eu'], {
      name: 'regional',
      arguments: { region: 'us, eu', query: 'q' },
    });
    expect(one.status).toBe(200);
  });

  it('answers an unknown method with 404 and -32601', async () => {
    for (const method of ['ping', 'no/such/method']) {
      const reply = await mcp(endpoint.url, method);
      expect(reply.status).toBe(404);
      expect(reply.response.error).toMatchObject({ code: -32601, message: `Method not found: ${method}` });
    }
  });
});

describe('a legacy initialize handshake, on a server with legacyClients: false', () => {
  let modernOnly: HttpEndpoint;
  beforeAll(async () => {
    modernOnly = await testServer({ legacyClients: false }).listen({ port: 0 });
  });
  afterAll(() => modernOnly.close());
  const legacyInitialize = (protocolVersion: string) =>
    JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion, capabilities: {}, clientInfo: { name: 'legacy-client', version: '1.0.0' } },
    });
  // Exactly what a legacy client sends: no MCP-Protocol-Version, no Mcp-Method, no _meta.
  const legacyHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

  it('gets the header error (400, -32020) with the versions this server speaks in message and data', async () => {
    const r = await rawPost(modernOnly.url, legacyInitialize('2025-11-25'), legacyHeaders);
    expect(r.status).toBe(400);
    const body = JSON.parse(r.text);
    expect(body).toMatchObject({
      jsonrpc: '2.0',
      id: 0,
      error: { code: -32020, data: { requested: '2025-11-25', supported: ['2026-07-28'] } },
    });
    expect(body.error.message).toMatch(/^Header mismatch: the MCP-Protocol-Version header is required\. /);
    expect(body.error.message).toContain('speaks only MCP 2026-07-28');
    await expectStillServing();
  });

  it('with the modern headers, gets 404 and -32601 for the removed method, naming the versions too', async () => {
    const reply = await mcp(modernOnly.url, 'initialize');
    expect(reply.status).toBe(404);
    expect(reply.response.error).toMatchObject({
      code: -32601,
      message: expect.stringMatching(
        /^Method not found: initialize\. This server speaks only MCP 2026-07-28/,
      ),
      data: { requested: 'unknown', supported: ['2026-07-28'] },
    });
  });

  it('echoes at most 64 characters of a version string', async () => {
    const r = await rawPost(modernOnly.url, legacyInitialize('9'.repeat(5000)), legacyHeaders);
    const body = JSON.parse(r.text);
    expect(body.error.data.requested).toBe(`${'9'.repeat(64)}…`);
    expect(body.error.message.length).toBeLessThan(400);
  });
});

describe('targets and arguments', () => {
  it('names an unknown tool, prompt or resource with -32602', async () => {
    const tool = await mcp(endpoint.url, 'tools/call', { name: 'nope' });
    expect(tool.response.error).toMatchObject({ code: -32602, message: 'Unknown tool: nope' });
    const prompt = await mcp(endpoint.url, 'prompts/get', { name: 'nope' });
    expect(prompt.response.error).toMatchObject({ code: -32602, message: 'Unknown prompt: nope' });
    const resource = await mcp(endpoint.url, 'resources/read', { uri: 'test://nope' });
    expect(resource.response.error).toMatchObject({ code: -32602, data: { uri: 'test://nope' } });
  });

  it('reports arguments that fail the input schema as a tool error naming the field', async () => {
    const zod = await mcp(endpoint.url, 'tools/call', { name: 'typed', arguments: { count: 0, label: 'x' } });
    expect(zod.response.result?.isError).toBe(true);
    expect(JSON.stringify(zod.response.result?.content)).toContain('count');
    const json = await mcp(endpoint.url, 'tools/call', { name: 'json_typed', arguments: { n: 'seven' } });
    expect(json.response.result?.isError).toBe(true);
    expect(JSON.stringify(json.response.result?.content)).toContain('n: must be integer');
    const good = await mcp(endpoint.url, 'tools/call', {
      name: 'typed',
      arguments: { count: 2, label: 'x' },
    });
    expect(good.response.result?.content).toEqual([{ type: 'text', text: 'x:2' }]);
  });

  it('rejects params that break the request schema with -32602 naming the field', async () => {
    const reply = await mcp(endpoint.url, 'tools/call', { name: 'typed', arguments: 'not an object' });
    expect(reply.response.error?.code).toBe(-32602);
    expect(reply.response.error?.message).toContain('arguments');
  });

  it('turns a handler that throws, or rejects after an await, into -32603 without leaking the error', async () => {
    for (const name of ['throws', 'rejects']) {
      const reply = await mcp(endpoint.url, 'tools/call', { name });
      expect(reply.status).toBe(500);
      expect(reply.response.error).toEqual({
        code: -32603,
        message: 'Internal error while handling tools/call',
      });
      expect(JSON.stringify(reply.response)).not.toContain('secret');
      await expectStillServing();
    }
  });

  it("keeps a handler's own _meta beside serverInfo, and never lets it reach other results", async () => {
    const tagged = await mcp(endpoint.url, 'tools/call', { name: 'with_meta' });
    expect(tagged.response.result?._meta).toEqual({
      'example.com/trace': 'abc',
      'io.modelcontextprotocol/serverInfo': expect.objectContaining({ name: expect.any(String) }),
    });
    const plain = await mcp(endpoint.url, 'tools/call', {
      name: 'typed',
      arguments: { count: 1, label: 'y' },
    });
    expect(Object.keys(plain.response.result?._meta ?? {})).toEqual(['io.modelcontextprotocol/serverInfo']);
  });

  it('rejects a cursor it never issued', async () => {
    const reply = await mcp(endpoint.url, 'tools/list', { cursor: 'bogus' });
    expect(reply.response.error).toMatchObject({ code: -32602, message: expect.stringContaining('cursor') });
  });
});
