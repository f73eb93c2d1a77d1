// McpClient.round() against a 2025-era server, as the gateway will use it: the server asks mid-call, so its call is
// held open between rounds. Round 1 sends the call and returns the server's requests as input_required, with a
// handle to the held call as requestState; the next round answers them and returns what comes next. A handle is its
// holder's only, good for one round, and dies with its time limit, which cancels the upstream call; each holder
// may hold its share of calls.
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  capabilitiesFor,
  HeldCallError,
  McpClient,
  type RoundResult,
  StdioClientTransport,
} from '../../src/client/index.js';
import type { InputRequiredResult } from '../../src/protocol/index.js';
import { ROOT } from './helpers.js';
import { type LegacyStreamServer, startLegacyStreamServer } from './legacy-stream-server.js';
import { type LegacySdkServer, startLegacySdkServer } from './sdk-legacy-server.js';

const capabilities = capabilitiesFor(['elicitation.form']);
const yes = { q1: { action: 'accept', content: { confirm: true } } };
const confirmDelete = (path: string) => ({ name: 'confirm_delete', arguments: { path } });

function asked(r: RoundResult): InputRequiredResult & { requestState: string } {
  expect(r.resultType).toBe('input_required');
  expect(typeof (r as InputRequiredResult).requestState).toBe('string');
  return r as InputRequiredResult & { requestState: string };
}

/** The text of a complete tools/call result. */
function textOf(r: RoundResult): string {
  expect(r.resultType).toBe('complete');
  return String((r as { content?: Array<{ text?: unknown }> }).content?.[0]?.text);
}

let server: LegacySdkServer | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await server?.close();
  server = undefined;
});

const toolCalls = () => server?.requests.filter((r) => r === 'POST tools/call session').length;

