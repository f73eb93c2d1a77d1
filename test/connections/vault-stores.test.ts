// The vault on the stores a fleet shares: a real SQLite file (two handles, as two processes hold it) and a real Redis
// (two connections, as two instances hold it). PostgreSQL has no SharedStore in this repository yet.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe } from 'vitest';
import { RedisStore, SqliteStore } from '../../src/stores/index.js';
import { TestRedis } from '../helpers/redis-server.js';
import { vaultContract } from './vault-contract.js';

describe('storeVault on a SQLite file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mrtr-vault-sqlite-'));
  const path = join(dir, 'vault.db');
  const store = new SqliteStore(path);
  const other = new SqliteStore(path);
  afterAll(async () => {
    await store.close();
    await other.close();
    rmSync(dir, { recursive: true, force: true });
  });
  vaultContract(() => ({ store, other }));
});

describe('storeVault on Redis', () => {
  let redis: TestRedis;
  let store: RedisStore;
  let other: RedisStore;
  beforeAll(async () => {
    redis = await TestRedis.start();
    store = await RedisStore.connect(redis.url);
    other = await RedisStore.connect(redis.url);
  });
  afterAll(async () => {
    await store.close().catch(() => undefined);
    await other.close().catch(() => undefined);
    await redis.stop();
  });
  vaultContract(() => ({ store, other }));
});
