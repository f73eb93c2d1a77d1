// One place that turns a store description (`memory`, `sqlite:PATH`, `redis://HOST:PORT/DB`) into a store, so the
// CLI flag, the server option and the docs all speak the same syntax.
import { InvalidOptionError } from '../protocol/index.js';
import type { SharedStore } from './contract.js';
import { MemoryStore } from './memory.js';
import { RedisStore, type RedisStoreOptions } from './redis.js';
import { SqliteStore } from './sqlite.js';

export const STORE_SYNTAX = 'memory | sqlite:PATH | redis://HOST:PORT/DB';

export async function openStore(
  spec: string,
  options: RedisStoreOptions & { readyWithinMs?: number } = {},
): Promise<SharedStore> {
  if (spec === 'memory') return new MemoryStore();
  if (spec.startsWith('sqlite:')) {
    const path = spec.slice('sqlite:'.length);
    if (path === '') throw new InvalidOptionError(`store "${spec}" names no file: expected sqlite:PATH`);
    return new SqliteStore(path);
  }
  if (spec.startsWith('redis://') || spec.startsWith('rediss://')) return RedisStore.connect(spec, options);
  throw new InvalidOptionError(`unknown store "${spec}": expected ${STORE_SYNTAX}`);
}
