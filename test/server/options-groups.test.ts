// McpServer's options grouped by job (state, rounds, tasks): the grouped spelling works, the flat names of the release
// before still do, and what cannot be read one way only (both spellings, an unknown key in a group) is refused.
import { describe, expect, it } from 'vitest';
import type { JsonRpcRequest } from '../../src/protocol/index.js';
import {
  InvalidOptionError,
  McpServer,
  type McpServerOptions,
  type RoundGuard,
  RoundRefused,
  text,
} from '../../src/server/index.js';
import { withOptionGroups } from '../../src/server/internal.js';
import { Keyring } from '../../src/state/index.js';
import { MemoryStore } from '../../src/stores/index.js';
import { META } from '../helpers/mcp-http.js';
import { send } from './tasks-helpers.js';

const env = { principal: undefined, signal: new AbortController().signal, notify() {} };
const KEYS = `k1:${Buffer.alloc(32, 7).toString('base64url')}`;
const quiet = { info() {}, warn() {}, error() {} };
const yes = { action: 'accept', content: { confirm: true } };
// biome-ignore lint/suspicious/noExplicitAny: replies are read as loose JSON, checked by the expectations
type Loose = any;

/** A server with one tool that asks twice, and one task tool, built with `options`. */
function server(options: Partial<McpServerOptions>): McpServer {
  return new McpServer({ name: 'groups', version: '1', logger: quiet, ...options })
    .tool({ name: 'twice', description: 'asks two questions' }, async (_a, { ask }) => {
      await ask.confirm('First?', { key: 'first' });
      await ask.confirm('Second?', { key: 'second' });
      return text('done');
    })
    .tool({ name: 'later', description: 'runs as a task', task: 'optional' }, () => text('ran'));
}

function call(id: number, extra: Record<string, unknown> = {}): JsonRpcRequest {
  return {
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { _meta: META, name: 'twice', arguments: {}, ...extra },
  };
}

/** Round 1 of `twice` on `first`, round 2 on `second` (the state `first` sealed, the first answer). */
async function secondRound(first: McpServer, second: McpServer = first): Promise<Loose> {
  const r1 = (await first.core.handle(call(1), env)) as Loose;
  expect(r1.result.resultType).toBe('input_required');
  const state = r1.result.requestState as string;
  return second.core.handle(call(2, { requestState: state, inputResponses: { first: yes } }), env);
}

const refuseAll: RoundGuard = {
  name: 'closed',
  admit() {
    throw new RoundRefused('closed', { code: -32600, message: 'Invalid request: closed for the test' });
  },
};

