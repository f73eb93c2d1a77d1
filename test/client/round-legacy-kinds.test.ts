// A held 2025 call's answers go to its server as the results of the server's requests: each must be of the kind its
// question asked for. An elicitation answer given for a sampling request, or a roots list for an elicitation, is
// refused before the handle is spent, naming the question and the result it needs.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  capabilitiesFor,
  McpClient,
  type RoundResult,
  StdioClientTransport,
} from '../../src/client/index.js';
import type { InputRequiredResult } from '../../src/protocol/index.js';
import { ROOT } from './helpers.js';

const SERVER = join(ROOT, 'test/gateway/fixtures/asking-stdio-server.mjs');
const capabilities = capabilitiesFor(['elicitation.form', 'sampling', 'roots']);

let client: McpClient | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
});

function start(): McpClient {
  client = new McpClient({
    server: new StdioClientTransport({ command: process.execPath, args: [SERVER], stderr: 'ignore' }),
    capabilities,
  });
  return client;
}

const held = (r: RoundResult) => {
  expect(r.resultType).toBe('input_required');
  return r as InputRequiredResult & { requestState: string };
};

const sampled = { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm' };
const accepted = { action: 'accept', content: {} };

describe('round(): answers to a held 2025 call are checked by kind', () => {
  it.each([
    ['sample', 'sampling/createMessage', accepted, 'CreateMessageResult', sampled],
    ['sample', 'sampling/createMessage', { roots: [] }, 'CreateMessageResult', sampled],
    ['roots', 'roots/list', accepted, 'ListRootsResult', { roots: [{ uri: 'file:///tmp' }] }],
    ['roots', 'roots/list', sampled, 'ListRootsResult', { roots: [] }],
  ])(
    'a %s question (%s) refuses an answer of another kind and takes its own',
    async (kind, method, wrong, result, right) => {
      const c = start();
      const params = { name: 'ask', arguments: { tag: 't', kind } };
      const first = held(await c.round('tools/call', params));
      expect(first.inputRequests?.q1?.method).toBe(method);
      const round = (answer: unknown) =>
        c.round('tools/call', params, { requestState: first.requestState, inputResponses: { q1: answer } });
      await expect(round(wrong)).rejects.toMatchObject({
        code: 'ERR_INVALID_ARGUMENT',
        message: expect.stringContaining(
          `round: inputResponses.q1 answers ${method} with something that is not a ${result} (`,
        ),
      });
      // The refusal spent nothing: the same handle goes on with an answer of the right kind.
      const done = await round(right);
      expect(done).toMatchObject({ content: [{ text: `t: ${JSON.stringify(right)}` }] });
    },
  );

  it('a roots list given for an elicitation is refused', async () => {
    const c = start();
    const params = { name: 'ask', arguments: { tag: 'e', kind: 'elicit' } };
    const first = held(await c.round('tools/call', params));
    await expect(
      c.round('tools/call', params, {
        requestState: first.requestState,
        inputResponses: { q1: { roots: [{ uri: 'file:///' }] } },
      }),
    ).rejects.toThrow(
      'round: inputResponses.q1 answers elicitation/create without an action of accept, decline or cancel',
    );
  });
});
