// The official conformance CLI needs Node 22 (fs.globSync); mrtr itself runs on Node >= 20.
// Install a private Node 22 under .tools/node22 once, so tests can run the conformance suite with it.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const prefix = join(import.meta.dirname, '..', '.tools', 'node22');
const bin = join(prefix, 'node_modules', '.bin', 'node');
if (!existsSync(bin)) {
  process.stderr.write('installing node@22 into .tools/node22 for the conformance suite…\n');
  execFileSync('npm', ['install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', 'node@22'], {
    stdio: 'inherit',
  });
}
