// Rate limits on the shared stores: one contract, run against the memory store, a real SQLite file and a real Redis.
// A bucket lets its capacity through, refuses the next with a time to wait, refills with time (a fake clock), is one
// bucket for every limiter on the store, never lets concurrent takers past its capacity, and fails closed.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RATE_KEY_PREFIX, RateLimiter, rateKey, rateLimited } from '../../src/gateway/rate-limit.js';
import { ErrorCode, MrtrError, RoundRefused } from '../../src/protocol/index.js';
import {
  MemoryStore,
  RedisStore,
  type SharedStore,
  SqliteStore,
  StoreUnavailableError,
} from '../../src/stores/index.js';
import { TestRedis } from '../helpers/redis-server.js';

const dir = mkdtempSync(join(tmpdir(), 'mrtr-rate-'));
let redis: TestRedis;
beforeAll(async () => {
  redis = await TestRedis.start();
});
afterAll(async () => {
  await redis.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A clock the test moves by hand; stores that take a clock share it. */
class FakeClock {
  at = 1_800_000_000_000;
  readonly now = (): number => this.at;
  advance(ms: number): void {
    this.at += ms;
  }
}

interface Backend {
  name: string;
  open(clock: FakeClock): Promise<SharedStore>;
  /** Make the store fail for real; resolves to how to undo it. */
  fail(store: SharedStore): Promise<() => Promise<void>>;
  /** fail() closes the store. */
  failCloses: boolean;
}

let files = 0;
const backends: Backend[] = [
  {
    name: 'MemoryStore',
    open: async (clock) => new MemoryStore({ now: clock.now }),
    fail: async (store) => {
      await store.close();
      return async () => undefined;
    },
    failCloses: true,
  },
  {
    name: 'SqliteStore (a real file)',
    open: async (clock) => new SqliteStore(join(dir, `rate-${++files}.db`), { now: clock.now }),
    fail: async (store) => {
      await store.close();
      return async () => undefined;
    },
    failCloses: true,
  },
  {
    // Redis keeps its own time for expiry; the buckets' refill follows the limiter's clock, which is what is tested.
    name: 'RedisStore (a real redis-server)',
    open: () => RedisStore.connect(redis.url),
    fail: async (store) => {
      await redis.kill();
      return async () => {
        await redis.resume();
        await (store as RedisStore).whenReady();
      };
    },
    failCloses: false,
  },
];

let keys = 0;
/** A bucket of its own per test: the Redis is shared by every test in this file. */
const freshKey = () =>
  rateKey('rule-1', `principal-${process.pid}-${++keys}-${Date.now()}`, 'files__write_file');

describe.each(backends)('RateLimiter on $name', (backend) => {
  // Stores still open (closing a SqliteStore twice waits for a checkpointer that has already gone).
  const stores = new Set<SharedStore>();
  afterAll(async () => {
    for (const store of stores) await store.close();
  });
  const setUp = async () => {
    const clock = new FakeClock();
    const store = await backend.open(clock);
    stores.add(store);
    return { clock, store, limiter: new RateLimiter(store, { now: clock.now }) };
  };
  const limit = { requests: 10, perMs: 60_000 };

  it('lets `requests` calls through, then refuses the next with the time until a token is back', async () => {
    const { limiter } = await setUp();
    const key = freshKey();
    for (let i = 0; i < 10; i++) expect(await limiter.take(key, limit)).toEqual({ ok: true });
    // One token refills every 6 s.
    expect(await limiter.take(key, limit)).toEqual({ ok: false, retryAfterMs: 6000 });
    expect(await limiter.take(freshKey(), limit)).toEqual({ ok: true });
  });

  it('refills continuously as time passes, never beyond its capacity', async () => {
    const { clock, limiter } = await setUp();
    const key = freshKey();
    for (let i = 0; i < 10; i++) await limiter.take(key, limit);
    clock.advance(4000);
    expect(await limiter.take(key, limit)).toEqual({ ok: false, retryAfterMs: 2000 });
    clock.advance(2000);
    expect(await limiter.take(key, limit)).toEqual({ ok: true });
    expect((await limiter.take(key, limit)).ok).toBe(false);
    clock.advance(10 * 60_000);
    let passed = 0;
    for (let i = 0; i < 15; i++) if ((await limiter.take(key, limit)).ok) passed++;
    expect(passed).toBe(10);
  });

  it('is one bucket for two limiters (two gateway instances) on the same store', async () => {
    const { clock, store, limiter } = await setUp();
    const other = new RateLimiter(store, { now: clock.now });
    const key = freshKey();
    for (let i = 0; i < 5; i++) {
      expect((await limiter.take(key, limit)).ok).toBe(true);
      expect((await other.take(key, limit)).ok).toBe(true);
    }
    expect((await limiter.take(key, limit)).ok).toBe(false);
    expect((await other.take(key, limit)).ok).toBe(false);
  });

  it('never lets concurrent takers past its capacity: 50 at once on 10 → exactly 10', async () => {
    const { clock, store, limiter } = await setUp();
    const other = new RateLimiter(store, { now: clock.now });
    const key = freshKey();
    const decisions = await Promise.all(
      Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? limiter : other).take(key, limit)),
    );
    expect(decisions.filter((d) => d.ok)).toHaveLength(10);
    for (const refused of decisions.filter((d) => !d.ok))
      expect(refused).toEqual({ ok: false, retryAfterMs: 6000 });
  });

  it('fails closed: a store that fails makes take throw, not pass', async () => {
    const { store, limiter } = await setUp();
    const key = freshKey();
    expect((await limiter.take(key, limit)).ok).toBe(true);
    const undo = await backend.fail(store);
    if (backend.failCloses) stores.delete(store);
    try {
      await expect(limiter.take(key, limit)).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      await undo();
    }
  });
});

