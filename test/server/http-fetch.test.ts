// mcpHttp: the server as a fetch handler, driven with web Requests on Node. The same checks as the node listener:
// bearer auth first, resource metadata, Host/Origin, media types, the body limit, JSON errors, and MRTR rounds.
import { describe, expect, it } from 'vitest';
import { BearerAuth, DevTokens, parseDevTokens } from '../../src/auth/index.js';
import { encodeHeaderValue, nameHeaderField } from '../../src/protocol/index.js';
import { type McpFetchHandler, mcpHttp } from '../../src/server/index.js';
import { devTokenServer, TOKENS } from '../auth/dev-token-server.js';
import { accept, type McpReply, META, parseReply } from '../helpers/mcp-http.js';
import { testServer } from './test-server.js';

const RESOURCE = 'https://mcp.example.com/mcp';
const auth = new BearerAuth({
  verifier: new DevTokens(parseDevTokens(TOKENS)),
  resource: RESOURCE,
  scopesSupported: ['bugs:read'],
});
/** The server's own auth option left out: the edge is given to mcpHttp. */
const guarded = mcpHttp(devTokenServer({ resource: RESOURCE, withAuth: false }), { auth });
const open = mcpHttp(testServer(), { maxBodyBytes: 1024, allowedHosts: ['mcp.example.com'] });

const HEADERS = {
  host: 'mcp.example.com',
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
};

function request(body: string, headers: Record<string, string> = {}, path = '/mcp'): Request {
  return new Request(`https://mcp.example.com${path}`, {
    method: 'POST',
    headers: { ...HEADERS, ...headers },
    body,
  });
}

/** A spec-correct request through `handler.fetch`, its answer checked against the schema. */
async function call(
  handler: McpFetchHandler,
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string> = {},
  meta: Record<string, unknown> = {},
): Promise<McpReply> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method,
    params: { ...params, _meta: { ...META, ...meta } },
  });
  const field = nameHeaderField(method);
  const name = field === undefined ? undefined : params[field];
  const named: Record<string, string> =
    typeof name === 'string' ? { 'mcp-name': encodeHeaderValue(name) } : {};
  const response = await handler.fetch(request(body, { 'mcp-method': method, ...named, ...headers }));
  return parseReply(method, await raw(response));
}

async function raw(response: Response) {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return { status: response.status, headers, text: await response.text() };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('mcpHttp answers MRTR rounds', () => {
  it('a two-round call: input_required with sealed state, then the answer bound to the same caller', async () => {
    const params = { name: 'confirm_close', arguments: { id: 7 } };
    const first = await call(guarded, 'tools/call', params, bearer('alice-token'));
    expect(first.status).toBe(200);
    expect(first.contentType).toBe('application/json');
    expect(first.response.result?.resultType).toBe('input_required');
    const requestState = first.response.result!.requestState as string;
    expect(requestState).not.toContain('alice');
    const retry = { ...params, requestState, inputResponses: { ok: accept({ confirm: true }) } };
    const asBob = await call(guarded, 'tools/call', retry, bearer('bob-token'));
    expect(asBob.response.error).toEqual({ code: -32602, message: 'Invalid params: invalid requestState' });
    const second = await call(guarded, 'tools/call', retry, bearer('alice-token'));
    expect(second.response.result?.content).toEqual([{ type: 'text', text: 'closed 7 for alice' }]);
  });

  it('streams a call that reports progress as text/event-stream, its answer the last event', async () => {
    const reply = await call(
      open,
      'tools/call',
      { name: 'test_tool_with_progress', arguments: {} },
      {},
      {
        progressToken: 'p1',
      },
    );
    expect(reply.contentType).toBe('text/event-stream');
    expect(reply.messages.filter((m) => m.method === 'notifications/progress')).toHaveLength(3);
    expect(reply.response.result?.content).toEqual([{ type: 'text', text: 'Progress complete' }]);
  });

  it('answers a notification with 202 and no body', async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 9 },
    });
    const response = await open.fetch(request(body, { 'mcp-method': 'notifications/cancelled' }));
    expect(response.status).toBe(202);
    expect(await response.text()).toBe('');
  });
});