describe('round() against the official SDK’s 2025 server: the call held across rounds', () => {
  it('round 1 holds the call and returns its question; round 2 answers it and returns the result', async () => {
    server = await startLegacySdkServer();
    const client = new McpClient({ server: server.url, capabilities });
    const first = asked(await client.round('tools/call', confirmDelete('/tmp/a'), { holder: 'alice' }));
    expect(client.generation).toBe('legacy');
    expect(first.inputRequests).toEqual({
      q1: {
        method: 'elicitation/create',
        params: {
          mode: 'form',
          message: 'Delete /tmp/a?',
          requestedSchema: {
            type: 'object',
            properties: { confirm: { type: 'boolean' } },
            required: ['confirm'],
          },
        },
      },
    });
    // 32 random bytes, and nothing of the call in it.
    expect(first.requestState).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // One tools/call went upstream and is still open: nothing answered its question.
    expect(toolCalls()).toBe(1);
    expect(server.requests).not.toContain('POST response session');
    const done = await client.round('tools/call', confirmDelete('/tmp/a'), {
      holder: 'alice',
      requestState: first.requestState,
      inputResponses: yes,
    });
    expect(done).toEqual({ resultType: 'complete', content: [{ type: 'text', text: 'deleted /tmp/a' }] });
    expect(toolCalls()).toBe(1);
    // The handle was good for that round only.
    const again = client.round('tools/call', confirmDelete('/tmp/a'), {
      holder: 'alice',
      requestState: first.requestState,
      inputResponses: yes,
    });
    await expect(again).rejects.toBeInstanceOf(HeldCallError);
    await expect(again).rejects.toMatchObject({
      code: 'ERR_HELD_CALL_USED',
      message:
        'requestState was already used: a held call’s requestState is good for one round; send the one its latest input_required gave',
    });
    await client.close();
  });

  it('a call that asks twice: each question its own round, each round a new handle', async () => {
    server = await startLegacySdkServer();
    const client = new McpClient({ server: server.url, capabilities });
    const params = { name: 'rename_file', arguments: { path: '/tmp/b' } };
    const first = asked(await client.round('tools/call', params));
    expect(first.inputRequests?.q1).toMatchObject({ params: { message: 'New name for /tmp/b?' } });
    const second = asked(
      await client.round('tools/call', params, {
        requestState: first.requestState,
        inputResponses: { q1: { action: 'accept', content: { name: 'c' } } },
      }),
    );
    expect(Object.keys(second.inputRequests ?? {})).toEqual(['q2']);
    expect(second.inputRequests?.q2).toMatchObject({ params: { message: 'Rename /tmp/b to c?' } });
    expect(second.requestState).not.toBe(first.requestState);
    const done = await client.round('tools/call', params, {
      requestState: second.requestState,
      inputResponses: { q2: { action: 'accept', content: { ok: true } } },
    });
    expect(done).toMatchObject({ resultType: 'complete', content: [{ text: 'renamed /tmp/b to c' }] });
    await client.close();
  });

  it('a handle is its holder’s only: another holder learns nothing, and the call stays held for its own', async () => {
    server = await startLegacySdkServer();
    const client = new McpClient({ server: server.url, capabilities });
    const first = asked(await client.round('tools/call', confirmDelete('/tmp/c'), { holder: 'alice' }));
    const stolen = client.round('tools/call', confirmDelete('/tmp/c'), {
      holder: 'mallory',
      requestState: first.requestState,
      inputResponses: { q1: { action: 'accept', content: { confirm: true } } },
    });
    await expect(stolen).rejects.toMatchObject({
      name: 'HeldCallError',
      code: 'ERR_HELD_CALL_UNKNOWN',
      message:
        'requestState names no call held here for this holder (a held call answers only to the holder that started it)',
    });
    // A handle nobody was ever given reads the same.
    await expect(
      client.round('tools/call', confirmDelete('/tmp/c'), {
        holder: 'mallory',
        requestState: 'x'.repeat(43),
      }),
    ).rejects.toMatchObject({ code: 'ERR_HELD_CALL_UNKNOWN' });
    expect(server.requests).not.toContain('POST response session');
    const done = await client.round('tools/call', confirmDelete('/tmp/c'), {
      holder: 'alice',
      requestState: first.requestState,
      inputResponses: yes,
    });
    expect(done).toMatchObject({ content: [{ text: 'deleted /tmp/c' }] });
    await client.close();
  });

  it('answers are checked before the handle is spent: a round missing one can be sent again, corrected', async () => {
    server = await startLegacySdkServer();
    const client = new McpClient({ server: server.url, capabilities });
    const first = asked(await client.round('tools/call', confirmDelete('/tmp/d')));
    const round = (params: Record<string, unknown>, inputResponses: Record<string, unknown>) =>
      client.round('tools/call', params, { requestState: first.requestState, inputResponses });
    await expect(round(confirmDelete('/tmp/d'), {})).rejects.toMatchObject({
      code: 'ERR_INVALID_ARGUMENT',
      message: 'round: inputResponses has no answer (an object) to "q1" (elicitation/create)',
    });
    await expect(round(confirmDelete('/tmp/d'), { q1: { content: { confirm: true } } })).rejects.toThrow(
      'round: inputResponses.q1 answers elicitation/create without an action of accept, decline or cancel',
    );
    await expect(round({ name: 'rename_file', arguments: { path: '/tmp/d' } }, yes)).rejects.toThrow(
      'round: requestState holds a tools/call of "confirm_delete", not a tools/call of "rename_file"',
    );
    expect(server.requests).not.toContain('POST response session');
    expect(await round(confirmDelete('/tmp/d'), yes)).toMatchObject({
      content: [{ text: 'deleted /tmp/d' }],
    });
    await client.close();
  });

  it('past its time limit a held call is dropped: the upstream call is cancelled and its handle refused', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    server = await startLegacySdkServer();
    const client = new McpClient({ server: server.url, capabilities, heldCalls: { holdMs: 5000 } });
    const first = asked(await client.round('tools/call', confirmDelete('/tmp/e'), { holder: 'alice' }));
    vi.advanceTimersByTime(4999);
    expect(server.cancelled.paths).toEqual([]);
    vi.advanceTimersByTime(1);
    // notifications/cancelled reached the server, which aborted the tool's call.
    await server.cancelled.of('/tmp/e');
    await expect(
      client.round('tools/call', confirmDelete('/tmp/e'), {
        holder: 'alice',
        requestState: first.requestState,
        inputResponses: yes,
      }),
    ).rejects.toMatchObject({
      name: 'HeldCallError',
      code: 'ERR_HELD_CALL_EXPIRED',
      message:
        'requestState names a held call that expired: no round came back for it within 5 s, so its upstream call was cancelled',
    });
    await client.close();
  });
});

