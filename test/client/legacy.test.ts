// The legacy protocol's wire details against small scripted servers: version negotiation, the session header,
// a session that ends (404), a stream resumed with Last-Event-ID, and server requests of every kind.
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { McpClient, rootsResolver, scriptedResolver } from '../../src/client/index.js';
import { deferred } from '../helpers/signals.js';
import { type FakeServer, fakeServer, json, type Seen } from './helpers.js';

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type Body = { id?: number; method?: string; params?: Record<string, unknown>; result?: unknown };

/**
 * A legacy server: refuses anything outside a session with 400, answers initialize with `version` and a session id,
 * and hands every other message to `handle`.
 */
function legacyServer(
  handle: (body: Body, res: ServerResponse, seen: Seen) => void,
  options: { version?: string; session?: () => string } = {},
): Promise<FakeServer> {
  let sessions = 0;
  return fakeServer((s, res) => {
    const body = (s.body ?? {}) as Body;
    if (body.method === 'initialize') {
      const id = options.session?.() ?? `s${++sessions}`;
      res.setHeader('mcp-session-id', id);
      return json(res, {
        jsonrpc: '2.0',
        id: body.id,
        result: {
          protocolVersion: options.version ?? '2025-11-25',
          capabilities: { tools: {} },
          serverInfo: { name: 'old', version: '1' },
        },
      });
    }
    if (!s.headers['mcp-session-id'])
      return json(
        res,
        { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Bad Request: no session' } },
        400,
      );
    if (body.method === 'notifications/initialized') {
      res.writeHead(202);
      return res.end();
    }
    handle(body, res, s);
  });
}

const text = (id: unknown, t: string) => ({
  jsonrpc: '2.0',
  id,
  result: { content: [{ type: 'text', text: t }] },
});

describe('version negotiation', () => {
  it('a server that answers initialize with 2025-06-18: that version in every header, form elicitation as {}', async () => {
    server = await legacyServer(
      (b, res) => {
        if (b.method === 'tools/list') return json(res, { jsonrpc: '2.0', id: b.id, result: { tools: [] } });
        json(res, text(b.id, 'ok'));
      },
      { version: '2025-06-18' },
    );
    const c = new McpClient({ server: server.url, resolvers: [scriptedResolver({})] });
    expect(await c.callTool('t')).toMatchObject({ status: 'complete' });
    expect(c.version).toBe('2025-06-18');
    const init = server.calls('initialize')[0];
    expect(init?.body.params).toMatchObject({
      protocolVersion: '2025-11-25',
      capabilities: { elicitation: { form: {}, url: {} } },
    });
    const call = server.calls('tools/call')[0];
    expect(call?.headers['mcp-protocol-version']).toBe('2025-06-18');
    expect(call?.headers['mcp-session-id']).toBe('s1');
    // No 2026-07-28 per-request _meta on the legacy wire.
    expect(call?.body.params._meta).toBeUndefined();
    await c.close();
  });

  it('a server that picks a version this client does not speak: a protocol error that names both', async () => {
    server = await legacyServer((b, res) => json(res, text(b.id, 'ok')), { version: '2024-11-05' });
    const c = new McpClient({ server: server.url });
    const o = await c.callTool('t');
    expect(o.status).toBe('protocol_error');
    if (o.status === 'protocol_error')
      expect(o.message).toMatch(
        /the server chose protocol version "2024-11-05", which this client does not speak/,
      );
    await c.close();
  });
});

describe('sessions and streams', () => {
  it('a session that ends (404) is opened again, once, and the request sent again', async () => {
    let expired = false;
    server = await legacyServer((b, res, s) => {
      if (s.headers['mcp-session-id'] === 's1' && expired)
        return json(
          res,
          { jsonrpc: '2.0', id: b.id, error: { code: -32001, message: 'Session not found' } },
          404,
        );
      if (b.method === 'tools/call') expired = true;
      json(res, text(b.id, `in ${s.headers['mcp-session-id']}`));
    });
    const c = new McpClient({ server: server.url });
    expect(await c.callTool('t')).toMatchObject({
      status: 'complete',
      result: { content: [{ text: 'in s1' }] },
    });
    expect(await c.callTool('t')).toMatchObject({
      status: 'complete',
      result: { content: [{ text: 'in s2' }] },
    });
    expect(server.calls('initialize')).toHaveLength(2);
    await c.close();
  });

  it('a call stream that closes before the response is resumed with GET and Last-Event-ID', async () => {
    let pending: number | undefined;
    server = await legacyServer((b, res, s) => {
      if (b.method === 'tools/call') {
        pending = b.id;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('id: e1\nretry: 5\ndata: \n\n');
        return res.end();
      }
      if (s.headers['last-event-id'] === 'e1' && pending !== undefined) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(`id: e2\ndata: ${JSON.stringify(text(pending, 'resumed'))}\n\n`);
        return;
      }
      // The session's own GET stream: nothing to say.
      res.writeHead(405);
      res.end();
    });
    const c = new McpClient({ server: server.url });
    expect(await c.callTool('t')).toMatchObject({
      status: 'complete',
      result: { content: [{ text: 'resumed' }] },
    });
    const resumed = server.seen.filter((s) => s.headers['last-event-id'] === 'e1');
    expect(resumed).toHaveLength(1);
    expect(resumed[0]?.headers['mcp-session-id']).toBe('s1');
    await c.close();
  });

  it('server requests on the call stream (roots, sampling, ping) are answered by the resolvers, unknown ones refused', async () => {
    const answers: Record<string, unknown> = {};
    let callId: number | undefined;
    let call: ServerResponse | undefined;
    server = await legacyServer((b, res) => {
      if (b.method === 'tools/call') {
        callId = b.id;
        call = res;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const [id, method] of [
          [101, 'roots/list'],
          [102, 'sampling/createMessage'],
          [103, 'ping'],
          [104, 'something/else'],
        ] as const)
          res.write(
            `data: ${JSON.stringify({ jsonrpc: '2.0', id, method, params: method.startsWith('sampling') ? { messages: [], maxTokens: 5 } : {} })}\n\n`,
          );
        return;
      }
      // Answers to the server's requests arrive as their own POSTs.
      if (b.id !== undefined && b.method === undefined) {
        answers[String(b.id)] = b.result ?? (b as { error?: unknown }).error;
        res.writeHead(202);
        res.end();
        if (Object.keys(answers).length === 4) call?.end(`data: ${JSON.stringify(text(callId, 'done'))}\n\n`);
        return;
      }
      res.writeHead(405);
      res.end();
    });
    const c = new McpClient({
      server: server.url,
      resolvers: [
        rootsResolver([{ uri: 'file:///work', name: 'work' }]),
        scriptedResolver(
          { q2: { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm' } } as never,
          { kinds: ['sampling'] },
        ),
      ],
    });
    expect(await c.callTool('t')).toMatchObject({ status: 'complete' });
    expect(answers['101']).toEqual({ roots: [{ uri: 'file:///work', name: 'work' }] });
    expect(answers['102']).toMatchObject({ role: 'assistant', model: 'm' });
    expect(answers['103']).toEqual({});
    expect(answers['104']).toMatchObject({ code: -32602 });
    await c.close();
  });

  it('a question only a person may answer, with no person here: cancelled for the server, needs_person for the caller', async () => {
    let callId: number | undefined;
    let call: ServerResponse | undefined;
    let answer: unknown;
    server = await legacyServer((b, res) => {
      if (b.method === 'tools/call') {
        callId = b.id;
        call = res;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(
          `data: ${JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'elicitation/create', params: { mode: 'url', message: 'Sign in', url: 'https://example.com/x', elicitationId: 'e' } })}\n\n`,
        );
        return;
      }
      if (b.id === 7) {
        answer = b.result;
        res.writeHead(202);
        res.end();
        call?.end(`data: ${JSON.stringify(text(callId, 'gave up'))}\n\n`);
        return;
      }
      res.writeHead(405);
      res.end();
    });
    const c = new McpClient({
      server: server.url,
      resolvers: [scriptedResolver({ q1: { action: 'accept' } })],
    });
    const o = await c.callTool('t');
    expect(o).toMatchObject({
      status: 'needs_person',
      pending: [{ key: 'q1', kind: 'elicitation.url', why: 'url' }],
    });
    expect(answer).toEqual({ action: 'cancel' });
    await c.close();
  });
});

describe('a server that floods a call with requests (HTTP)', () => {
  it('3 questions at once are put to a person one at a time, in order', async () => {
    let callId: number | undefined;
    let call: ServerResponse | undefined;
    const got: unknown[] = [];
    server = await legacyServer((b, res) => {
      if (b.method === 'tools/call') {
        callId = b.id;
        call = res;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (let id = 1; id <= 3; id++)
          res.write(
            `data: ${JSON.stringify({ jsonrpc: '2.0', id, method: 'elicitation/create', params: { message: `n${id}`, requestedSchema: { type: 'object', properties: {} } } })}\n\n`,
          );
        return;
      }
      if (b.id !== undefined && b.method === undefined) {
        got.push(b.result);
        res.writeHead(202);
        res.end();
        if (got.length === 3) call?.end(`data: ${JSON.stringify(text(callId, 'done'))}\n\n`);
        return;
      }
      res.writeHead(405);
      res.end();
    });
    let open = 0;
    const order: string[] = [];
    const c = new McpClient({
      server: server.url,
      resolvers: [
        {
          name: 'person',
          kinds: ['elicitation.form'],
          person: true,
          accepts: () => true,
          resolve: async (q) => {
            open++;
            order.push(`${q.key} opened with ${open} open`);
            await new Promise((resolve) => setImmediate(resolve));
            open--;
            return { action: 'accept', content: {} };
          },
        },
      ],
    });
    expect(await c.callTool('t')).toMatchObject({ status: 'complete' });
    expect(order).toEqual(['q1 opened with 1 open', 'q2 opened with 1 open', 'q3 opened with 1 open']);
    await c.close();
  });

  it('40 questions at once: the 33rd refused, the call ends as a protocol error', async () => {
    const refused = deferred<{ message?: string } | undefined>();
    server = await legacyServer((b, res) => {
      if (b.method === 'tools/call') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (let id = 1; id <= 40; id++)
          res.write(
            `data: ${JSON.stringify({ jsonrpc: '2.0', id, method: 'elicitation/create', params: { message: `n${id}`, requestedSchema: { type: 'object', properties: {} } } })}\n\n`,
          );
        return;
      }
      if (b.id !== undefined && b.method === undefined) {
        if (b.id === 33) refused.resolve((b as { error?: { message?: string } }).error);
        res.writeHead(202);
        res.end();
        return;
      }
      res.writeHead(405);
      res.end();
    });
    // A person who never answers: every question stays open until the call withdraws it.
    const started: string[] = [];
    const c = new McpClient({
      server: server.url,
      resolvers: [
        {
          name: 'slow person',
          kinds: ['elicitation.form'],
          person: true,
          accepts: () => true,
          resolve: (q, ctx) =>
            new Promise((_, reject) => {
              started.push(q.key);
              ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
            }),
        },
      ],
    });
    const o = await c.callTool('t');
    expect(o).toMatchObject({
      status: 'protocol_error',
      message: 'the server asked more than 32 questions in one round',
    });
    // Nothing past the first was ever put to the person (the flood may end the call before even that one).
    expect(started.length).toBeLessThanOrEqual(1);
    // The 33rd got its error as its own POST (the call's stream, and what was left on it, is dropped).
    expect((await refused.promise)?.message).toBe('the server asked more than 32 questions in one round');
    await c.close();
  });
});