describe('mcpHttp refuses what the listener refuses, each with a clear error', () => {
  it('no bearer token: 401 with the challenge naming the metadata', async () => {
    const reply = await call(guarded, 'tools/list');
    expect(reply.status).toBe(401);
    expect(reply.headers['www-authenticate']).toBe(
      'Bearer scope="bugs:read", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"',
    );
    expect(reply.response.error?.message).toMatch(/needs an Authorization: Bearer token/);
  });

  it('an unknown token: 401 invalid_token', async () => {
    const reply = await call(guarded, 'tools/list', {}, bearer('not-a-token'));
    expect(reply.status).toBe(401);
    expect(reply.headers['www-authenticate']).toContain('error="invalid_token"');
  });

  it('serves the protected resource metadata, public and cacheable', async () => {
    const response = await guarded.fetch(
      new Request('https://mcp.example.com/.well-known/oauth-protected-resource/mcp'),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(await response.json()).toMatchObject({ resource: RESOURCE, scopes_supported: ['bugs:read'] });
  });

  it('a Host not allowed, or a foreign Origin: 403 naming it', async () => {
    const wrongHost = await call(open, 'tools/list', {}, { host: 'evil.example' });
    expect(wrongHost.status).toBe(403);
    expect(wrongHost.response.error?.message).toBe('Forbidden: Host evil.example is not allowed');
    const wrongOrigin = await call(open, 'tools/list', {}, { origin: 'https://evil.example' });
    expect(wrongOrigin.status).toBe(403);
    expect(wrongOrigin.response.error?.message).toBe('Forbidden: Origin https://evil.example is not allowed');
  });

  it('a body over the limit: 413, declared or streamed', async () => {
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', pad: 'x'.repeat(2000) });
    const declared = await open.fetch(request(big, { 'mcp-method': 'ping' }));
    expect(declared.status).toBe(413);
    expect((await declared.json()).error.message).toBe('Request body exceeds the limit of 1024 bytes');
    const streamed = new Request('https://mcp.example.com/mcp', {
      method: 'POST',
      headers: { ...HEADERS, 'mcp-method': 'ping' },
      body: new Blob([big]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect((await open.fetch(streamed)).status).toBe(413);
  });

  it('a wrong Content-Type is 415, an Accept without JSON or SSE is 406', async () => {
    const type = await open.fetch(request('{}', { 'content-type': 'text/plain' }));
    expect(type.status).toBe(415);
    expect((await type.json()).error.message).toBe(
      'Unsupported Media Type: Content-Type must be application/json',
    );
    const acceptHtml = await open.fetch(request('{}', { accept: 'text/html' }));
    expect(acceptHtml.status).toBe(406);
  });

  it('a body that is not JSON: 400 with the JSON-RPC parse error', async () => {
    const response = await open.fetch(request('{not json', { 'mcp-method': 'ping' }));
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      jsonrpc: '2.0',
      error: { code: -32700, message: 'Parse error: the body is not valid JSON' },
    });
  });

  it('a GET on the endpoint is 405, another path 404', async () => {
    const get = await open.fetch(
      new Request('https://mcp.example.com/mcp', { headers: { host: 'mcp.example.com' } }),
    );
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    const elsewhere = await open.fetch(request('{}', {}, '/other'));
    expect(elsewhere.status).toBe(404);
  });
});

describe('mcpHttp does not lose what the server was given', () => {
  it('an edge with auth: undefined keeps the server’s own auth (a caller without a token gets 401)', async () => {
    const server = devTokenServer({ resource: RESOURCE });
    const handler = mcpHttp(server, { auth: undefined });
    const reply = await call(handler, 'tools/list');
    expect(reply.status).toBe(401);
  });

  it('tells the server’s rounds.observers of a refusal at the door', async () => {
    const events: Array<{ outcome: string; reason: string | undefined }> = [];
    const server = testServer({
      rounds: { observers: [{ observe: (e) => void events.push({ outcome: e.outcome, reason: e.reason }) }] },
    });
    const handler = mcpHttp(server, { auth });
    const reply = await call(handler, 'tools/call', { name: 'add', arguments: { a: 1, b: 2 } });
    expect(reply.status).toBe(401);
    expect(events).toEqual([expect.objectContaining({ outcome: 'refused' })]);
  });

  it('settles its answer when the client goes away before the handler answers', async () => {
    const gone = new AbortController();
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'slow', arguments: { tag: 'x' }, _meta: META },
    });
    const req = new Request('https://mcp.example.com/mcp', {
      method: 'POST',
      headers: { ...HEADERS, 'mcp-method': 'tools/call', 'mcp-name': 'slow' },
      body,
      signal: gone.signal,
    });
    const answer = open.fetch(req);
    gone.abort();
    const response = await answer;
    expect(response.status).toBe(499);
  });
});
