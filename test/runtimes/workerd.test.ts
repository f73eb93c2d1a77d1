// The fixture server on Cloudflare's workerd, bundled with esbuild as a deployment would be.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { requireBuiltCli } from '../client/helpers.js';
import { freePort } from '../helpers/free-port.js';
import { startRuntime } from './child-runtime.js';
import { describeRuntime } from './flow.js';
import { bundleWorker } from './workerd-bundle.js';

const WORKERD = join(import.meta.dirname, '../../node_modules/@cloudflare/workerd-linux-64/bin/workerd');

let dir: string | undefined;
afterAll(() => (dir ? rm(dir, { recursive: true, force: true }) : undefined));

describeRuntime(
  'workerd',
  async () => {
    requireBuiltCli(); // the worker bundles the built package
    dir = await mkdtemp(join(tmpdir(), 'mrtr-workerd-'));
    const config = await bundleWorker(dir, await freePort());
    return startRuntime(WORKERD, ['serve', config], { cwd: dir });
  },
  { legacyClient: true },
);
