// scripts/copy-checkout.sh, the copy `npm run test:node22` installs Node 22's node_modules into: the files git would
// commit, as they are now, and never a node_modules, dist or .tools — as symbolic links (a worktree sharing another
// checkout's node_modules) they would let `npm ci` in the copy empty the folder they point to.
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const SCRIPT = join(import.meta.dirname, '../../scripts/copy-checkout.sh');

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, stdio: 'pipe' });

/** Every path under `root`, links not followed, relative and sorted. */
function tree(root: string, under = ''): string[] {
  return readdirSync(join(root, under), { withFileTypes: true })
    .flatMap((e) => {
      const path = under ? `${under}/${e.name}` : e.name;
      return e.isDirectory() ? [path, ...tree(root, path)] : [path];
    })
    .sort();
}

describe('copy-checkout.sh', () => {
  it('copies what git would commit, changes included, and no node_modules, dist or .tools even as links', () => {
    dir = mkdtempSync(join(tmpdir(), 'mrtr-copy-checkout-'));
    const repo = join(dir, 'repo');
    const shared = join(dir, 'shared'); // another checkout's folders, which the links point to
    const copy = join(dir, 'copy');
    for (const d of [repo, copy, join(repo, 'src'), join(shared, 'node_modules/pkg'), join(shared, 'tools')])
      mkdirSync(d, { recursive: true });
    writeFileSync(join(shared, 'node_modules/pkg/index.js'), '');
    // The ignore rules of an older .gitignore, which a link named node_modules passes (it is not a directory).
    writeFileSync(join(repo, '.gitignore'), 'node_modules/\n*.log\n');
    writeFileSync(join(repo, 'src/kept.ts'), 'committed\n');
    writeFileSync(join(repo, 'src/deleted.ts'), 'committed\n');
    git(repo, 'init', '-q');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'first');
    writeFileSync(join(repo, 'src/kept.ts'), 'changed, not committed\n');
    rmSync(join(repo, 'src/deleted.ts'));
    writeFileSync(join(repo, 'src/new.ts'), 'not yet added\n');
    writeFileSync(join(repo, 'debug.log'), 'ignored\n');
    symlinkSync(join(shared, 'node_modules'), join(repo, 'node_modules'));
    symlinkSync(join(shared, 'tools'), join(repo, '.tools'));
    symlinkSync(join(shared, 'tools'), join(repo, 'dist'));

    execFileSync('bash', [SCRIPT, copy], { cwd: repo, stdio: 'pipe' });

    expect(tree(copy)).toEqual(['.gitignore', 'src', 'src/kept.ts', 'src/new.ts']);
    expect(readFileSync(join(copy, 'src/kept.ts'), 'utf8')).toBe('changed, not committed\n');
    expect(existsSync(join(shared, 'node_modules/pkg/index.js'))).toBe(true);
  });

  it('names what it needs when DEST is missing', () => {
    dir = mkdtempSync(join(tmpdir(), 'mrtr-copy-checkout-'));
    let stderr = '';
    try {
      execFileSync('bash', [SCRIPT], { cwd: dir, stdio: 'pipe' });
    } catch (error) {
      stderr = String((error as { stderr: Buffer }).stderr);
    }
    expect(stderr).toMatch(/usage: copy-checkout\.sh DEST/);
  });
});
