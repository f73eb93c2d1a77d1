// `npm run mutation:connections`: mutation testing of the token vault and the grants it keeps — sealing, binding to
// the owner, compare-and-set removal and refresh, the pending authorization requests — against the in-process
// connection tests.
import base from './stryker.config.mjs';

export default {
  ...base,
  mutate: [
    'src/connections/vault.ts',
    'src/connections/vault-seal.ts',
    'src/connections/vault-records.ts',
    'src/connections/connect-grants.ts',
    'src/connections/connect-pending.ts',
    'src/connections/sealed-box.ts',
  ],
  vitest: { ...base.vitest, configFile: 'vitest.connections-mutation.config.ts' },
  // Last run 77 %: `break` sits just under it.
  thresholds: { high: 80, low: 60, break: 72 },
  reporters: ['clear-text', 'json', 'progress'],
  jsonReporter: { fileName: 'reports/mutation/connections.json' },
};
