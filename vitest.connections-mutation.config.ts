// The connection tests for `npm run mutation:connections`: the vault on each store, its races, forget and the
// pending authorization requests, all in process.
import { defineConfig } from 'vitest/config';
import base from './vitest.mutation.config.js';

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [
      'test/connections/vault.test.ts',
      'test/connections/vault-stores.test.ts',
      'test/connections/refresh-races.test.ts',
      'test/connections/usable-grants.test.ts',
      'test/connections/connect-forget.test.ts',
      'test/connections/connect-pending.test.ts',
    ],
    exclude: [],
  },
});