describe('McpServer options in their groups', () => {
  it('state: a state sealed with state.keys opens on a server with the same keys, in either spelling', async () => {
    const grouped = server({ state: { keys: KEYS, audience: 'billing' } });
    const flat = server({ stateKeys: KEYS, audience: 'billing' });
    const other = server({ state: { keys: Keyring.fromSpec(KEYS), audience: 'another' } });
    expect((await secondRound(grouped, flat)).result).toMatchObject({ resultType: 'input_required' });
    expect((await secondRound(flat, grouped)).result).toMatchObject({ resultType: 'input_required' });
    // Another audience never opens it: the group's audience is read, not ignored.
    expect((await secondRound(grouped, other)).error).toEqual({
      code: -32602,
      message: 'Invalid params: invalid requestState',
    });
  });

  it('rounds: the round cap, in either spelling', async () => {
    for (const capped of [server({ rounds: { maxRounds: 1 } }), server({ maxRounds: 1 })]) {
      const r2 = await secondRound(capped);
      expect(r2.error?.code).toBe(-32600);
      expect(r2.error?.message).toContain('Too many rounds');
    }
    expect((await secondRound(server({ rounds: { maxRounds: 2 } }))).result.resultType).toBe(
      'input_required',
    );
  });

  it('rounds: a guard, in either spelling', async () => {
    for (const guarded of [server({ rounds: { guards: [refuseAll] } }), server({ guards: [refuseAll] })]) {
      const r1 = (await guarded.core.handle(call(1), env)) as Loose;
      expect(r1.error).toEqual({ code: -32600, message: 'Invalid request: closed for the test' });
    }
  });

  it('rounds: the replay guard on rounds.replay.store refuses a state presented twice, as replayStore did', async () => {
    for (const options of [
      { rounds: { replay: { store: new MemoryStore() } } },
      { replayStore: new MemoryStore() },
    ]) {
      const guarded = server(options);
      const r1 = (await guarded.core.handle(call(1), env)) as Loose;
      const state = r1.result.requestState as string;
      const again = (answer: unknown) =>
        guarded.core.handle(call(2, { requestState: state, inputResponses: { first: answer } }), env);
      expect(((await again(yes)) as Loose).result.resultType).toBe('input_required');
      const replayed = (await again({ action: 'accept', content: { confirm: false } })) as Loose;
      expect(replayed.error).toEqual({ code: -32602, message: 'Invalid params: invalid requestState' });
    }
  });

  it('tasks: the group tunes the tasks extension', async () => {
    const tuned = server({ tasks: { pollIntervalMs: 2500, ttlMs: 60_000 } });
    const created = (await send(tuned, 'tools/call', { name: 'later', arguments: {} })).result;
    expect(created).toMatchObject({ resultType: 'task', pollIntervalMs: 2500, ttlMs: 60_000 });
  });

  it('an option given in both spellings is refused, naming both', () => {
    const store = new MemoryStore();
    const both: Array<[Partial<McpServerOptions>, string, string]> = [
      [{ stateKeys: KEYS, state: { keys: KEYS } }, 'stateKeys', 'state.keys'],
      [{ audience: 'a', state: { audience: 'a' } }, 'audience', 'state.audience'],
      [{ maxStateBytes: 9000, state: { maxBytes: 9000 } }, 'maxStateBytes', 'state.maxBytes'],
      [{ stateCompression: false, state: { compression: false } }, 'stateCompression', 'state.compression'],
      [{ maxRounds: 3, rounds: { maxRounds: 3 } }, 'maxRounds', 'rounds.maxRounds'],
      [
        { handlerTimeoutMs: 9, rounds: { handlerTimeoutMs: 9 } },
        'handlerTimeoutMs',
        'rounds.handlerTimeoutMs',
      ],
      [{ hookTimeoutMs: 9, rounds: { hookTimeoutMs: 9 } }, 'hookTimeoutMs', 'rounds.hookTimeoutMs'],
      [{ guards: [], rounds: { guards: [refuseAll] } }, 'guards', 'rounds.guards'],
      [{ observers: [], rounds: { observers: [] } }, 'observers', 'rounds.observers'],
      [{ replayStore: store, rounds: { replay: { store } } }, 'replayStore', 'rounds.replay.store'],
      [{ replay: { leaseMs: 9 }, rounds: { replay: { store } } }, 'replay', 'rounds.replay'],
    ];
    for (const [options, flat, grouped] of both) {
      const make = () => new McpServer({ name: 'n', version: '1', ...options });
      expect(make).toThrow(InvalidOptionError);
      expect(make).toThrow(`McpServer: both ${flat} and ${grouped} were given: give ${grouped} only`);
    }
  });

  it('an unknown key inside a group is refused by its full name, with what the group takes', () => {
    const unknown: Array<[Partial<McpServerOptions>, string]> = [
      [
        { state: { key: KEYS } as never },
        '"state.key" (state takes: keys, audience, maxBytes, compression, codec)',
      ],
      [{ rounds: { maxRound: 3 } as never }, '"rounds.maxRound" (rounds takes: maxRounds, handlerTimeoutMs,'],
      [{ rounds: { replay: { store: new MemoryStore(), lease: 1 } as never } }, '"rounds.replay.lease"'],
      [{ tasks: { ttl: 1 } as never }, '"tasks.ttl" (tasks takes: store, ttlMs,'],
    ];
    for (const [options, named] of unknown) {
      const make = () => new McpServer({ name: 'n', version: '1', ...options });
      expect(make).toThrow(InvalidOptionError);
      expect(make).toThrow(`McpServer: unknown option ${named}`);
    }
    expect(() => new McpServer({ name: 'n', version: '1', rounds: [] as never })).toThrow(
      'McpServer: rounds must be an object { maxRounds?, handlerTimeoutMs?,',
    );
  });

  it('a value out of range is refused by the spelling it was given in', () => {
    const make = (options: Partial<McpServerOptions>) => () =>
      new McpServer({ name: 'n', version: '1', ...options });
    expect(make({ rounds: { maxRounds: 0 } })).toThrow('McpServer: rounds.maxRounds must be an integer');
    expect(make({ maxRounds: 0 })).toThrow('McpServer: maxRounds must be an integer');
    expect(make({ state: { maxBytes: -1 } })).toThrow('McpServer: state.maxBytes must be an integer');
    expect(make({ rounds: { guards: [{ name: 'g' }] } })).toThrow(
      'McpServer: rounds.guards[0] needs a name and at least one of admit, ask, commit, release',
    );
    expect(make({ rounds: { replay: { store: {} as never } } })).toThrow(
      'McpServer: rounds.replay.store must be a store from mrtr/stores',
    );
    expect(make({ rounds: { replay: { leaseMs: 9 } as never } })).toThrow(
      'McpServer: rounds.replay needs a store (the replay guard keeps its records there)',
    );
  });

  it('the reading the gateway adds its guard through moves flat names into their groups', () => {
    const store = new MemoryStore();
    const grouped = withOptionGroups({
      name: 'n',
      stateKeys: KEYS,
      guards: [refuseAll],
      replayStore: store,
      replay: { leaseMs: 9 },
      rounds: { hookTimeoutMs: 5 },
    });
    expect(grouped).toEqual({
      name: 'n',
      state: { keys: KEYS },
      rounds: { hookTimeoutMs: 5, guards: [refuseAll], replay: { store, leaseMs: 9 } },
    });
  });
});
