// The held room: waits for the other side's answer, answerable only within their group, bounded in time and by each
// holder's fair share. The server's 2025 bridge and the client's held upstream calls both stand on these rules.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FairShares, PendingAnswers, type ShareRefusals } from '../../src/held/index.js';

const refusals: ShareRefusals = {
  perHolder: (count, limit, seconds) => new Error(`holder holds ${count}/${limit}, retry in ${seconds} s`),
  groupsPerHolder: (count, limit) => new Error(`groups ${count}/${limit}`),
  perGroup: (limit) => new Error(`group full at ${limit}`),
  total: (limit) => new Error(`pool full at ${limit}`),
};

const waitFor = (id: string, group: string, extra: { signal?: AbortSignal; timeoutMs?: number } = {}) => ({
  id,
  holder: group,
  group,
  timeoutMs: extra.timeoutMs ?? 60_000,
  signal: extra.signal,
  timedOut: () => new Error(`${id} timed out`),
  cancelled: () => new Error(`${id} cancelled`),
  context: { asked: id },
});

afterEach(() => {
  vi.useRealTimers();
});

describe('PendingAnswers', () => {
  it('an answer settles a wait only from the group that was asked; another group learns nothing of it', async () => {
    const pending = new PendingAnswers<string, { asked: string }>();
    const answer = pending.wait(waitFor('q1', 'alice'));
    expect(pending.peek('q1', 'bob')).toBeUndefined();
    expect(pending.settle('q1', 'bob', 'from bob')).toBe(false);
    expect(pending.peek('q1', 'alice')).toEqual({ asked: 'q1' });
    expect(pending.settle('q1', 'alice', 'from alice')).toBe(true);
    await expect(answer).resolves.toBe('from alice');
    // Answered once: the id is gone.
    expect(pending.settle('q1', 'alice', 'again')).toBe(false);
    expect(pending.size).toBe(0);
  });

  it('fails a wait past its time limit, and one whose signal aborts, and frees both places', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const shares = new FairShares({ total: 10, perHolder: 10 }, refusals);
    const pending = new PendingAnswers<string, { asked: string }>(shares);
    const late = pending.wait(waitFor('q1', 'alice', { timeoutMs: 1000 }));
    const stop = new AbortController();
    const cancelled = pending.wait(waitFor('q2', 'alice', { signal: stop.signal }));
    expect(shares.size).toBe(2);
    vi.advanceTimersByTime(1000);
    await expect(late).rejects.toThrow('q1 timed out');
    stop.abort();
    await expect(cancelled).rejects.toThrow('q2 cancelled');
    expect(shares.size).toBe(0);
    expect(pending.size).toBe(0);
  });

  it('a holder past its share is refused before anything is sent; others still wait', async () => {
    const shares = new FairShares({ total: 10, perHolder: 1 }, refusals);
    const pending = new PendingAnswers<string, { asked: string }>(shares);
    const sent: string[] = [];
    const a1 = pending.wait(waitFor('a1', 'alice'), () => sent.push('a1'));
    await expect(pending.wait(waitFor('a2', 'alice'), () => sent.push('a2'))).rejects.toThrow(
      /^holder holds 1\/1, retry in 60 s$/,
    );
    const b1 = pending.wait(waitFor('b1', 'bob'), () => sent.push('b1'));
    expect(sent).toEqual(['a1', 'b1']);
    pending.failAll(() => new Error('closing'));
    await expect(Promise.allSettled([a1, b1])).resolves.toMatchObject([
      { status: 'rejected', reason: { message: 'closing' } },
      { status: 'rejected', reason: { message: 'closing' } },
    ]);
  });

  it('failGroup ends one group’s waits and leaves the others', async () => {
    const pending = new PendingAnswers<string, { asked: string }>();
    const a = pending.wait(waitFor('a', 'alice'));
    const b = pending.wait(waitFor('b', 'bob'));
    pending.failGroup('alice', () => new Error('session ended'));
    await expect(a).rejects.toThrow('session ended');
    expect(pending.settle('b', 'bob', 'ok')).toBe(true);
    await expect(b).resolves.toBe('ok');
  });
});

describe('FairShares', () => {
  it('without groups, bounds each holder and the pool; a limit that is not a positive integer is named', () => {
    const shares = new FairShares({ total: 3, perHolder: 2 }, refusals);
    expect(shares.take('1', 'alice', 'alice', Date.now())).toBeUndefined();
    expect(shares.take('2', 'alice', 'alice', Date.now())).toBeUndefined();
    expect(shares.check('alice', 'alice')?.message).toMatch(/^holder holds 2\/2/);
    expect(shares.take('3', 'bob', 'bob', Date.now())).toBeUndefined();
    expect(shares.check('carol', 'carol')?.message).toBe('pool full at 3');
    expect(shares.heldBy('alice')).toBe(2);
    expect(() => new FairShares({ total: 3, perHolder: 0 }, refusals)).toThrow(
      'FairShares: perHolder must be a positive integer, got 0',
    );
  });

  it('blocked names the limit in the way without building its refusal; check builds it', () => {
    let built = 0;
    const counted: ShareRefusals = {
      perHolder: (count, limit) => {
        built++;
        return new Error(`holder holds ${count}/${limit}`);
      },
      total: (limit) => {
        built++;
        return new Error(`pool full at ${limit}`);
      },
    };
    const shares = new FairShares({ total: 3, perHolder: 2 }, counted);
    shares.take('1', 'alice', 'alice', Date.now());
    expect(shares.blocked('alice', 'alice')).toBeUndefined();
    shares.take('2', 'alice', 'alice', Date.now());
    shares.take('3', 'bob', 'bob', Date.now());
    expect([shares.blocked('alice', 'alice'), shares.blocked('carol', 'carol')]).toEqual([
      'perHolder',
      'total',
    ]);
    expect(built).toBe(0);
    expect(shares.check('carol', 'carol')?.message).toBe('pool full at 3');
    expect(built).toBe(1);
  });
});
