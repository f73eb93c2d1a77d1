// The test files Stryker runs (npm run mutation): the ones that exercise the mutated rooms. The full suite also
// spawns the CLI, conformance runners and SDK peers, which cost a minute per run and kill no extra mutants here.
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    // Replaces the base include (mergeConfig would append to it).
    include: [
      'test/state/**/*.test.ts',
      'test/flow/**/*.test.ts',
      // The round pipeline: sealing, opening, dropping unasked answers, state failures.
      'test/server/mrtr.test.ts',
      'test/server/sealed-state.test.ts',
      'test/server/unasked-keys.test.ts',
      'test/server/review-fixes.test.ts',
      'test/server/round-pipeline.test.ts',
      'test/server/plain-keys.test.ts',
    ],
  },
});
