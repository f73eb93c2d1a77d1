// makeParentDirectory (src/files/): `mkdir -p` level by level, because Node's recursive mkdir loops for ever under
// /proc. The calls that could hang run in a child process with a timeout, so a regression fails instead of hanging
// the test run (a synchronous loop cannot be interrupted in process).

import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeParentDirectory } from '../../src/files/index.js';
import { SRC } from '../architecture/boundaries.js';
import { runCommand } from '../helpers/run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'mrtr-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('makeParentDirectory', () => {
  it('makes every missing level, and leaves existing ones as they are', () => {
    const file = join(dir, 'a', 'b', 'c', 'file.db');
    makeParentDirectory(file);
    expect(statSync(join(dir, 'a', 'b', 'c')).isDirectory()).toBe(true);
    expect(existsSync(file)).toBe(false);
    makeParentDirectory(file);
    makeParentDirectory(join(dir, 'top.db'));
    expect(readdirSync(dir)).toEqual(['a']);
  });

  it('fails fast under /proc with an error naming the level and the file', async () => {
    // Built code, in a child: with Node's recursive mkdir this call spins at full CPU until the timeout kills it.
    const script = `import('./dist/files/index.js').then(({ makeParentDirectory }) => {
      try { makeParentDirectory('/proc/mrtr-none/deeper/file.db'); console.log('made'); }
      catch (e) { console.log(e.name, e.code, e.path, '|', e.message); }
    })`;
    const out = await runCommand(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 10_000 });
    expect(out.signal).toBeNull();
    expect(out.stdout).toContain(
      "DirectoryError ERR_MAKE_DIRECTORY /proc/mrtr-none | cannot make the directory /proc/mrtr-none for /proc/mrtr-none/deeper/file.db: ENOENT: no such file or directory, mkdir '/proc/mrtr-none'",
    );
  });

  it('is the only way src/ makes directories: no recursive mkdir anywhere (the client room has its own)', () => {
    const offenders: string[] = [];
    const walk = (d: string): void => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const path = join(d, e.name);
        if (e.isDirectory()) {
          if (relative(SRC, path) !== 'client') walk(path);
        } else if (/\bmkdir(Sync)?\([^)]*recursive/s.test(readFileSync(path, 'utf8')))
          offenders.push(relative(SRC, path));
      }
    };
    walk(SRC);
    expect(offenders).toEqual([]);
  });
});
