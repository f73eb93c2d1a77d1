// The in-process store keeps the shared-store contract, and its map stays bounded by what is alive.
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/stores/index.js';
import { expectClosedStoreRefuses, storeContract } from './contract.js';

describe('MemoryStore', () => {
  storeContract(() => {
    let now = 1_000_000;
    const store = new MemoryStore({ now: () => now });
    return { store, advance: (ms) => (now += ms) };
  });

  it('a flood of short-lived writes does not grow the map past what is alive', async () => {
    let now = 0;
    const store = new MemoryStore({ now: () => now });
    for (let i = 0; i < 5000; i++) {
      await store.create(`k${i}`, 'v', 10);
      now += 1;
    }
    expect(store.size).toBeLessThanOrEqual(10);
  });

  it('refuses every call once closed', async () => {
    await expectClosedStoreRefuses(new MemoryStore());
  });
});
