// A request's signal is one AbortController that follows the caller's signal: no AbortSignal.any per request, the
// caller's abort still ends the request, and a long-lived caller signal keeps no listener once the request is done.
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type DriverTarget, driveMrtr } from '../../src/client/index.js';
import { followAbort } from '../../src/protocol/internal.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('followAbort', () => {
  it("aborts with the outer signal's reason, now or later, and lets go of it when done", () => {
    const outer = new AbortController();
    const mine = new AbortController();
    const unfollow = followAbort(outer.signal, mine);
    expect(getEventListeners(outer.signal, 'abort')).toHaveLength(1);
    outer.abort('gone');
    expect(mine.signal.reason).toBe('gone');

    const already = new AbortController();
    already.abort('early');
    const other = new AbortController();
    followAbort(already.signal, other);
    expect(other.signal.reason).toBe('early');

    const quiet = new AbortController();
    followAbort(quiet.signal, new AbortController())();
    expect(getEventListeners(quiet.signal, 'abort')).toHaveLength(0);
    unfollow();
  });
});

describe('a call driven with the caller’s signal', () => {
  const target = (send: DriverTarget['send']): DriverTarget => ({
    method: 'tools/call',
    params: { name: 'echo', arguments: {} },
    target: 'echo',
    declared: new Set(),
    resolvers: [],
    server: 'test',
    send,
  });
  const done = {
    jsonrpc: '2.0' as const,
    id: 1,
    result: { resultType: 'complete', content: [{ type: 'text', text: 'ok' }] },
  };

  it('makes no AbortSignal.any and leaves no listener on that signal', async () => {
    const any = vi.spyOn(AbortSignal, 'any');
    const caller = new AbortController();
    for (let i = 0; i < 3; i++) {
      const outcome = await driveMrtr(
        target(async () => done),
        { signal: caller.signal },
      );
      expect(outcome.status).toBe('complete');
    }
    expect(any).not.toHaveBeenCalled();
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
  });

  it("still ends when the caller aborts, with the caller's reason", async () => {
    const caller = new AbortController();
    const outcome = await driveMrtr(
      target(async (_params, signal) => {
        caller.abort('stop');
        signal.throwIfAborted();
        return done;
      }),
      { signal: caller.signal },
    );
    expect(outcome).toMatchObject({ status: 'aborted', reason: 'stop' });
  });
});
