// The one race of a wait against an AbortSignal: aborted before the wait, during it, or after it settled; the
// listener is always removed, and the pause's timer is cleared on abort.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { pauseUntilAborted, untilAborted } from '../../src/protocol/internal.js';

/** A promise settled by hand, to place the abort exactly before or after it. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** An AbortSignal that counts its abort listeners, to see none is left behind. */
function countingSignal() {
  const controller = new AbortController();
  const signal = controller.signal;
  let listeners = 0;
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = ((...args: Parameters<typeof add>) => {
    listeners++;
    add(...args);
  }) as typeof add;
  signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
    listeners--;
    remove(...args);
  }) as typeof remove;
  return { controller, signal, listeners: () => listeners };
}

describe('untilAborted', () => {
  it('aborted before: rejects with the reason at once, and still observes the work (no unhandled rejection)', async () => {
    const controller = new AbortController();
    controller.abort(new Error('gone'));
    const work = deferred<number>();
    const raced = untilAborted(work.promise, controller.signal);
    work.reject(new Error('late failure'));
    await expect(raced).rejects.toThrow('gone');
  });

  it('aborted during: settles as onAbort says (throws or returns), the work left to finish unobserved', async () => {
    const { controller, signal, listeners } = countingSignal();
    const work = deferred<string>();
    const raced = untilAborted(work.promise, signal, () => 'stopped' as const);
    expect(listeners()).toBe(1);
    controller.abort();
    await expect(raced).resolves.toBe('stopped');
    work.resolve('late');
    const thrown = new AbortController();
    const rejected = untilAborted(new Promise<never>(() => {}), thrown.signal, (s) => {
      throw new Error(`ended: ${String(s.reason)}`);
    });
    thrown.abort('ctrl-c');
    await expect(rejected).rejects.toThrow('ended: ctrl-c');
  });

  it('aborted after: the work’s outcome stands and no listener is left on the signal', async () => {
    const { controller, signal, listeners } = countingSignal();
    await expect(untilAborted(Promise.resolve(7), signal)).resolves.toBe(7);
    await expect(untilAborted(Promise.reject(new Error('own failure')), signal)).rejects.toThrow(
      'own failure',
    );
    expect(listeners()).toBe(0);
    controller.abort();
  });

  it('no signal: the work itself', async () => {
    const work = Promise.resolve('same');
    expect(untilAborted(work, undefined)).toBe(work);
  });
});

describe('pauseUntilAborted', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('resolves after the pause, leaving no listener', async () => {
    vi.useFakeTimers();
    const { signal, listeners } = countingSignal();
    let done = false;
    const pause = pauseUntilAborted(1000, signal).then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(999);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await pause;
    expect(done).toBe(true);
    expect(listeners()).toBe(0);
  });

  it('aborted during: rejects with the reason and clears its timer', async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    const pause = pauseUntilAborted(60_000, controller.signal);
    expect(vi.getTimerCount()).toBe(1);
    controller.abort(new Error('cancelled'));
    await expect(pause).rejects.toThrow('cancelled');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('aborted before: settles at once as onAbort says, no timer left', async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    controller.abort();
    await expect(pauseUntilAborted(60_000, controller.signal, () => 'never waited')).resolves.toBe(
      'never waited',
    );
    expect(vi.getTimerCount()).toBe(0);
  });
});
