// The MRTR round pipeline over real HTTP: state sealing, answer filtering, validation, caps and capabilities.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpEndpoint } from '../../src/server/index.js';
import { accept, META, mcp } from '../helpers/mcp-http.js';
import { slowCalls, testServer } from './test-server.js';

let endpoint: HttpEndpoint;
let url: string;
beforeAll(async () => {
  endpoint = await testServer().listen({
    port: 0,
    // Tests name the caller in a header; a real deployment verifies a token here.
    authenticate: (req) => {
      const user = req.headers['x-test-user'];
      return typeof user === 'string' ? { subject: user, issuer: 'test' } : undefined;
    },
  });
  url = endpoint.url;
});
afterAll(() => endpoint.close());

const ok = accept({ ok: true });

async function firstRound(item = 'deploy', headers: Record<string, string> = {}) {
  const reply = await mcp(url, 'tools/call', { name: 'confirm', arguments: { item } }, { headers });
  expect(reply.response.result?.resultType).toBe('input_required');
  return reply.response.result as { requestState: string; inputRequests: Record<string, unknown> };
}

describe('a two-round flow', () => {
  it('asks, then completes with the answer and the byte-exact state', async () => {
    const r1 = await firstRound();
    expect(Object.keys(r1.inputRequests)).toEqual(['confirm']);
    expect(typeof r1.requestState).toBe('string');
    const r2 = await mcp(url, 'tools/call', {
      name: 'confirm',
      arguments: { item: 'deploy' },
      inputResponses: { confirm: ok },
      requestState: r1.requestState,
    });
    expect(r2.response.result).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: 'done deploy in round 1' }],
    });
  });

  it('ignores answers that arrive without any requestState (nothing proves they were asked)', async () => {
    const r = await mcp(url, 'tools/call', {
      name: 'confirm',
      arguments: { item: 'x' },
      inputResponses: { confirm: ok },
    });
    expect(r.response.result?.resultType).toBe('input_required');
  });

  it('ignores answers to keys that were not asked, and re-asks when the needed one is missing', async () => {
    const r1 = await firstRound();
    const extra = await mcp(url, 'tools/call', {
      name: 'confirm',
      arguments: { item: 'deploy' },
      inputResponses: { confirm: ok, surprise: accept({ admin: true }), junk: 42 },
      requestState: r1.requestState,
    });
    expect(extra.response.result?.resultType).toBe('complete');
    const missing = await mcp(url, 'tools/call', {
      name: 'confirm',
      arguments: { item: 'deploy' },
      inputResponses: { surprise: ok },
      requestState: r1.requestState,
    });
    expect(missing.response.result?.resultType).toBe('input_required');
  });

  it('passes decline through to the handler', async () => {
    const r1 = await firstRound();
    const r2 = await mcp(url, 'tools/call', {
      name: 'confirm',
      arguments: { item: 'deploy' },
      inputResponses: { confirm: { action: 'decline' } },
      requestState: r1.requestState,
    });
    expect(r2.response.result).toMatchObject({ isError: true, content: [{ text: 'declined deploy' }] });
  });
});

