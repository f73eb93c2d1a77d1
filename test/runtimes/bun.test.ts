// The fixture server on Bun, run from the built package (dist/) as an installed mrtr would be.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { requireBuiltCli } from '../client/helpers.js';
import { startRuntime } from './child-runtime.js';
import { describeRuntime } from './flow.js';

const BUN = join(import.meta.dirname, '../../node_modules/@oven/bun-linux-x64/bin/bun');

let dir: string | undefined;
afterAll(() => (dir ? rm(dir, { recursive: true, force: true }) : undefined));

describeRuntime(
  'bun',
  async (env) => {
    requireBuiltCli(); // Bun runs the built package
    // Bun follows tsconfig.json's paths to the sources; an empty tsconfig makes `mrtr/*` the package's dist/.
    dir = await mkdtemp(join(tmpdir(), 'mrtr-bun-'));
    await writeFile(join(dir, 'tsconfig.json'), '{}');
    return startRuntime(
      BUN,
      [`--tsconfig-override=${join(dir, 'tsconfig.json')}`, join(import.meta.dirname, 'bun-entry.ts')],
      { env },
    );
  },
  { legacyClient: true, redis: true },
);