describe('RateLimiter', () => {
  it('keeps each bucket under a hashed key below the prefix, and lets an idle bucket vanish', async () => {
    const clock = new FakeClock();
    const store = new MemoryStore({ now: clock.now });
    const limiter = new RateLimiter(store, { now: clock.now });
    const key = rateKey('rule', 'x'.repeat(2000), 'tool');
    await limiter.take(key, { requests: 2, perMs: 1000 });
    const storeKey = `${RATE_KEY_PREFIX}${createHash('sha256').update(key).digest('base64url')}`;
    expect(await store.get(storeKey)).toBeDefined();
    expect(Buffer.byteLength(storeKey)).toBeLessThanOrEqual(512);
    clock.advance(1999);
    expect(store.size).toBe(1);
    clock.advance(1);
    expect(store.size).toBe(0);
  });

  it('joins key parts unambiguously', () => {
    expect(rateKey('a/b', 'c')).not.toBe(rateKey('a', 'b/c'));
    expect(rateKey('a', 'b')).toBe(rateKey('a', 'b'));
  });

  it('does not move a bucket back in time for an instance whose clock lags', async () => {
    const ahead = new FakeClock();
    const behind = new FakeClock();
    behind.advance(-30_000);
    const store = new MemoryStore({ now: ahead.now });
    const limit = { requests: 1, perMs: 60_000 };
    const key = freshKey();
    expect((await new RateLimiter(store, { now: ahead.now }).take(key, limit)).ok).toBe(true);
    // The lagging instance sees no time passed since the other's take (not minus 30 s), and no refill.
    expect(await new RateLimiter(store, { now: behind.now }).take(key, limit)).toEqual({
      ok: false,
      retryAfterMs: 60_000,
    });
  });

  it.each([
    [{ requests: 0, perMs: 1000 }, /requests must be a positive integer, got 0/],
    [{ requests: 1.5, perMs: 1000 }, /requests must be a positive integer, got 1.5/],
    [{ requests: 1, perMs: 0 }, /perMs must be a positive number, got 0/],
    [{ requests: 1, perMs: Number.NaN }, /perMs must be a positive number, got NaN/],
  ])('refuses the limit %o', async (limit, problem) => {
    const limiter = new RateLimiter(new MemoryStore());
    await expect(limiter.take('k', limit)).rejects.toThrow(problem);
  });

  it('refuses a bucket entry it did not write (ERR_CORRUPT_DATA) rather than pass the call', async () => {
    const store = new MemoryStore();
    const key = 'corrupt';
    await store.create(
      `${RATE_KEY_PREFIX}${createHash('sha256').update(key).digest('base64url')}`,
      'nope',
      60_000,
    );
    const error = await new RateLimiter(store)
      .take(key, { requests: 1, perMs: 1000 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MrtrError);
    expect((error as MrtrError).code).toBe('ERR_CORRUPT_DATA');
  });

  it('gives up with ERR_STORE_CONTENDED when the bucket changes under every attempt', async () => {
    const store = new MemoryStore();
    // A store where some other instance always wins the compare-and-set.
    const contended: SharedStore = {
      description: 'contended',
      get: (key) => store.get(key),
      create: async () => false,
      replace: async () => false,
      remove: (key, version) => store.remove(key, version),
      increment: (key, ttl) => store.increment(key, ttl),
      close: () => store.close(),
    };
    const error = await new RateLimiter(contended)
      .take('k', { requests: 1, perMs: 1000 })
      .catch((e: unknown) => e);
    expect((error as MrtrError).code).toBe('ERR_STORE_CONTENDED');
  });
});

describe('rateLimited', () => {
  it('is a 429 with Retry-After in whole seconds, rounded up', () => {
    const refusal = rateLimited(6001, 'Rate limit for files__write_file: 10 calls a minute');
    expect(refusal).toBeInstanceOf(RoundRefused);
    expect(refusal.reason).toBe('rate_limited');
    expect(refusal.code).toBe(ErrorCode.InvalidRequest);
    // The seconds in the message too: many clients show a person nothing but the message.
    expect(refusal.message).toBe('Rate limit for files__write_file: 10 calls a minute; retry in 7 s');
    expect(refusal.data).toEqual({ retryAfterSeconds: 7 });
    expect(refusal.httpStatus).toBe(429);
    expect(refusal.httpHeaders).toEqual({ 'retry-after': '7' });
  });

  it('never tells a client to retry after 0 seconds', () => {
    expect(rateLimited(1, 'slow down').httpHeaders).toEqual({ 'retry-after': '1' });
    expect(rateLimited(1000, 'slow down').httpHeaders).toEqual({ 'retry-after': '1' });
  });
});
