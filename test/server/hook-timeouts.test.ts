// A guard's store or an observer's sink that hangs must not hold a request open: every wait on their promises is
// bounded by hookTimeoutMs, and past it the round fails closed (-32603 naming what did not answer) without running
// its handler where the wait guarded it. Fake timers: the bound passes when the test says so, not after a delay.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { JsonRpcRequest } from '../../src/protocol/index.js';
import {
  McpServer,
  type McpServerOptions,
  type RoundGuard,
  type RoundObserver,
  text,
} from '../../src/server/index.js';
import { Keyring } from '../../src/state/index.js';
import { META } from '../helpers/mcp-http.js';
import { track } from '../helpers/signals.js';

const quiet = { info() {}, warn() {}, error() {} };
const env = { principal: undefined, signal: new AbortController().signal, notify() {} };
const KEYS = Keyring.fromSpec(`k1:${Buffer.alloc(32, 7).toString('base64url')}`);
const never = () => new Promise<never>(() => {});
const call = (id: number): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { _meta: META, name: 'effect', arguments: {} },
});

afterEach(() => {
  vi.useRealTimers();
});

function setup(options: Partial<McpServerOptions>) {
  const effects: number[] = [];
  const core = new McpServer({
    name: 'hooks',
    version: '1',
    stateKeys: KEYS,
    logger: quiet,
    hookTimeoutMs: 2_000,
    ...options,
  }).tool({ name: 'effect', description: 'Has an effect' }, (_args, ctx) => {
    effects.push(Number(ctx.requestId));
    return text('done');
  }).core;
  return { core, effects };
}

/** Let the event loop turn until `answer` settles or the turns run out (setImmediate is not faked here). */
async function settle(answer: { readonly settled: boolean }): Promise<void> {
  for (let turn = 0; turn < 1_000 && !answer.settled; turn++) await new Promise((next) => setImmediate(next));
}

describe('a guard whose store hangs', () => {
  it.each([
    ['screen', { screen: never }],
    ['admit', { admit: never }],
  ] as const)(
    'in %s: the round fails closed at the bound, and the handler never runs',
    async (_hook, hooks) => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      const guard = { name: 'stuck', admit() {}, ...hooks } as RoundGuard;
      const logged: unknown[] = [];
      const logger = {
        ...quiet,
        error: (fields: unknown, message: string) => logged.push({ fields, message }),
      };
      const { core, effects } = setup({ guards: [guard], logger });
      const answer = track(core.handle(call(1), env));
      await vi.advanceTimersByTimeAsync(1_999);
      expect(answer.settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await settle(answer);
      expect(answer.value).toMatchObject({
        error: {
          code: -32603,
          message: 'Internal error: a check of this round did not answer within 2000 ms',
          data: { reason: 'guard_timeout' },
        },
      });
      expect(effects).toEqual([]);
      // The client is not told the guard's name; the operator's log is.
      expect(logged).toEqual([
        {
          message: 'round guard did not answer in time',
          fields: {
            method: 'tools/call',
            target: 'effect',
            id: 1,
            hook: 'round guard "stuck"',
            limitMs: 2000,
          },
        },
      ]);
    },
  );

  it('in commit: the answer is not sent unrecorded, and the request ends at the bound', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const released: unknown[] = [];
    const guard: RoundGuard = {
      name: 'stuck',
      commit: never,
      release: (_r, error) => void released.push(error),
    };
    const { core } = setup({ guards: [guard] });
    const answer = track(core.handle(call(1), env));
    await vi.advanceTimersByTimeAsync(2_000);
    await settle(answer);
    expect(answer.value).toMatchObject({ error: { code: -32603, data: { reason: 'guard_timeout' } } });
    // What it reserved is let go, so the flow is not left stuck behind its lease.
    expect(released).toHaveLength(1);
  });

  it('in release or refused: the answer does not wait past the bound', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const guard: RoundGuard = {
      name: 'slow-to-forget',
      admit() {},
      commit() {
        throw new Error('store down');
      },
      release: never,
    };
    const { core } = setup({ guards: [guard] });
    const answer = track(core.handle(call(1), env));
    await settle(answer);
    expect(answer.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(2_000);
    await settle(answer);
    expect(answer.value).toMatchObject({ error: { code: -32603 } });
  });
});

describe('an observer whose sink hangs', () => {
  it('on the outcome: the answer is replaced by -32603 at the bound, never sent unrecorded', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const observer: RoundObserver = { observe: never };
    const { core, effects } = setup({ observers: [observer] });
    const answer = track(core.handle(call(1), env));
    await vi.advanceTimersByTimeAsync(2_000);
    await settle(answer);
    expect(answer.value).toMatchObject({
      error: { code: -32603, message: 'Internal error: recording the round did not answer within 2000 ms' },
    });
    expect(effects).toEqual([1]);
  });

  it('on room to record: the round never starts', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const observer: RoundObserver = { observe() {}, admit: never };
    const { core, effects } = setup({ observers: [observer] });
    const answer = track(core.handle(call(1), env));
    await vi.advanceTimersByTimeAsync(2_000);
    await settle(answer);
    expect(answer.value).toMatchObject({ error: { code: -32603, data: { reason: 'observer_timeout' } } });
    expect(effects).toEqual([]);
  });

  it('on the intent: the handler never runs', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const observer: RoundObserver = { observe() {}, intend: never };
    const { core, effects } = setup({ observers: [observer] });
    const answer = track(core.handle(call(1), env));
    await vi.advanceTimersByTimeAsync(2_000);
    await settle(answer);
    expect(answer.value).toMatchObject({
      error: {
        code: -32603,
        message:
          "Internal error: the round's intent could not be recorded within 2000 ms, so effect did not run",
      },
    });
    expect(effects).toEqual([]);
  });

  it('refuses a hookTimeoutMs that is not a positive integer, naming it', () => {
    expect(() => setup({ hookTimeoutMs: 0 })).toThrow(/hookTimeoutMs/);
    expect(() => setup({ hookTimeoutMs: Number.NaN })).toThrow(/hookTimeoutMs/);
  });
});
