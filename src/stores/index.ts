// mrtr/stores: the shared stores behind guards — memory (one process), SQLite (one machine, the embedded
// default), Redis (a fleet) — all keeping one contract.

// For an application's own SQLite files beside mrtr's (the workflows' databases): the same WAL switch.
export { switchToWal, type WalSwitchOptions } from '../files/index.js';
export {
  type SharedStore,
  STORE_LIMITS,
  type StoreChannel,
  type StoredEntry,
  StoreUnavailableError,
} from './contract.js';
export { MemoryStore, type MemoryStoreOptions } from './memory.js';
export { openStore, STORE_SYNTAX } from './open-store.js';
export { RedisStore, type RedisStoreOptions } from './redis.js';
export { RedisAnswerRelay, type RelayedMessage } from './redis-relay.js';
export { SqliteStore, type SqliteStoreOptions } from './sqlite.js';
