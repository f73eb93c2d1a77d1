// The one contract every shared store keeps, as a suite each store's test file runs against itself. A rule broken by
// any store fails here under that store's name.
import { expect, it } from 'vitest';
import type { SharedStore } from '../../src/stores/index.js';

export interface StoreUnderTest {
  store: SharedStore;
  /** Move the store's clock forward, when the store takes an injected clock (memory, SQLite). */
  advance?: (ms: number) => void;
  /** The remaining TTL of a key as the store itself reports it (Redis: PTTL). */
  remainingTtl?: (key: string) => Promise<number>;
}

let counter = 0;
const unique = (name: string) => `${name}:${process.pid}:${++counter}:${Math.random().toString(36).slice(2)}`;

export function storeContract(open: () => StoreUnderTest): void {
  it('get of an absent key is undefined; create stores once, at version 1', async () => {
    const { store } = open();
    const key = unique('create');
    expect(await store.get(key)).toBeUndefined();
    expect(await store.create(key, 'first', 60_000)).toBe(true);
    expect(await store.create(key, 'second', 60_000)).toBe(false);
    expect(await store.get(key)).toEqual({ value: 'first', version: 1 });
  });

  it('replace is a compare-and-set on the version; a stale version changes nothing', async () => {
    const { store } = open();
    const key = unique('replace');
    expect(await store.replace(key, 1, 'x', 60_000)).toBe(false);
    await store.create(key, 'v1', 60_000);
    expect(await store.replace(key, 1, 'v2', 60_000)).toBe(true);
    expect(await store.replace(key, 1, 'v2-again', 60_000)).toBe(false);
    expect(await store.get(key)).toEqual({ value: 'v2', version: 2 });
  });

  it('remove needs the current version', async () => {
    const { store } = open();
    const key = unique('remove');
    await store.create(key, 'v', 60_000);
    expect(await store.remove(key, 7)).toBe(false);
    expect(await store.get(key)).toBeDefined();
    expect(await store.remove(key, 1)).toBe(true);
    expect(await store.get(key)).toBeUndefined();
    expect(await store.create(key, 'again', 60_000)).toBe(true);
  });

  it('increment counts from 1 and get reads the count as the version', async () => {
    const { store } = open();
    const key = unique('count');
    expect(await store.increment(key, 60_000)).toBe(1);
    expect(await store.increment(key, 60_000)).toBe(2);
    expect(await store.increment(key, 60_000)).toBe(3);
    expect((await store.get(key))?.version).toBe(3);
  });

  it('values keep every character (JSON with quotes, newlines, non-ASCII)', async () => {
    const { store } = open();
    const key = unique('chars');
    const value = JSON.stringify({ a: 'line\nbreak "quoted" ünïcødé 🙂', b: [1, 2, { c: null }] });
    await store.create(key, value, 60_000);
    expect((await store.get(key))?.value).toBe(value);
  });

  it('simultaneous creates of one key: exactly one wins', async () => {
    const { store } = open();
    const key = unique('race');
    const wins = await Promise.all(Array.from({ length: 50 }, (_, i) => store.create(key, `v${i}`, 60_000)));
    expect(wins.filter(Boolean)).toHaveLength(1);
  });

  it('simultaneous replaces from one version: exactly one wins', async () => {
    const { store } = open();
    const key = unique('cas');
    await store.create(key, 'v', 60_000);
    const wins = await Promise.all(
      Array.from({ length: 50 }, (_, i) => store.replace(key, 1, `v${i}`, 60_000)),
    );
    expect(wins.filter(Boolean)).toHaveLength(1);
    expect((await store.get(key))?.version).toBe(2);
  });

  it('refuses keys and TTLs that break the contract, naming the problem', async () => {
    const { store } = open();
    await expect(store.get('')).rejects.toThrow(/store key must be a non-empty string/);
    await expect(store.create('k'.repeat(600), 'v', 1000)).rejects.toThrow(/at most 512 bytes/);
    await expect(store.create(unique('ttl'), 'v', 0)).rejects.toThrow(
      /ttlMs must be a positive integer, got 0/,
    );
    await expect(store.increment(unique('ttl'), 1.5)).rejects.toThrow(/positive integer, got 1.5/);
  });

  it('entries expire with their TTL: an expired entry reads absent and can be created again', async () => {
    const { store, advance, remainingTtl } = open();
    const key = unique('ttl');
    await store.create(key, 'v', 5_000);
    if (advance) {
      advance(4_999);
      expect(await store.get(key)).toBeDefined();
      advance(1);
      expect(await store.get(key)).toBeUndefined();
      expect(await store.replace(key, 1, 'late', 5_000)).toBe(false);
      expect(await store.create(key, 'new', 5_000)).toBe(true);
      expect(await store.get(key)).toEqual({ value: 'new', version: 1 });
    } else {
      // Redis expires keys itself: what we own is that every write sets the TTL asked for.
      const ttl = await remainingTtl!(key);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(5_000);
      await store.replace(key, 1, 'v2', 9_000);
      expect(await remainingTtl!(key)).toBeGreaterThan(5_000);
    }
  });

  it("a counter's window ends on time: counting never extends its expiry", async () => {
    const { store, advance, remainingTtl } = open();
    const key = unique('window');
    await store.increment(key, 10_000);
    if (advance) {
      advance(6_000);
      expect(await store.increment(key, 10_000)).toBe(2);
      advance(4_000);
      expect(await store.get(key)).toBeUndefined();
      expect(await store.increment(key, 10_000)).toBe(1);
    } else {
      const first = await remainingTtl!(key);
      await store.increment(key, 60_000);
      const second = await remainingTtl!(key);
      expect(second).toBeLessThanOrEqual(first);
      expect(second).toBeGreaterThan(0);
    }
  });
}

/** A closed store refuses every call (no silent success after shutdown). */
export async function expectClosedStoreRefuses(store: SharedStore): Promise<void> {
  await store.close();
  await expect(store.get('after-close')).rejects.toThrow(/closed|unavailable/);
  await expect(store.create('after-close', 'v', 1000)).rejects.toThrow(/closed|unavailable/);
}
