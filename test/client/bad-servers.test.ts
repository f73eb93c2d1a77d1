// The driver against servers that misbehave: it never hangs, never loops, and says what went wrong.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { McpClient, type MrtrEvent, scriptedResolver } from '../../src/client/index.js';
import { META_RETRY_AFTER_MS } from '../../src/protocol/index.js';
import { deferred, track } from '../helpers/signals.js';
import {
  askAgain,
  confirmForm,
  type FakeServer,
  fakeServer,
  json,
  result,
  sse,
  toolCallServer,
} from './helpers.js';

let server: FakeServer | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await server?.close();
  server = undefined;
});

const yes = () => scriptedResolver({}, { fallback: () => ({ action: 'accept', content: { ok: true } }) });

function client(url: string, extra: Partial<ConstructorParameters<typeof McpClient>[0]> = {}) {
  return new McpClient({ server: url, resolvers: [yes()], ...extra });
}

describe('bad input from the server', () => {
  it('answers input_required forever: stops at the round cap after exactly N retries, cleanly', async () => {
    server = await toolCallServer((s, res) => {
      askAgain(res, s.body.id, 'st', 'again');
    });
    const c = client(server.url);
    const outcome = await c.callTool('loop', {}, { maxRounds: 3 });
    expect(outcome.status).toBe('round_cap');
    expect(outcome.rounds).toBe(4);
    expect(server.calls('tools/call')).toHaveLength(4); // 1 call + 3 retries, not one more
    if (outcome.status === 'round_cap') expect(outcome.pending.map((p) => p.key)).toEqual(['again']);
    const def = await client(server.url).callTool('loop', {});
    expect(def.status).toBe('round_cap');
    expect(server.calls('tools/call')).toHaveLength(4 + 11); // default cap: 10 retries
    await c.close();
  });

  it('round cap 0 means no retry at all', async () => {
    server = await toolCallServer((s, res) => {
      json(res, result(s.body.id, { resultType: 'input_required', inputRequests: { a: confirmForm() } }));
    });
    const outcome = await client(server.url).callTool('x', {}, { maxRounds: 0 });
    expect(outcome).toMatchObject({ status: 'round_cap', rounds: 1, maxRounds: 0 });
  });

  it('answers with an empty inputRequests and no requestState: protocol error, no retry', async () => {
    server = await toolCallServer((s, res) => {
      json(res, result(s.body.id, { resultType: 'input_required', inputRequests: {} }));
    });
    const outcome = await client(server.url).callTool('x');
    expect(outcome).toMatchObject({ status: 'protocol_error', rounds: 1 });
    if (outcome.status === 'protocol_error')
      expect(outcome.message).toMatch(/neither input requests nor requestState/);
    expect(server.calls('tools/call')).toHaveLength(1);
  });

  it('asks for a kind the client did not declare: protocol error, nothing answered', async () => {
    server = await toolCallServer((s, res) => {
      json(
        res,
        result(s.body.id, {
          resultType: 'input_required',
          inputRequests: {
            ok: confirmForm(),
            model: { method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } },
          },
        }),
      );
    });
    const c = client(server.url);
    expect(c.capabilities).toEqual({
      elicitation: { form: {}, url: {} },
      extensions: { 'io.modelcontextprotocol/tasks': {} },
    });
    const outcome = await c.callTool('x');
    expect(outcome.status).toBe('protocol_error');
    if (outcome.status === 'protocol_error')
      expect(outcome.message).toMatch(/sampling, which this client did not declare/);
    expect(server.calls('tools/call')).toHaveLength(1);
  });

  it('asks for URL mode when only form mode is declared: protocol error', async () => {
    server = await toolCallServer((s, res) => {
      const url = {
        method: 'elicitation/create',
        params: { mode: 'url', message: 'go', url: 'https://x.example', elicitationId: 'e' },
      };
      json(res, result(s.body.id, { resultType: 'input_required', inputRequests: { u: url } }));
    });
    const c = client(server.url, { capabilities: { elicitation: {} } });
    const outcome = await c.callTool('x');
    expect(outcome.status).toBe('protocol_error');
  });

  it('sends a non-string requestState: protocol error', async () => {
    for (const bad of [42, null, { s: 1 }, ['a']]) {
      server = await toolCallServer((s, res) => {
        askAgain(res, s.body.id, bad);
      });
      const outcome = await client(server.url).callTool('x');
      expect(outcome.status, JSON.stringify(bad)).toBe('protocol_error');
      if (outcome.status === 'protocol_error')
        expect(outcome.message).toMatch(/requestState must be a string/);
      expect(server.calls('tools/call')).toHaveLength(1);
      await server.close();
      server = undefined;
    }
  });

  it('sends garbage JSON: protocol error', async () => {
    server = await toolCallServer((_s, res) => {
      json(res, '{"jsonrpc":"2.0","id":');
    });
    const outcome = await client(server.url).callTool('x');
    expect(outcome).toMatchObject({ status: 'protocol_error', rounds: 1 });
  });

  it('sends valid JSON that is not a JSON-RPC response, or answers another id: protocol error', async () => {
    for (const body of [
      [1, 2],
      { jsonrpc: '2.0', id: 999_999, result: { resultType: 'complete', content: [] } },
      { hello: 1 },
    ]) {
      server = await toolCallServer((_s, res) => {
        json(res, body);
      });
      const outcome = await client(server.url).callTool('x');
      expect(outcome.status, JSON.stringify(body)).toBe('protocol_error');
      await server.close();
      server = undefined;
    }
  });

  it('sends an SSE stream that ends before the response: protocol error, no hang', async () => {
    server = await toolCallServer((s, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(
        `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } })}\n\n`,
      );
      res.end(`data: {"jsonrpc":"2.0","id":${s.body.id},"res`); // cut mid-event
    });
    const outcome = await client(server.url).callTool('x');
    expect(outcome.status).toBe('protocol_error');
    if (outcome.status === 'protocol_error') expect(outcome.message).toMatch(/ended before the response/);
  });

  it('drops the connection in the middle of an SSE stream: transport error, no hang', async () => {
    server = await toolCallServer((_s, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // Gone as soon as the first bytes are on their way.
      res.write(': keep-alive\n\n', () => res.socket?.destroy());
    });
    const outcome = await client(server.url).callTool('x');
    expect(['transport_error', 'protocol_error']).toContain(outcome.status);
  });

  it('never answers: the total timeout ends the call', async () => {
    const arrived = deferred();
    server = await toolCallServer(() => {
      arrived.resolve(); // and never respond
    });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const pending = client(server.url).callTool('x', {}, { timeoutMs: 300 });
    const outcome = track(pending);
    await arrived.promise;
    await vi.advanceTimersByTimeAsync(299);
    expect(outcome.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await pending).toMatchObject({ status: 'timeout', rounds: 1, timeoutMs: 300 });
  });

  it('never answers the second round: the timeout covers the whole call', async () => {
    server = await toolCallServer((s, res) => {
      if (s.body.params.inputResponses) return; // hang
      json(res, result(s.body.id, { resultType: 'input_required', inputRequests: { ok: confirmForm() } }));
    });
    const outcome = await client(server.url).callTool('x', {}, { timeoutMs: 300 });
    expect(outcome).toMatchObject({ status: 'timeout', rounds: 2 });
  });

  it('an unknown resultType is a protocol error; a missing one means complete', async () => {
    server = await toolCallServer((s, res) => {
      const r =
        s.body.params.name === 'odd'
          ? { resultType: 'promise', content: [] }
          : { content: [{ type: 'text', text: 'hi' }] };
      json(res, result(s.body.id, r));
    });
    const c = client(server.url);
    const odd = await c.callTool('odd');
    expect(odd.status).toBe('protocol_error');
    if (odd.status === 'protocol_error') expect(odd.message).toMatch(/unknown resultType "promise"/);
    const plain = await c.callTool('plain');
    expect(plain).toMatchObject({
      status: 'complete',
      rounds: 1,
      result: { content: [{ type: 'text', text: 'hi' }] },
    });
  });

  it('an input request with an unknown method or a malformed form is a protocol error', async () => {
    for (const bad of [
      { method: 'ping' },
      { method: 'elicitation/create', params: { message: 'x' } },
      { method: 'elicitation/create', params: { message: 'x', mode: 'telepathy' } },
      'not an object',
    ]) {
      server = await toolCallServer((s, res) => {
        json(res, result(s.body.id, { resultType: 'input_required', inputRequests: { k: bad } }));
      });
      const outcome = await client(server.url).callTool('x');
      expect(outcome.status, JSON.stringify(bad)).toBe('protocol_error');
      await server.close();
      server = undefined;
    }
  });

  it('sends a JSON-RPC request on the response stream: protocol error', async () => {
    server = await toolCallServer((_s, res) => {
      sse(
        res,
        [{ jsonrpc: '2.0', id: 'srv-1', method: 'elicitation/create', params: { message: 'old style' } }],
        false,
      );
    });
    const outcome = await client(server.url).callTool('x');
    expect(outcome.status).toBe('protocol_error');
  });

  it('answers HTTP 500 without a body, or refuses the connection: transport error', async () => {
    server = await toolCallServer((_s, res) => {
      res.writeHead(500);
      res.end();
    });
    const outcome = await client(server.url).callTool('x');
    expect(outcome).toMatchObject({ status: 'transport_error', httpStatus: 500 });
    const url = server.url;
    await server.close();
    server = undefined;
    const refused = await client(url).callTool('x');
    expect(refused.status).toBe('transport_error');
  });

  it('a JSON-RPC error (even with HTTP 400) is a server_error with the code and message', async () => {
    server = await toolCallServer((s, res) => {
      json(res, { jsonrpc: '2.0', id: s.body.id, error: { code: -32602, message: 'Unknown tool: x' } }, 400);
    });
    const outcome = await client(server.url).callTool('x');
    expect(outcome).toMatchObject({
      status: 'server_error',
      error: { code: -32602, message: 'Unknown tool: x' },
    });
  });

  it('input_required on a method without MRTR is a protocol error', async () => {
    server = await fakeServer((s, res) => {
      json(res, result(s.body.id, { resultType: 'input_required', inputRequests: { ok: confirmForm() } }));
    });
    await expect(client(server.url).listTools()).rejects.toThrow(/does not support it/);
  });
});

