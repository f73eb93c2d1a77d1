import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = fileURLToPath(new URL('./src/', import.meta.url));

export default defineConfig({
  // examples/ import the package by name, as users do; tsconfig.json's `paths` point type-checking at the sources,
  // and these aliases do the same when a test runs an example.
  resolve: {
    alias: [
      { find: /^mrtr$/, replacement: `${src}index.ts` },
      { find: /^mrtr\/([\w-]+)$/, replacement: `${src}$1/index.ts` },
    ],
  },
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    // Conformance and SDK interop suites spawn servers, and two files run at once: give them room on a 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two test files at a time at least: vitest's default (cores - 1) is one on a 2-core CI machine, and most test
    // time is a file waiting for a process it started (mrtr, a server, a browser), which leaves the other core idle.
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
