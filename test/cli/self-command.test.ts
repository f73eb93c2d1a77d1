// How mrtr names itself in the lines it prints: `mrtr` only when the person's PATH reaches this very program, the
// launcher's path otherwise (./bin/mrtr in a checkout), `npx mrtr` when npx started it.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { selfCommand } from '../../src/cli/self-command.js';

const dir = mkdtempSync(join(tmpdir(), 'mrtr-self-'));
const checkout = join(dir, 'checkout');
const bin = join(checkout, 'bin', 'mrtr');
const main = join(checkout, 'dist', 'cli', 'main.js');
mkdirSync(join(checkout, 'bin'), { recursive: true });
mkdirSync(join(checkout, 'dist', 'cli'), { recursive: true });
writeFileSync(bin, '#!/usr/bin/env node\n');
chmodSync(bin, 0o755);
writeFileSync(main, '');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('selfCommand', () => {
  it('in a checkout, without mrtr on the PATH: ./bin/mrtr, whichever of bin/mrtr or dist/cli/main.js ran', () => {
    const env = { PATH: '/usr/bin:/bin' };
    expect(selfCommand(env, checkout, bin)).toEqual(['./bin/mrtr']);
    expect(selfCommand(env, checkout, main)).toEqual(['./bin/mrtr']);
    expect(selfCommand(env, dir, bin)).toEqual(['./checkout/bin/mrtr']);
    // From a folder beside the checkout, the whole path rather than a climb out of it.
    expect(selfCommand(env, join(dir, 'elsewhere'), bin)).toEqual([bin]);
  });

  it('mrtr when the PATH reaches this program; not through npm’s node_modules/.bin, which a shell lacks', () => {
    const global = join(dir, 'global');
    mkdirSync(global);
    symlinkSync(bin, join(global, 'mrtr'));
    expect(selfCommand({ PATH: `/usr/bin:${global}` }, '/', join(global, 'mrtr'))).toEqual(['mrtr']);
    const npmBin = join(dir, 'project', 'node_modules', '.bin');
    mkdirSync(npmBin, { recursive: true });
    symlinkSync(bin, join(npmBin, 'mrtr'));
    expect(selfCommand({ PATH: npmBin }, checkout, bin)).toEqual(['./bin/mrtr']);
    // Another program called mrtr on the PATH is not this one.
    const other = join(dir, 'other');
    mkdirSync(other);
    writeFileSync(join(other, 'mrtr'), '');
    expect(selfCommand({ PATH: other }, checkout, bin)).toEqual(['./bin/mrtr']);
  });

  it('npx mrtr when npx ran mrtr; not when npx ran something that runs mrtr', () => {
    expect(selfCommand({ npm_command: 'exec', npm_lifecycle_script: 'mrtr call x' }, checkout, bin)).toEqual([
      'npx',
      'mrtr',
    ]);
    expect(selfCommand({ npm_command: 'exec', npm_lifecycle_script: 'vitest run' }, checkout, bin)).toEqual([
      './bin/mrtr',
    ]);
  });
});
