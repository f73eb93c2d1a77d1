// The console's tests for `npm run mutation:console`: the in-process half of console-access (the `mrtr serve` half
// runs dist/, which no mutant reaches), the cards and the roles.
import { defineConfig } from 'vitest/config';
import base from './vitest.mutation.config.js';

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [
      'test/console/console-access.test.ts',
      'test/console/approvals-card.test.ts',
      'test/console/console-roles.test.ts',
      'test/console/console-live.test.ts',
    ],
    exclude: [],
  },
});