describe('malformed inputResponses and requestState', () => {
  const cases: Array<[string, unknown, string]> = [
    ['null', null, 'inputResponses must be an object'],
    ['a string', 'yes', 'inputResponses must be an object'],
    ['an array', [ok], 'inputResponses must be an object'],
    ['a number for an asked key', { confirm: 5 }, 'inputResponses["confirm"] must be an object'],
    ['null for an asked key', { confirm: null }, 'inputResponses["confirm"] must be an object'],
    [
      'the wrong kind for an asked key',
      { confirm: { roots: [] } },
      'inputResponses["confirm"] is not a valid ElicitResult',
    ],
    [
      'a bad action',
      { confirm: { action: 'maybe' } },
      'inputResponses["confirm"] is not a valid ElicitResult',
    ],
  ];
  for (const [what, value, message] of cases) {
    it(`rejects ${what} with -32602 naming it`, async () => {
      const r1 = await firstRound();
      const r2 = await mcp(url, 'tools/call', {
        name: 'confirm',
        arguments: { item: 'deploy' },
        inputResponses: value,
        requestState: r1.requestState,
      });
      expect(r2.status).toBe(400);
      expect(r2.response.error?.code).toBe(-32602);
      expect(r2.response.error?.message).toContain(message);
    });
  }

  it('rejects a non-string requestState', async () => {
    const r = await mcp(url, 'tools/call', { name: 'confirm', arguments: { item: 'x' }, requestState: 12 });
    expect(r.response.error?.code).toBe(-32602);
    expect(r.response.error?.message).toContain('requestState');
  });

  const replays: Array<[string, (state: string) => Record<string, unknown>, Record<string, string>?]> = [
    [
      'tampered',
      (s) => ({
        name: 'confirm',
        arguments: { item: 'deploy' },
        requestState: `${s.slice(0, 10)}${s[10] === 'A' ? 'B' : 'A'}${s.slice(11)}`,
      }),
    ],
    [
      'with -TAMPERED appended',
      (s) => ({ name: 'confirm', arguments: { item: 'deploy' }, requestState: `${s}-TAMPERED` }),
    ],
    [
      'replayed with other arguments',
      (s) => ({ name: 'confirm', arguments: { item: 'delete-prod' }, requestState: s }),
    ],
    ['replayed on another tool', (s) => ({ name: 'forever', arguments: {}, requestState: s })],
    [
      'replayed by another principal',
      (s) => ({ name: 'confirm', arguments: { item: 'deploy' }, requestState: s }),
      { 'x-test-user': 'mallory' },
    ],
  ];
  for (const [what, build, headers] of replays) {
    it(`rejects a state ${what} with the one fixed -32602`, async () => {
      const r1 = await firstRound('deploy', { 'x-test-user': 'alice' });
      const params = { ...build(r1.requestState), inputResponses: { confirm: ok } };
      const r2 = await mcp(url, 'tools/call', params, { headers: headers ?? { 'x-test-user': 'alice' } });
      expect(r2.response.error).toEqual({ code: -32602, message: 'Invalid params: invalid requestState' });
    });
  }
});

describe('limits and capabilities', () => {
  it('ends a flow past the round cap with a clear error', async () => {
    let state: string | undefined;
    for (let round = 0; round < 3; round++) {
      const r = await mcp(url, 'tools/call', {
        name: 'forever',
        arguments: {},
        ...(state ? { requestState: state, inputResponses: { again: ok } } : {}),
      });
      expect(r.response.result?.resultType).toBe('input_required');
      state = r.response.result?.requestState as string;
    }
    const capped = await mcp(url, 'tools/call', {
      name: 'forever',
      arguments: {},
      requestState: state,
      inputResponses: { again: ok },
    });
    expect(capped.response.error?.code).toBe(-32600);
    expect(capped.response.error?.message).toContain('Too many rounds');
  });

  it('never sends an undeclared kind: -32021 names the missing capability', async () => {
    const r = await mcp(
      url,
      'tools/call',
      { name: 'wants_url', arguments: {} },
      {
        meta: { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } },
      },
    );
    expect(r.status).toBe(400);
    expect(r.response.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { elicitation: { url: {} } } },
    });
    const declared = await mcp(url, 'tools/call', { name: 'wants_url', arguments: {} });
    expect(declared.response.result?.resultType).toBe('input_required');
  });

  it('lets a handler adapt to the declared capabilities', async () => {
    const r = await mcp(
      url,
      'tools/call',
      { name: 'test_input_required_result_capabilities', arguments: {} },
      {
        meta: { 'io.modelcontextprotocol/clientCapabilities': { roots: {} } },
      },
    );
    expect(
      Object.values(r.response.result?.inputRequests as object).map((x) => (x as { method: string }).method),
    ).toEqual(['roots/list']);
  });

  it('treats an input_required with neither field as a handler bug (-32603)', async () => {
    const r = await mcp(url, 'tools/call', { name: 'empty_ask', arguments: {} });
    expect(r.response.error?.code).toBe(-32603);
  });

  it('keeps one flow id across the rounds of a call', async () => {
    const r1 = await mcp(url, 'tools/call', { name: 'flow_id', arguments: {} });
    const r2 = await mcp(url, 'tools/call', {
      name: 'flow_id',
      arguments: {},
      requestState: r1.response.result?.requestState,
    });
    expect(r2.response.result?.content).toEqual([{ type: 'text', text: 'same flow' }]);
  });

  it('supports state-only rounds', async () => {
    const r1 = await mcp(url, 'tools/call', { name: 'state_only', arguments: {} });
    expect(r1.response.result).toMatchObject({ resultType: 'input_required' });
    expect(r1.response.result?.inputRequests).toBeUndefined();
    const r2 = await mcp(url, 'tools/call', {
      name: 'state_only',
      arguments: {},
      requestState: r1.response.result?.requestState,
    });
    expect(r2.response.result?.content).toEqual([{ type: 'text', text: 'waited' }]);
  });

  it('runs the same pipeline for prompts', async () => {
    const r1 = await mcp(url, 'prompts/get', { name: 'test_input_required_result_prompt' });
    expect(r1.response.result?.resultType).toBe('input_required');
    const r2 = await mcp(url, 'prompts/get', {
      name: 'test_input_required_result_prompt',
      inputResponses: { user_context: accept({ context: 'billing' }) },
      requestState: r1.response.result?.requestState,
    });
    expect(JSON.stringify(r2.response.result?.messages)).toContain('Use this context: billing');
  });
});

