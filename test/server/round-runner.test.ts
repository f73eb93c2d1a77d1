// RoundRunner: the whole round as one exported unit. Something that is not the dispatcher — a gateway whose tool
// lives upstream — runs its rounds through it and gets every guard, every observer and the state codec.
import { describe, expect, it } from 'vitest';
import type { JsonRpcRequest, JsonRpcResponse } from '../../src/protocol/index.js';
import {
  type RoundEntry,
  type RoundEvent,
  type RoundIntent,
  RoundRunner,
  SealedStateCodec,
  text,
} from '../../src/server/index.js';
import { Keyring } from '../../src/state/index.js';
import { META } from '../helpers/mcp-http.js';

const quiet = { info() {}, warn() {}, error() {} };
const env = { principal: { subject: 'alice' }, signal: new AbortController().signal, notify() {} };
const keyring = Keyring.fromSpec(`k1:${Buffer.alloc(32, 5).toString('base64url')}`);

/** A fake upstream: its tool asks for a region, then answers. What it was called with is kept. */
function upstream() {
  const calls: unknown[] = [];
  const entry = (name: string): RoundEntry => ({
    target: name,
    async invoke(ctx) {
      const region = await ctx.ask.choose('Which region?', ['eu', 'us'], { key: 'region' });
      calls.push({ name, region });
      return text(`${name} in ${region}`);
    },
  });
  return { calls, entry };
}

function runner() {
  const admitted: Array<[number, string | undefined, string]> = [];
  const committed: string[] = [];
  const intents: RoundIntent[] = [];
  const events: RoundEvent[] = [];
  const rounds = new RoundRunner({
    codec: new SealedStateCodec({ keyring, audience: 'gateway-test' }),
    logger: quiet,
    guards: [
      {
        name: 'watch',
        admit: (round) => void admitted.push([round.round, round.principal?.subject, round.target]),
        commit: (round, result) => void committed.push(`${round.round}:${result.resultType}`),
      },
    ],
    observers: [{ intend: (i) => void intents.push(i), observe: (e) => void events.push(e) }],
    serverInfo: { name: 'gateway', version: '0' },
  });
  return { rounds, admitted, committed, intents, events };
}

const request = (name: string, extra: Record<string, unknown> = {}): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id: 7,
  method: 'tools/call',
  params: {
    _meta: { ...META, 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } },
    name,
    arguments: { size: 2 },
    ...extra,
  },
});
type Answered = { result: Record<string, unknown> & { requestState?: string } };
const result = (r: JsonRpcResponse) => (r as unknown as Answered).result;

describe('RoundRunner', () => {
  it('runs an upstream tool through every guard, observer and the codec, round after round', async () => {
    const { rounds, admitted, committed, intents, events } = runner();
    const up = upstream();
    const first = result(await rounds.run(request('deploy'), env, up.entry('deploy')));
    expect(first).toMatchObject({ resultType: 'input_required', inputRequests: { region: {} } });
    expect(first._meta).toMatchObject({ 'io.modelcontextprotocol/serverInfo': { name: 'gateway' } });
    const second = result(
      await rounds.run(
        request('deploy', {
          requestState: first.requestState,
          inputResponses: { region: { action: 'accept', content: { choice: 'eu' } } },
        }),
        env,
        up.entry('deploy'),
      ),
    );
    expect(second).toMatchObject({ resultType: 'complete', content: [{ text: 'deploy in eu' }] });
    expect(admitted).toEqual([
      [0, 'alice', 'deploy'],
      [1, 'alice', 'deploy'],
    ]);
    expect(committed).toEqual(['0:input_required', '1:complete']);
    expect(intents.map((i) => i.round)).toEqual([0, 1]);
    expect(events.map((e) => [e.round, e.outcome, e.flowId === events[0]?.flowId])).toEqual([
      [0, 'input_required', true],
      [1, 'complete', true],
    ]);
  });

  it('refuses a state bound to other arguments, and the refusal is observed', async () => {
    const { rounds, events } = runner();
    const up = upstream();
    const first = result(await rounds.run(request('deploy'), env, up.entry('deploy')));
    const moved = await rounds.run(
      request('deploy', { requestState: first.requestState, arguments: { size: 200 } }),
      env,
      up.entry('deploy'),
    );
    expect(moved).toMatchObject({ error: { code: -32602 } });
    expect(up.calls).toEqual([]);
    expect(events.at(-1)).toMatchObject({ outcome: 'refused' });
  });

  it('takes a lookup instead of an entry; what it refuses is answered and observed', async () => {
    const { rounds, events } = runner();
    const up = upstream();
    const lookup = (call: { params: { name?: unknown } }) => {
      if (call.params.name !== 'deploy') throw Object.assign(new Error('x'), {});
      return up.entry('deploy');
    };
    expect(result(await rounds.run(request('deploy'), env, lookup))).toMatchObject({
      resultType: 'input_required',
    });
    const unknown = await rounds.run(request('nothing'), env, async () => {
      const { invalidParams } = await import('../../src/protocol/index.js');
      throw invalidParams('Unknown tool: nothing', { name: 'nothing' });
    });
    expect(unknown).toMatchObject({ error: { code: -32602, message: 'Unknown tool: nothing' } });
    expect(events.at(-1)).toMatchObject({ outcome: 'refused', target: 'nothing' });
  });

  it('refuses a request that is not an MRTR method, naming it', async () => {
    const { rounds } = runner();
    const response = await rounds.run(
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
      env,
      upstream().entry('x'),
    );
    expect(response).toMatchObject({
      error: { code: -32601, message: expect.stringContaining('tools/list') },
    });
  });

  it('bounds the input before anything reads it, as the dispatcher does', async () => {
    const { rounds } = runner();
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 100; i++) deep = { d: deep };
    const response = await rounds.run(
      request('deploy', { arguments: deep }),
      env,
      upstream().entry('deploy'),
    );
    expect(response).toMatchObject({
      error: { code: -32602, message: expect.stringContaining('arguments nests deeper') },
    });
  });
});
