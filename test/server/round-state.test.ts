// The two ends of a round's state (round/state.ts) and the handler's contract (round/flow-link.ts), at their edges:
// what a malformed envelope, a plain unsealed round, an oversized journal or a broken handler result gets.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { JsonRpcRequest, JsonRpcResponse } from '../../src/protocol/index.js';
import {
  inputRequired,
  McpServer,
  type McpServerOptions,
  type RequestStateCodec,
  type RoundGuard,
  text,
} from '../../src/server/index.js';
import { Keyring } from '../../src/state/index.js';
import { META } from '../helpers/mcp-http.js';
import { testServer } from './test-server.js';

const env = { principal: undefined, signal: new AbortController().signal, notify() {} };
const KEYS = Keyring.fromSpec(`k1:${Buffer.alloc(32, 9).toString('base64url')}`);
const call = (id: number, name: string, extra: Record<string, unknown> = {}): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { _meta: META, name, arguments: {}, ...extra },
});
const stateOf = (r: JsonRpcResponse) =>
  (r as unknown as { result: { requestState: string } }).result.requestState;

function server(options: Partial<McpServerOptions> = {}, logged: string[] = []) {
  const logger = {
    info() {},
    warn: (f: Record<string, unknown>, m: string) =>
      void logged.push(`${m} ${String(f.reason ?? '')}`.trim()),
    error: (f: Record<string, unknown>, m: string) =>
      void logged.push(`${m}: ${String(f.err).split('\n')[0]}`),
  };
  return new McpServer({ name: 'edges', version: '1', stateKeys: KEYS, logger, ...options })
    .tool({ name: 'nothing', description: 'Returns no result' }, () => undefined as never)
    .tool({ name: 'bogus_question', description: 'Asks something that is no input request' }, () =>
      inputRequired({ inputRequests: { q: { method: 'bogus/ask', params: {} } as never } }),
    )
    .tool({ name: 'long_answer', description: 'Journals a free-text answer' }, async (_a, { ask }) => {
      const { note } = await ask.form('Note?', z.object({ note: z.string() }), { key: 'note' });
      await ask.confirm(`Keep "${note}"?`, { key: 'keep' });
      return text('kept');
    })
    .tool({ name: 'bad_content', description: 'A result the schema refuses' }, () => ({
      content: [{ type: 'no-such-block' }] as never,
    })).core;
}

describe('round state and the handler contract at the edges', () => {
  it('a state whose asked keys and kinds disagree is refused as malformed (a forged or corrupted envelope)', async () => {
    const logged: string[] = [];
    const forged: RequestStateCodec = {
      seal: () => 'forged',
      open: () => ({
        ok: true,
        envelope: { asked: ['a', 'b'], kinds: ['f'] },
        flowId: 'f',
        round: 1,
        expiresAt: 0,
      }),
    };
    const core = server({ stateCodec: forged }, logged);
    const response = await core.handle(call(1, 'long_answer', { requestState: 'forged' }), env);
    expect(response).toMatchObject({
      error: { code: -32602, message: 'Invalid params: invalid requestState' },
    });
    expect(logged).toEqual(['requestState rejected malformed']);
  });

  it('an unsealedAnswers tool that keeps no state asks in the plain form: no requestState at all', async () => {
    const response = await testServer().core.handle(call(1, 'test_input_required_result_elicitation'), env);
    expect(response).toMatchObject({
      result: { resultType: 'input_required', inputRequests: { user_name: {} } },
    });
    expect((response as unknown as { result: object }).result).not.toHaveProperty('requestState');
  });

  it('an answer that grows the sealed journal past the state cap gets -32602 saying so, not -32603', async () => {
    const core = server();
    const first = await core.handle(call(1, 'long_answer'), env);
    const response = await core.handle(
      call(2, 'long_answer', {
        requestState: stateOf(first),
        inputResponses: { note: { action: 'accept', content: { note: 'x'.repeat(20_000) } } },
      }),
      env,
    );
    expect(response).toMatchObject({
      error: {
        code: -32602,
        message: expect.stringContaining("the flow's state no longer fits in requestState"),
      },
    });
  });

  it('a handler that returns no result, or asks something that is no input request, is a server bug: -32603', async () => {
    const logged: string[] = [];
    const core = server({}, logged);
    for (const tool of ['nothing', 'bogus_question']) {
      expect(await core.handle(call(1, tool), env)).toMatchObject({
        error: { code: -32603, message: 'Internal error while handling tools/call' },
      });
    }
    expect(logged).toEqual([
      'handler failed: ServerError: handler for tools/call nothing returned undefined instead of a result',
      expect.stringMatching(
        /^handler failed: ServerError: handler bug: inputRequests\["q"\] is not an elicitation/,
      ),
    ]);
  });

  it('with validateResults, a result the schema refuses fails the round before guards commit it', async () => {
    const log: string[] = [];
    const guard: RoundGuard = {
      name: 'g',
      commit: () => void log.push('commit'),
      release: () => void log.push('release'),
    };
    const core = server({ validateResults: true, guards: [guard] });
    expect(await core.handle(call(1, 'bad_content'), env)).toMatchObject({ error: { code: -32603 } });
    expect(log).toEqual(['release']);
  });
});