describe('state-only rounds', () => {
  it('retries with a short bounded backoff, echoing the state and sending no inputResponses', async () => {
    let n = 0;
    server = await toolCallServer((s, res) => {
      n++;
      if (n <= 3) json(res, result(s.body.id, { resultType: 'input_required', requestState: `wait-${n}` }));
      else json(res, result(s.body.id, { resultType: 'complete', content: [] }));
    });
    const events: MrtrEvent[] = [];
    const outcome = await client(server.url).callTool(
      'slow',
      {},
      { onEvent: (e) => events.push(e), backoff: { initialMs: 20, maxMs: 50 } },
    );
    expect(outcome).toMatchObject({ status: 'complete', rounds: 4 });
    const calls = server.calls('tools/call');
    expect(calls.map((c) => c.body.params.requestState)).toEqual([undefined, 'wait-1', 'wait-2', 'wait-3']);
    for (const c of calls) expect(c.body.params).not.toHaveProperty('inputResponses');
    const delays = events.flatMap((e) => (e.type === 'retrying' ? [e.delayMs] : []));
    expect(delays).toEqual([20, 40, 50]);
  });

  it('honours the server retry hint (and caps it)', async () => {
    let n = 0;
    server = await toolCallServer((s, res) => {
      n++;
      if (n === 1)
        json(
          res,
          result(s.body.id, {
            resultType: 'input_required',
            requestState: 's',
            _meta: { [META_RETRY_AFTER_MS]: 250 },
          }),
        );
      else if (n === 2)
        json(
          res,
          result(s.body.id, {
            resultType: 'input_required',
            requestState: 's',
            _meta: { [META_RETRY_AFTER_MS]: 99_999_999 },
          }),
        );
      else json(res, result(s.body.id, { resultType: 'complete', content: [] }));
    });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const events: MrtrEvent[] = [];
    const retrying = [deferred(), deferred()];
    const pending = client(server.url).callTool(
      'slow',
      {},
      {
        onEvent: (e) => {
          events.push(e);
          if (e.type === 'retrying') retrying[e.round - 2]?.resolve();
        },
        maxRetryAfterMs: 400,
      },
    );
    const roundsSent = () => events.filter((e) => e.type === 'round').length;
    // The hint's 250 ms: the next round goes out then, not before.
    await retrying[0]?.promise;
    await vi.advanceTimersByTimeAsync(249);
    expect(roundsSent()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(roundsSent()).toBe(2);
    // A hint beyond maxRetryAfterMs waits the cap.
    await retrying[1]?.promise;
    await vi.advanceTimersByTimeAsync(399);
    expect(roundsSent()).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(roundsSent()).toBe(3);
    const outcome = await pending;
    expect(outcome.status).toBe('complete');
    const delays = events.flatMap((e) => (e.type === 'retrying' ? [e.delayMs] : []));
    expect(delays).toEqual([250, 400]);
  });
});
