// Global setup of the mutation runs (vitest.mutation.config.ts). Stryker copies the checkout into a sandbox under
// .stryker-tmp/ but cannot copy `dist`, which the build makes a symbolic link (scripts/build.mjs swaps it in one
// rename); stryker.config.mjs leaves it out. Tests that spawn the CLI run dist/, which no mutant reaches anyway, so the
// sandbox gets a link to the checkout's own build.
import { existsSync, symlinkSync } from 'node:fs';
import { resolve } from 'node:path';

export default function linkBuild(): void {
  const checkoutBuild = resolve('..', '..', 'dist');
  if (!existsSync('dist') && resolve('..').endsWith('.stryker-tmp') && existsSync(checkoutBuild))
    symlinkSync(checkoutBuild, 'dist');
}