describe('round() against a 2025 server that asks on each call’s own stream: calls held side by side', () => {
  let streams: LegacyStreamServer | undefined;
  afterEach(async () => {
    await streams?.close();
    streams = undefined;
  });
  const upstreamCalls = () => streams?.calls('tools/call').length;

  it('two holders’ calls held at once: each answer goes to its own call', async () => {
    streams = await startLegacyStreamServer();
    const client = new McpClient({ server: streams.url, capabilities });
    const alice = asked(await client.round('tools/call', confirmDelete('/a'), { holder: 'alice' }));
    const bob = asked(await client.round('tools/call', confirmDelete('/b'), { holder: 'bob' }));
    expect(bob.inputRequests?.q1).toMatchObject({ params: { message: 'Delete /b?' } });
    const [b, a] = await Promise.all([
      client.round('tools/call', confirmDelete('/b'), {
        holder: 'bob',
        requestState: bob.requestState,
        inputResponses: { q1: { action: 'decline' } },
      }),
      client.round('tools/call', confirmDelete('/a'), {
        holder: 'alice',
        requestState: alice.requestState,
        inputResponses: { q1: { action: 'accept', content: {} } },
      }),
    ]);
    expect(textOf(a)).toBe('/a: {"action":"accept","content":{}}');
    expect(textOf(b)).toBe('/b: {"action":"decline"}');
    await client.close();
  });

  it('each holder may hold its share of calls: past it, the next call is refused with 429 before it is sent', async () => {
    streams = await startLegacyStreamServer();
    const client = new McpClient({ server: streams.url, capabilities, heldCalls: { maxPerHolder: 1 } });
    const alice = asked(await client.round('tools/call', confirmDelete('/f'), { holder: 'alice' }));
    const refused = client.round('tools/call', confirmDelete('/g'), { holder: 'alice' });
    await expect(refused).rejects.toMatchObject({
      name: 'RoundRefused',
      code: -32600,
      httpStatus: 429,
      httpHeaders: { 'retry-after': expect.stringMatching(/^\d+$/) },
      message: expect.stringMatching(
        /^Too many held calls: 1 calls of this holder are already open \(limit 1\); finish or abandon them, or retry after \d+ s$/,
      ),
    });
    expect(upstreamCalls()).toBe(1);
    // Another holder is not held back by Alice.
    asked(await client.round('tools/call', confirmDelete('/h'), { holder: 'bob' }));
    // Once Alice's call ends, her place is free again.
    await client.round('tools/call', confirmDelete('/f'), {
      holder: 'alice',
      requestState: alice.requestState,
      inputResponses: yes,
    });
    asked(await client.round('tools/call', confirmDelete('/g'), { holder: 'alice' }));
    await client.close();
  });

  it('the client holds at most maxTotal calls, all holders together: one more is refused as busy', async () => {
    streams = await startLegacyStreamServer();
    const client = new McpClient({ server: streams.url, capabilities, heldCalls: { maxTotal: 1 } });
    asked(await client.round('tools/call', confirmDelete('/p'), { holder: 'alice' }));
    await expect(client.round('tools/call', confirmDelete('/q'), { holder: 'bob' })).rejects.toMatchObject({
      name: 'McpError',
      code: -32603,
      message: 'Busy: 1 calls to 2025 servers are already open here; try again later',
    });
    expect(upstreamCalls()).toBe(1);
    await client.close();
  });

  it('heldCalls limits that are not positive are named', () => {
    const make = (heldCalls: Record<string, number>) => () =>
      new McpClient({ server: 'http://127.0.0.1:1/mcp', heldCalls });
    expect(make({ maxPerHolder: 0 })).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_OPTION',
        message: 'heldCalls.maxPerHolder must be a positive integer, got 0',
      }),
    );
    expect(make({ maxTotal: 2.5 })).toThrow('heldCalls.maxTotal must be a positive integer, got 2.5');
    expect(make({ holdMs: -1 })).toThrow(
      'heldCalls.holdMs must be a positive number of milliseconds, got -1',
    );
  });

  it('calls that start at once: the one past its holder’s share is refused before it is sent', async () => {
    streams = await startLegacyStreamServer();
    // A fresh client does not know yet that the server is a 2025 one: both calls start before either asks. Each takes
    // its place as it starts, so the second is refused before the server ever sees it (nothing to cancel).
    const client = new McpClient({ server: streams.url, capabilities, heldCalls: { maxPerHolder: 1 } });
    const rounds = await Promise.allSettled(
      ['/i', '/j'].map((p) => client.round('tools/call', confirmDelete(p), { holder: 'alice' })),
    );
    expect(rounds.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const lost = rounds.findIndex((r) => r.status === 'rejected');
    expect((rounds[lost] as PromiseRejectedResult).reason).toMatchObject({
      name: 'RoundRefused',
      httpStatus: 429,
    });
    expect(upstreamCalls()).toBe(1);
    expect(streams.calls('tools/call').map((c) => c.body.params.arguments.path)).toEqual([
      ['/i', '/j'][1 - lost],
    ]);
    expect(streams.cancelled).toEqual([]);
    await client.close();
  });

  it('close() drops every held call: its upstream call is cancelled', async () => {
    streams = await startLegacyStreamServer();
    const client = new McpClient({ server: streams.url, capabilities });
    asked(await client.round('tools/call', confirmDelete('/k')));
    const id = streams.calls('tools/call')[0]?.body.id;
    await client.close();
    expect(await streams.firstCancel).toBe(id);
  });

  it('a round that ends before the server asks or answers (its signal, its time limit) cancels the upstream call', async () => {
    streams = await startLegacyStreamServer();
    const client = new McpClient({ server: streams.url, capabilities });
    const stop = new AbortController();
    const round = client.round('tools/call', confirmDelete('/silent'), { signal: stop.signal });
    const sent = await streams.firstCall;
    stop.abort(new Error('the caller went away'));
    await expect(round).rejects.toMatchObject({ name: 'RequestAborted', message: 'the caller went away' });
    expect(await streams.firstCancel).toBe(sent);
    await client.close();
  });

  it('timeoutMs bounds a round: past it the round ends as aborted and the upstream call is cancelled', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    streams = await startLegacyStreamServer();
    const client = new McpClient({ server: streams.url, capabilities });
    const round = client.round('tools/call', confirmDelete('/silent'), { timeoutMs: 3000 });
    const sent = await streams.firstCall;
    vi.advanceTimersByTime(3000);
    await expect(round).rejects.toMatchObject({
      name: 'RequestAborted',
      message: 'request timed out after 3000 ms',
    });
    expect(await streams.firstCancel).toBe(sent);
    await client.close();
  });

  it('a question sent outside the calls’ streams while two are open goes to neither: it is refused', async () => {
    // The official SDK asks on the session's GET stream, which names no call: with two calls open, which one asked?
    server = await startLegacySdkServer();
    const client = new McpClient({ server: server.url, capabilities });
    const first = asked(await client.round('tools/call', confirmDelete('/tmp/m'), { holder: 'alice' }));
    const second = await client.round('tools/call', confirmDelete('/tmp/n'), { holder: 'bob' });
    // Bob's call got its question refused (the SDK's tool saw an error), rather than it reaching Alice's call.
    expect(second).toMatchObject({ resultType: 'complete', isError: true });
    expect(textOf(second)).toMatch(/cannot tell which one this request belongs to/);
    const done = await client.round('tools/call', confirmDelete('/tmp/m'), {
      holder: 'alice',
      requestState: first.requestState,
      inputResponses: yes,
    });
    expect(textOf(done)).toBe('deleted /tmp/m');
    await client.close();
  });
});

