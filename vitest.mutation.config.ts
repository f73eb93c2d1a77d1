// The test files Stryker runs (npm run mutation): the in-process ones that exercise the mutated rooms. The full suite
// also spawns the CLI, conformance runners and SDK peers, which cost a minute per run and run the built dist/.
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    // The sandbox's dist/: a link to the checkout's build (the build's link cannot be copied).
    globalSetup: ['test/helpers/mutation-dist.ts'],
    // Replaces the base include (mergeConfig would append to it).
    include: [
      'test/state/**/*.test.ts',
      'test/flow/**/*.test.ts',
      'test/protocol/**/*.test.ts',
      // The server's in-process tests (the round pipeline, its guards, sealing, opening, refusals, HTTP bad input).
      'test/server/**/*.test.ts',
      // The replay guard's rules on every store, and the store contract.
      'test/guard/**/*.test.ts',
      'test/stores/**/*.test.ts',
      // Tokens, challenges, metadata, scopes and browser sign-in (a real oidc-provider and Chromium, in process).
      'test/auth/**/*.test.ts',
      // The audit trail in process: records, chain, checkpoints, verifier, the trail's batching and failures.
      'test/audit/**/*.test.ts',
    ],
    // Spawn the built CLI or scripts on dist/: slow, and they reach the mutated code only through dist/, which
    // Stryker does not mutate.
    // kill9 and postgres start real processes (a server to kill, a PostgreSQL cluster) for minutes of each run.
    exclude: [
      'test/server/stdio.test.ts',
      'test/stores/cross-process.test.ts',
      'test/audit/kill9.test.ts',
      'test/audit/postgres.test.ts',
    ],
  },
});
