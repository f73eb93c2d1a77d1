// The 2025 Streamable HTTP transport of the legacy bridge at the wire: version negotiation, sessions (required,
// unknown, ended, someone else's), the standalone GET stream, resuming a flow's stream with Last-Event-ID after a
// disconnection, logging/setLevel, resources/subscribe, and the errors a client can cause.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { legacyFlowsServer } from '../fixtures/legacy-flows-server.js';
import { JSON_HEADERS, LegacyWire } from '../helpers/legacy-wire.js';

let endpoint: { url: string; close(): Promise<void> };
const quietLogger = { info() {}, warn() {}, error() {} };

beforeAll(async () => {
  endpoint = await legacyFlowsServer({ logger: quietLogger }).listen({
    port: 0,
    // Two callers, told apart by a header: enough to show a session is bound to who opened it.
    authenticate: (req) => {
      const who = req.headers['x-test-user'];
      return typeof who === 'string' ? { subject: who } : undefined;
    },
  });
});
afterAll(() => endpoint.close());

describe('version negotiation', () => {
  for (const version of ['2025-11-25', '2025-06-18', '2025-03-26']) {
    it(`answers initialize for ${version} with that version and a visible-ASCII session id`, async () => {
      const wire = new LegacyWire(endpoint.url, version);
      const result = await wire.initialize();
      expect(result.protocolVersion).toBe(version);
      expect(result.serverInfo).toEqual({ name: 'legacy-flows', version: '1.0.0' });
      expect(result.capabilities).toMatchObject({ tools: {}, logging: {} });
      expect(wire.sessionId).toMatch(/^[\x21-\x7e]+$/);
      expect((await wire.call('ping')).body).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    });
  }

  it('offers its latest 2025 version to a client that asks for one it does not speak', async () => {
    const wire = new LegacyWire(endpoint.url, '2024-11-05');
    expect((await wire.initialize()).protocolVersion).toBe('2025-11-25');
  });

  it('a 2026-07-28 request on the same endpoint still takes the MRTR path', async () => {
    const res = await fetch(endpoint.url, {
      method: 'POST',
      headers: { ...JSON_HEADERS, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect(((await res.json()) as { result: { resultType: string } }).result.resultType).toBe('complete');
  });
});

describe('sessions', () => {
  it('a request with a 2025 version but no session is refused with 400 naming the header', async () => {
    const res = await fetch(endpoint.url, {
      method: 'POST',
      headers: { ...JSON_HEADERS, 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain('Mcp-Session-Id');
  });

  it('an unknown or forged session id is 404, so the client starts a new one', async () => {
    const wire = new LegacyWire(endpoint.url);
    await wire.initialize();
    wire.sessionId = `${wire.sessionId!.slice(0, -2)}xx`;
    const { status, body } = await wire.call('tools/list');
    expect(status).toBe(404);
    expect(JSON.stringify(body)).toContain('send initialize to start a new one');
  });

  it('DELETE ends the session: 200, then 404 for its next request', async () => {
    const wire = new LegacyWire(endpoint.url);
    await wire.initialize();
    const del = await fetch(endpoint.url, { method: 'DELETE', headers: wire.headers() });
    expect(del.status).toBe(200);
    expect((await wire.call('tools/list')).status).toBe(404);
  });

  it('a session opened by one caller is refused (403) to another', async () => {
    const alice = new LegacyWire(endpoint.url, '2025-11-25', { 'x-test-user': 'alice' });
    await alice.initialize();
    const mallory = new LegacyWire(endpoint.url, '2025-11-25', { 'x-test-user': 'mallory' });
    mallory.sessionId = alice.sessionId;
    const { status, body } = await mallory.call('tools/list');
    expect(status).toBe(403);
    expect(JSON.stringify(body)).toContain('belongs to another caller');
  });

  it('an MCP-Protocol-Version other than the negotiated one is refused with 400', async () => {
    const wire = new LegacyWire(endpoint.url, '2025-06-18');
    await wire.initialize();
    const res = await wire.post(
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { 'mcp-protocol-version': '2025-11-25' },
    );
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toContain(
      'not the version this session negotiated (2025-06-18)',
    );
  });

  it('initialize inside a session is refused', async () => {
    const wire = new LegacyWire(endpoint.url);
    await wire.initialize();
    const { body } = await wire.call('initialize', { protocolVersion: '2025-11-25', capabilities: {} });
    expect(body.error).toMatchObject({
      code: -32600,
      message: expect.stringContaining('already initialized'),
    });
  });

  it('batches are refused with a message saying to send one message at a time', async () => {
    const wire = new LegacyWire(endpoint.url);
    await wire.initialize();
    const res = await wire.post([{ jsonrpc: '2.0', id: 1, method: 'ping' }]);
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toContain('send one message at a time');
  });

  it('an answer nobody waits for is 404, never silently dropped', async () => {
    const wire = new LegacyWire(endpoint.url);
    await wire.initialize();
    const res = await wire.answer('nobody.1', { action: 'accept', content: {} });
    expect(res.status).toBe(404);
    expect(JSON.stringify(await res.json())).toContain('No request of this session waits');
  });

  it('an answer that is no JSON-RPC response is refused by name, not delivered as an empty result', async () => {
    const wire = new LegacyWire(endpoint.url);
    await wire.initialize();
    const res = await wire.post({ jsonrpc: '2.0', id: 'nobody.1', result: 'yes' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      id: 'nobody.1',
      error: { code: -32600, message: 'Invalid Request: result must be an object' },
    });
  });
});

describe('streams', () => {
  it('GET opens the standalone stream (primed with a retry hint); a second one is 409', async () => {
    const wire = new LegacyWire(endpoint.url);
    await wire.initialize();
    const first = new AbortController();
    const { res, events } = await wire.get({}, first.signal);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect((await events!.next())?.retry).toBe(1000);
    const second = await wire.get();
    expect(second.res.status).toBe(409);
    first.abort();
  });

  it('a flow survives a disconnection: GET with Last-Event-ID resumes its stream where it broke off', async () => {
    const wire = new LegacyWire(endpoint.url);
    await wire.initialize({ elicitation: {} });
    const cut = new AbortController();
    const { events } = await wire.stream('tools/call', { name: 'plan_trip', arguments: {} }, 7, cut.signal);
    const priming = await events.next();
    expect(priming).toMatchObject({ data: '', retry: 1000 });
    const first = await events.nextMessage();
    expect(first?.message).toMatchObject({ method: 'elicitation/create', params: { message: 'Where to?' } });
    cut.abort(); // the connection drops; the call goes on
    expect(
      (await wire.answer(first!.message.id, { action: 'accept', content: { city: 'Oslo' } })).status,
    ).toBe(202);
    const resumed = await wire.get({ 'last-event-id': first!.id! });
    expect(resumed.res.status).toBe(200);
    const second = await resumed.events!.nextMessage();
    expect(second?.message).toMatchObject({
      method: 'elicitation/create',
      params: { message: 'How many nights in Oslo?' },
    });
    await wire.answer(second!.message.id, { action: 'accept', content: { nights: 4 } });
    const final = await resumed.events!.nextMessage();
    expect(final?.message).toEqual({
      jsonrpc: '2.0',
      id: 7,
      result: expect.objectContaining({ content: [{ type: 'text', text: '4 nights in Oslo' }] }),
    });
    expect(await resumed.events!.next()).toBeUndefined();
  });

  it('resuming from an event this server never sent is 404', async () => {
    const wire = new LegacyWire(endpoint.url);
    await wire.initialize();
    const { res } = await wire.get({ 'last-event-id': 'nope_3' });
    expect(res.status).toBe(404);
  });

  it('a 2025-06-18 client gets no priming event and no elicitation mode it does not know', async () => {
    const wire = new LegacyWire(endpoint.url, '2025-06-18');
    await wire.initialize({ elicitation: {} });
    const { events } = await wire.stream('tools/call', { name: 'approve', arguments: { change: 'c1' } });
    const first = await events.next();
    const message = JSON.parse(first!.data) as { id: string; params: Record<string, unknown> };
    expect(message.params).not.toHaveProperty('mode');
    expect(message.params.message).toBe('Approve c1?');
    await wire.answer(message.id, { action: 'accept', content: { approve: true } });
    expect((await events.nextMessage())?.message).toMatchObject({
      result: { content: [{ type: 'text', text: 'approved c1' }] },
    });
  });

  it('notifications/cancelled ends a flow that waits for an answer', async () => {
    const wire = new LegacyWire(endpoint.url);
    await wire.initialize({ elicitation: {} });
    const { events } = await wire.stream('tools/call', { name: 'plan_trip', arguments: {} }, 'c-1');
    await events.nextMessage();
    expect(
      (await wire.post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'c-1' } }))
        .status,
    ).toBe(202);
    expect((await events.nextMessage())?.message).toMatchObject({
      id: 'c-1',
      error: { message: 'The request was cancelled' },
    });
  });
});

describe('methods only 2025 revisions have', () => {
  it('logging/setLevel filters what the session receives; an unknown level is -32602', async () => {
    const wire = new LegacyWire(endpoint.url);
    await wire.initialize();
    const logged = async () => {
      const { events } = await wire.stream('tools/call', { name: 'chatty', arguments: {} });
      const levels: unknown[] = [];
      for (let m = await events.nextMessage(); m; m = await events.nextMessage())
        if (m.message.method === 'notifications/message')
          levels.push((m.message.params as { level: string }).level);
      return levels;
    };
    expect(await logged()).toEqual(['warning']); // the default level is info
    expect((await wire.call('logging/setLevel', { level: 'debug' })).body).toMatchObject({ result: {} });
    expect(await logged()).toEqual(['debug', 'warning']);
    expect((await wire.call('logging/setLevel', { level: 'loud' })).body).toMatchObject({
      error: { code: -32602, message: expect.stringContaining('level must be one of') },
    });
  });

  it('resources/subscribe and unsubscribe answer {}; a missing uri is -32602', async () => {
    const wire = new LegacyWire(endpoint.url);
    await wire.initialize();
    expect((await wire.call('resources/subscribe', { uri: 'test://a' })).body).toMatchObject({ result: {} });
    expect((await wire.call('resources/unsubscribe', { uri: 'test://a' })).body).toMatchObject({
      result: {},
    });
    expect((await wire.call('resources/subscribe', {})).body).toMatchObject({ error: { code: -32602 } });
  });
});

describe('initialize with the version header a 2025 client may already send', () => {
  it('opens a session when MCP-Protocol-Version names a 2025 version, as the conformance suite sends it', async () => {
    const res = await fetch(endpoint.url, {
      method: 'POST',
      headers: { ...JSON_HEADERS, 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'h', version: '1' } },
      }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('mcp-session-id')).toMatch(/^[\x21-\x7e]+$/);
  });

  it('a 2026-07-28 initialize (modern headers) still gets 404 and -32601', async () => {
    const res = await fetch(endpoint.url, {
      method: 'POST',
      headers: { ...JSON_HEADERS, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'initialize' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
    });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32601);
  });
});