describe('round() against a 2025 server over stdio', () => {
  it('the SDK’s stdio server: the call held, round 2 answers it', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [join(ROOT, 'test/client/sdk-legacy-stdio.mjs')],
      stderr: 'ignore',
    });
    const client = new McpClient({ server: transport, capabilities });
    const first = asked(await client.round('tools/call', confirmDelete('/tmp/l')));
    expect(first.inputRequests?.q1).toMatchObject({ method: 'elicitation/create' });
    const done = await client.round('tools/call', confirmDelete('/tmp/l'), {
      requestState: first.requestState,
      inputResponses: yes,
    });
    expect(done).toMatchObject({ resultType: 'complete', content: [{ text: 'deleted /tmp/l' }] });
    await client.close();
  });

  /** A 2025-06-18 server that, on tools/call, sends five requests in one write, then reports every answer it got. */
  const ASKER = `
    const rl = require('node:readline').createInterface({ input: process.stdin });
    const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
    const got = {};
    let call;
    rl.on('line', (l) => {
      const m = JSON.parse(l);
      if (m.method === 'server/discover') return send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } });
      if (m.method === 'initialize') return send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'asker', version: '1' } } });
      if (m.method === 'tools/call') {
        call = m.id;
        const form = (message) => ({ message, requestedSchema: { type: 'object', properties: {} } });
        process.stdout.write([
          { jsonrpc: '2.0', id: 'ping', method: 'ping' },
          { jsonrpc: '2.0', id: 'list', method: 'tools/list' },
          { jsonrpc: '2.0', id: 'model', method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } },
          { jsonrpc: '2.0', id: 'e1', method: 'elicitation/create', params: form('Name?') },
          { jsonrpc: '2.0', id: 'e2', method: 'elicitation/create', params: form('Sure?') },
        ].map((r) => JSON.stringify(r) + '\\n').join(''));
        return;
      }
      if (m.id !== undefined && m.method === undefined) {
        got[m.id] = m.result ?? m.error;
        if ('e1' in got && 'e2' in got) send({ jsonrpc: '2.0', id: call, result: { content: [{ type: 'text', text: JSON.stringify(got) }] } });
      }
    });`;
  const asker = () =>
    new StdioClientTransport({ command: process.execPath, args: ['-e', ASKER], stderr: 'ignore' });

  it('what a 2025 server asks becomes 2026 InputRequests; what none may ask is refused to the server at once', async () => {
    const client = new McpClient({ server: asker(), capabilities });
    const first = asked(await client.round('tools/call', { name: 'ask', arguments: {} }));
    // 2025-06-18 has no elicitation mode: the form mode is said out loud for a 2026 caller.
    expect(first.inputRequests).toEqual({
      q1: {
        method: 'elicitation/create',
        params: { mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: {} } },
      },
      q2: {
        method: 'elicitation/create',
        params: { mode: 'form', message: 'Sure?', requestedSchema: { type: 'object', properties: {} } },
      },
    });
    const done = await client.round(
      'tools/call',
      { name: 'ask', arguments: {} },
      {
        requestState: first.requestState,
        inputResponses: { q1: { action: 'accept', content: { name: 'Ada' } }, q2: { action: 'decline' } },
      },
    );
    const got = JSON.parse(textOf(done));
    expect(got).toEqual({
      ping: {},
      list: { code: -32601, message: 'method tools/list is not supported by this client' },
      model: {
        code: -32602,
        message: 'inputRequests["q1"] asks for sampling, which this client did not declare',
      },
      e1: { action: 'accept', content: { name: 'Ada' } },
      e2: { action: 'decline' },
    });
    await client.close();
  });

  it('questions past maxQuestionsPerRound before an answer are refused to the server, not held', async () => {
    const client = new McpClient({ server: asker(), capabilities, mrtr: { maxQuestionsPerRound: 1 } });
    const first = asked(await client.round('tools/call', { name: 'ask', arguments: {} }));
    expect(Object.keys(first.inputRequests ?? {})).toEqual(['q1']);
    const done = await client.round(
      'tools/call',
      { name: 'ask', arguments: {} },
      {
        requestState: first.requestState,
        inputResponses: { q1: { action: 'accept', content: {} } },
      },
    );
    const got = JSON.parse(textOf(done));
    expect(got.e2).toEqual({
      code: -32603,
      message: 'the server asked more than 1 questions before an answer',
    });
    await client.close();
  });
});