describe('streaming', () => {
  it('aborts the handler when the client closes the request (HTTP cancellation)', async () => {
    const abort = new AbortController();
    const pending = fetch(url, {
      method: 'POST',
      signal: abort.signal,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'slow',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'slow-1',
        method: 'tools/call',
        params: { name: 'slow', arguments: { tag: 'walk-away' }, _meta: META },
      }),
    }).catch((error: Error) => error.name);
    // Walk away once the handler is running; the server must then abort its signal.
    await slowCalls.seen('walk-away:started');
    abort.abort();
    expect(await pending).toBe('AbortError');
    await slowCalls.seen('walk-away:cancelled');
  });

  it('streams progress as SSE when asked, ending with the result', async () => {
    const r = await mcp(
      url,
      'tools/call',
      { name: 'test_tool_with_progress', arguments: {} },
      { meta: { progressToken: 'p1' } },
    );
    expect(r.contentType).toBe('text/event-stream');
    expect(r.messages.map((m) => (m.params as { progress?: number } | undefined)?.progress)).toEqual([
      0,
      50,
      100,
      undefined,
    ]);
    expect(r.response.result?.content).toEqual([{ type: 'text', text: 'Progress complete' }]);
  });

  it('answers in plain JSON without a progressToken', async () => {
    const r = await mcp(url, 'tools/call', { name: 'test_tool_with_progress', arguments: {} });
    expect(r.contentType).toBe('application/json');
    expect(r.messages).toHaveLength(1);
  });

  it('sends log messages only at or above the requested level', async () => {
    const quiet = await mcp(url, 'tools/call', { name: 'test_logging_tool', arguments: {} });
    expect(quiet.messages).toHaveLength(1);
    const loud = await mcp(
      url,
      'tools/call',
      { name: 'test_logging_tool', arguments: {} },
      { meta: { 'io.modelcontextprotocol/logLevel': 'debug' } },
    );
    expect(loud.messages[0]).toMatchObject({ method: 'notifications/message', params: { level: 'info' } });
    const above = await mcp(
      url,
      'tools/call',
      { name: 'test_logging_tool', arguments: {} },
      { meta: { 'io.modelcontextprotocol/logLevel': 'error' } },
    );
    expect(above.messages).toHaveLength(1);
  });
});
