// The replay guard's timing rules with a fake clock: leases, the bounded wait, record lifetimes, refusal windows,
// and records it cannot read.
import { describe, expect, it } from 'vitest';
import { ReplayGuard } from '../../src/guard/index.js';
import type { Result } from '../../src/protocol/index.js';
import { MemoryStore } from '../../src/stores/index.js';

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

const round = (overrides: Partial<Record<string, unknown>> = {}) => ({
  requestId: 1,
  method: 'tools/call',
  target: 't',
  principal: { subject: 'alice' },
  round: 1,
  flowId: 'flow-1',
  stateDigest: 'state-1',
  stateExpiresAt: 1_000_000 + 600_000,
  answersDigest: 'answers-1',
  ...overrides,
});

const done: Result = { resultType: 'complete', content: [{ type: 'text', text: 'ok' }] } as Result;

describe('ReplayGuard', () => {
  it('records live as long as the state they protect, plus the clock-skew margin — then the store forgets them', async () => {
    const time = clock();
    const store = new MemoryStore({ now: time.now });
    const guard = new ReplayGuard(store, { now: time.now, leaseMs: 1000, clockSkewMs: 60_000 });
    const r = round();
    await guard.admit(r);
    await guard.commit(r, done);
    time.advance(600_000 + 60_000 - 1);
    expect(store.size).toBe(1);
    time.advance(1);
    expect(store.size).toBe(0);
  });

  it('a claim whose process died is taken over by an identical retry once its lease ran out, not before', async () => {
    const time = clock();
    const store = new MemoryStore({ now: time.now });
    const pauses: number[] = [];
    const guard = new ReplayGuard(store, {
      now: time.now,
      leaseMs: 5_000,
      waitMs: 1_000,
      pause: async (ms) => {
        pauses.push(ms);
        time.advance(ms);
      },
    });
    await guard.admit(round({ requestId: 'dead' })); // never commits: its process "died"
    // Within the lease an identical presentation waits, then gives up with a retryable 503.
    await expect(guard.admit(round({ requestId: 'retry-1' }))).rejects.toMatchObject({
      reason: 'still_running',
      code: -32603,
      httpStatus: 503,
      httpHeaders: { 'retry-after': '1' },
    });
    expect(pauses.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(1_000);
    expect(Math.max(...pauses)).toBeLessThanOrEqual(50);
    // Different answers are refused at once, lease or not.
    await expect(guard.admit(round({ answersDigest: 'other' }))).rejects.toMatchObject({
      reason: 'replayed',
    });
    time.advance(5_000);
    const takeover = round({ requestId: 'retry-2' });
    expect(await guard.admit(takeover)).toBeUndefined();
    await guard.commit(takeover, done);
    expect(await guard.admit(round({ requestId: 'retry-3' }))).toEqual(done);
  });

  it('a round whose claim was taken over cannot commit: exactly one answer is recorded', async () => {
    const time = clock();
    const store = new MemoryStore({ now: time.now });
    const guard = new ReplayGuard(store, { now: time.now, leaseMs: 1_000 });
    const slow = round({ requestId: 'slow' });
    await guard.admit(slow);
    time.advance(1_000);
    const takeover = round({ requestId: 'takeover' });
    await guard.admit(takeover);
    await expect(guard.commit(slow, done)).rejects.toMatchObject({ reason: 'claim_lost', code: -32603 });
    await guard.commit(takeover, { ...done, content: [{ type: 'text', text: 'second' }] } as Result);
    expect(JSON.stringify(await guard.admit(round({ requestId: 'r' })))).toContain('second');
  });

  it('a released round (it failed) leaves its state usable again, by the same or other answers', async () => {
    const store = new MemoryStore();
    const guard = new ReplayGuard(store);
    const failed = round();
    await guard.admit(failed);
    await guard.release(failed);
    const other = round({ answersDigest: 'corrected' });
    expect(await guard.admit(other)).toBeUndefined();
    await guard.commit(other, done);
    await expect(guard.admit(round())).rejects.toMatchObject({ reason: 'flow_completed' });
  });

  it('a record the guard cannot read fails closed, never "no record"', async () => {
    const store = new MemoryStore();
    await store.create('mrtr:flow:flow-1', '{not json', 60_000);
    const guard = new ReplayGuard(store);
    await expect(guard.admit(round())).rejects.toMatchObject({
      reason: 'store_unavailable',
      code: -32603,
      message: 'Internal error: replay store unavailable',
    });
  });

  it('the refusal window ends on time: a throttled principal is let through in the next window', async () => {
    const time = clock(0);
    const store = new MemoryStore({ now: time.now });
    const guard = new ReplayGuard(store, { now: time.now, refusals: { maxRefusals: 2, windowMs: 10_000 } });
    const screened = { requestId: 1, method: 'tools/call', target: 't', principal: { subject: 'bot' } };
    await guard.refused(screened, 'malformed');
    await guard.refused(screened, 'stale_round');
    await guard.refused(screened, 'store_unavailable'); // ours, not the caller's: not counted
    time.advance(3_000);
    await expect(guard.screen(screened)).rejects.toMatchObject({
      reason: 'rate_limited',
      httpStatus: 429,
      httpHeaders: { 'retry-after': '7' },
    });
    await expect(
      guard.screen({ ...screened, principal: { subject: 'bot', issuer: 'other-idp' } }),
    ).resolves.toBeUndefined();
    time.advance(7_000);
    await expect(guard.screen(screened)).resolves.toBeUndefined();
  });

  it('refusals: false turns the limit off', async () => {
    const guard = new ReplayGuard(new MemoryStore(), { refusals: false });
    const screened = { requestId: 1, method: 'tools/call', target: 't', principal: undefined };
    for (let i = 0; i < 100; i++) await guard.refused(screened, 'malformed');
    await expect(guard.screen(screened)).resolves.toBeUndefined();
  });
});
