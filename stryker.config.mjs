// Mutation testing of the security-critical rooms: `npm run mutation` (on demand, not part of `npm test` or CI).
// Reports: clear text on stdout, HTML in reports/mutation/ (git-ignored).
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: {
    // A narrower include than vitest.config.ts: only the tests that reach the files below.
    configFile: 'vitest.mutation.config.ts',
    // perTest coverage already picks the tests per mutant; "related" would also drop tests that reach a file only
    // through the server's public entry point.
    related: false,
  },
  // Files to mutate. Keep this list in step with the code when files move (docs/architecture.md names the rooms).
  mutate: [
    // Sealed requestState: codec checks (binding, expiry, audience, size cap), base64url, canonical JSON, keyring.
    'src/state/**/*.ts',
    // ctx.ask flows: journal pinning, invalid-answer counts, steps.
    'src/flow/**/*.ts',
    // The round pipeline: open state and keep only asked answers, guards, seal the next round, observe.
    'src/server/round/**/*.ts',
    'src/server/request-state.ts',
    // Replay guard and its stores: single use, retries, stale rounds, leases, refusal limit, atomic store operations.
    'src/guard/**/*.ts',
    'src/stores/**/*.ts',
    // Who is calling: bearer parsing, token verifiers, challenges, scopes, signed cookies, sign-in; the scope guard.
    'src/auth/**/*.ts',
    'src/server/scope-guard.ts',
    // The audit trail's evidence: the record (intent, redaction), the hash chain, signed checkpoints, the verifier.
    'src/audit/record.ts',
    'src/audit/redact.ts',
    'src/audit/chain.ts',
    'src/audit/checkpoint.ts',
    'src/audit/verify.ts',
    'src/audit/intent-links.ts',
    'src/audit/tables.ts',
    'src/audit/trail.ts',
    // The front door's bound on what a request may nest.
    'src/server/input-bounds.ts',
    // Barrels only re-export.
    '!src/**/index.ts',
  ],
  // The run fails below `break` (a test deleted or weakened lets mutants through). No score of this whole run is on
  // record yet, so `break` is set low and safe: raise it to just under the score a full run reaches.
  thresholds: { high: 80, low: 60, break: 50 },
  coverageAnalysis: 'perTest',
  // A shared 2-core machine: one test worker per core.
  concurrency: 2,
  // "Static" mutants are in code that runs outside any single test: module-level constants (size caps, TTL
  // defaults, built-in forms) and codecs or servers built at describe level or in beforeAll. Each re-runs every
  // selected test, so they are ~37% of the mutants and ~75% of the time (hours on 2 cores). The habit run skips
  // them; `MUTATION_STATIC=1 npm run mutation` includes them when there is time.
  ignoreStatic: process.env.MUTATION_STATIC !== '1',
  // Mutants that make a flow wait forever are caught by the timeout (net test time × 1.5 + timeoutMS).
  timeoutMS: 10_000,
  reporters: ['clear-text', 'html', 'json', 'progress'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  // Reuse results for mutants whose code and covering tests did not change since the last run (a local cache in
  // the git-ignored reports/ folder); `npm run mutation -- --force` re-tests everything.
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  tempDirName: '.stryker-tmp',
  // The build is a symbolic link to a .dist-* folder (scripts/build.mjs), which Stryker cannot copy; the sandbox
  // links to the checkout's build instead (test/helpers/mutation-dist.ts).
  ignorePatterns: ['/dist', '/.dist-*'],
  cleanTempDir: true,
};
