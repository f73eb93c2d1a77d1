// The fixture server on Deno, which resolves `mrtr/*` through package.json to the built package (dist/) and npm
// packages from node_modules: --no-remote, nothing is downloaded.
import { join } from 'node:path';
import { requireBuiltCli } from '../client/helpers.js';
import { startRuntime } from './child-runtime.js';
import { describeRuntime } from './flow.js';

const ROOT = join(import.meta.dirname, '../..');
const DENO = join(ROOT, 'node_modules/deno/bin.cjs');

describeRuntime(
  'deno',
  (env) => {
    requireBuiltCli(); // Deno runs the built package
    return startRuntime(
      process.execPath,
      [
        DENO,
        'run',
        '--no-remote',
        // The repository's own imports name `.js` files that are `.ts` sources (TypeScript's NodeNext convention).
        '--sloppy-imports',
        '--allow-net=127.0.0.1',
        '--allow-read',
        '--allow-env',
        join(import.meta.dirname, 'deno-entry.ts'),
      ],
      { cwd: ROOT, env: { ...env, DENO_NO_UPDATE_CHECK: '1' } },
    );
  },
  { legacyClient: true, redis: true },
);
