// The fleet's store keeps the shared-store contract against a real Redis, fails closed at once when Redis goes
// away, and works again by itself when it comes back.
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, RedisStore, StoreUnavailableError } from '../../src/stores/index.js';
import { TestRedis } from '../helpers/redis-server.js';
import { expectClosedStoreRefuses, storeContract } from './contract.js';

let redis: TestRedis;
let store: RedisStore;
let raw: ReturnType<typeof createClient>;

beforeAll(async () => {
  redis = await TestRedis.start();
  store = await RedisStore.connect(redis.url);
  raw = createClient({ url: redis.url });
  // The outage test kills Redis under this client too; it reconnects by itself.
  raw.on('error', () => undefined);
  await raw.connect();
});
afterAll(async () => {
  await raw.close().catch(() => undefined);
  await store.close().catch(() => undefined);
  await redis.stop();
});

describe('RedisStore', () => {
  storeContract(() => ({ store, remainingTtl: (key) => raw.pTTL(key) }));

  it("carries news between instances: a message published on one store's channel reaches another's listener", async () => {
    const other = await RedisStore.connect(redis.url);
    const heard: string[] = [];
    let arrived: () => void = () => {};
    const second = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const stop = await other.channel.subscribe('mrtr:test:news', (message) => {
      heard.push(message);
      if (heard.length === 2) arrived();
    });
    await store.channel.publish('mrtr:test:news', 'decided');
    await store.channel.publish('mrtr:test:other-topic', 'not for this listener');
    await store.channel.publish('mrtr:test:news', 'decided again');
    await second;
    expect(heard).toEqual(['decided', 'decided again']);
    await stop();
    // Once stopped, nobody listens: Redis counts no subscriber for the topic.
    expect(await raw.pubSubNumSub('mrtr:test:news')).toEqual({ 'mrtr:test:news': 0 });
    await other.close();
  });

  it('the memory and SQLite stores have no channel: their news stays in the process', async () => {
    expect((await openStore('memory')).channel).toBeUndefined();
  });

  it('is described without its password', async () => {
    const withPassword = await RedisStore.connect(`redis://user:secret@127.0.0.1:${redis.port}/0`, {
      readyWithinMs: 1,
    });
    expect(withPassword.description).not.toContain('secret');
    expect(withPassword.description).toBe(`redis://127.0.0.1:${redis.port}/0`);
    await withPassword.close();
  });

  it('openStore reads redis://HOST:PORT/DB', async () => {
    const opened = await openStore(redis.url);
    expect(await opened.create('opened', 'v', 1000)).toBe(true);
    await opened.close();
  });

  it('refuses every call once closed', async () => {
    await expectClosedStoreRefuses(await RedisStore.connect(redis.url));
  });

  it('fails closed at once while Redis is down, and recovers by itself when it is back', async () => {
    const outage = await RedisStore.connect(redis.url);
    await outage.create('before-outage', 'v', 60_000);
    await redis.kill();
    const error = await outage.get('before-outage').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(String(error)).toMatch(/store redis:\/\/127\.0\.0\.1:\d+\/0 is unavailable/);
    await redis.resume();
    await outage.whenReady();
    await store.whenReady();
    // The restarted Redis is empty (no persistence in tests) and its script cache too: EVALSHA falls back to EVAL.
    expect(await outage.create('after-outage', 'v', 60_000)).toBe(true);
    expect(await outage.get('after-outage')).toEqual({ value: 'v', version: 1 });
    await outage.close();
  });

  it('a Redis that stops answering fails closed after commandTimeoutMs instead of holding rounds', async () => {
    const hung = await RedisStore.connect(redis.url, { commandTimeoutMs: 200 });
    await hung.create('before-hang', 'v', 60_000);
    redis.freeze();
    try {
      await expect(hung.get('before-hang')).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      redis.thaw();
    }
    await hung.whenReady();
    expect(await hung.get('before-hang')).toBeDefined();
    await hung.close();
  });
});
