// Promise: answers to keys the previous round did not ask never reach a handler — not through ctx.inputResponses,
// not through ctx.ask — even when a client slips them in beside the right answers or replays an older key.
import { describe, expect, it } from 'vitest';
import type { InputRequest, JsonRpcRequest } from '../../src/protocol/index.js';
import { inputRequired, McpServer, text } from '../../src/server/index.js';
import { META } from '../helpers/mcp-http.js';

const quiet = { info() {}, warn() {}, error() {} };
const env = { principal: undefined, signal: new AbortController().signal, notify() {} };
const accept = (content: Record<string, unknown>) => ({ action: 'accept', content });

const question = (message: string): InputRequest =>
  ({
    method: 'elicitation/create',
    params: {
      mode: 'form',
      message,
      requestedSchema: { type: 'object', properties: { v: { type: 'string' } }, required: ['v'] },
    },
  }) as InputRequest;

/** What each handler saw in ctx.inputResponses, one entry per run, keys sorted. */
let seen: string[][];

function server(): McpServer {
  return new McpServer({ name: 'unasked', version: '1', logger: quiet })
    .tool({ name: 'explicit', description: 'asks "first", then "second", by hand' }, (_args, ctx) => {
      seen.push(Object.keys(ctx.inputResponses).sort());
      if (ctx.round === 0) return inputRequired({ inputRequests: { first: question('First?') }, state: 1 });
      if (ctx.round === 1) return inputRequired({ inputRequests: { second: question('Second?') }, state: 2 });
      return text('done');
    })
    .tool({ name: 'flow', description: 'the same two questions with ctx.ask' }, async (_args, ctx) => {
      seen.push(Object.keys(ctx.inputResponses).sort());
      const first = await ctx.ask.text('First?', { key: 'first' });
      const second = await ctx.ask.text('Second?', { key: 'second' });
      return text(`${first} ${second}`);
    });
}

let nextId = 1;
async function call(
  core: McpServer['core'],
  name: string,
  extra: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const request: JsonRpcRequest = {
    jsonrpc: '2.0',
    id: nextId++,
    method: 'tools/call',
    params: { name, arguments: {}, _meta: META, ...extra },
  };
  const reply = (await core.handle(request, env)) as { result?: Record<string, unknown>; error?: unknown };
  expect(reply.error).toBeUndefined();
  return reply.result as Record<string, unknown>;
}

describe('unasked keys never reach the handler', () => {
  for (const tool of ['explicit', 'flow']) {
    it(`drops keys the previous round did not ask, beside the right answer and on replay (${tool})`, async () => {
      seen = [];
      const core = server().core;
      const r1 = await call(core, tool);
      expect(Object.keys(r1.inputRequests as object)).toEqual(['first']);

      // Round 2: the asked key plus a pre-answer to the next question, a made-up key and a non-object value.
      const r2 = await call(core, tool, {
        requestState: r1.requestState,
        inputResponses: {
          first: accept({ v: 'a', text: 'a' }),
          second: accept({ v: 'early', text: 'early' }),
          admin: accept({ v: 'yes' }),
          junk: 42,
        },
      });
      expect(Object.keys(r2.inputRequests as object)).toEqual(['second']);

      // Round 3: the asked key plus a replay of the key asked one round earlier.
      const r3 = await call(core, tool, {
        requestState: r2.requestState,
        inputResponses: { second: accept({ v: 'b', text: 'b' }), first: accept({ v: 'z', text: 'z' }) },
      });
      expect(r3.resultType).toBe('complete');

      // The flow handler re-runs from the top each round, so it logs once per call, like the explicit one.
      expect(seen).toEqual([[], ['first'], ['second']]);
    });
  }

  it('drops every answer that arrives without a requestState (nothing proves it was asked)', async () => {
    seen = [];
    const core = server().core;
    const r = await call(core, 'explicit', { inputResponses: { first: accept({ v: 'a' }) } });
    expect(r.resultType).toBe('input_required');
    expect(seen).toEqual([[]]);
  });
});
