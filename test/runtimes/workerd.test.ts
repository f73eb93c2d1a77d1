// The fixture server on Cloudflare's workerd, bundled with esbuild as a deployment would be.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
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

it('a worker without its state keys refuses to start, naming the secret', async () => {
  requireBuiltCli();
  const bare = await mkdtemp(join(tmpdir(), 'mrtr-workerd-'));
  try {
    const config = await bundleWorker(bare, await freePort(), false);
    const child = spawn(WORKERD, ['serve', config], { cwd: bare, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).not.toBe(0);
    expect(output).toContain('MRTR_STATE_KEYS is not set');
  } finally {
    await rm(bare, { recursive: true, force: true });
  }
});
