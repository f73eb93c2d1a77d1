// The token file's directory, made one level at a time and kept to its owner (0700). Node's recursive mkdir is not
// used: where a filesystem answers ENOENT to mkdir under a directory that exists (/proc, /sys), it retries the
// parent for ever; here every level is tried once and a failure names the directory and the reason.
import { chmodSync, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { MakeDirectoryError } from '../../protocol/index.js';

export class TokenDirectoryError extends MakeDirectoryError {
  override readonly name: string = 'TokenDirectoryError';
}

const fail = (dir: string, error: unknown): TokenDirectoryError => {
  const e = error as NodeJS.ErrnoException;
  return new TokenDirectoryError(
    `cannot create the token directory ${dir}: ${e.code ?? 'error'} (${e.message}). Set XDG_CONFIG_HOME to a writable directory`,
  );
};

/** Create `dir` and its missing parents (the new ones 0700), and tighten `dir` itself to 0700 if it is wider. */
export function ensurePrivateDir(dir: string): void {
  const missing: string[] = [];
  for (let at = dir; ; ) {
    let isDir: boolean;
    try {
      isDir = statSync(at).isDirectory();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw fail(at, error);
      missing.unshift(at);
      const up = dirname(at);
      if (up === at) throw fail(at, error);
      at = up;
      continue;
    }
    if (!isDir)
      throw new TokenDirectoryError(`cannot create the token directory ${dir}: ${at} is not a directory`);
    break;
  }
  for (const level of missing) {
    try {
      mkdirSync(level, { mode: 0o700 });
    } catch (error) {
      // Made meanwhile by another run: fine, it is checked below like any existing directory.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw fail(level, error);
    }
  }
  try {
    // A directory made before (by an older version, or by hand with the umask's 0755) is narrowed: the token file's
    // name and its temporary copies are nobody else's business.
    if ((statSync(dir).mode & 0o077) !== 0) chmodSync(dir, 0o700);
  } catch (error) {
    throw fail(dir, error);
  }
}
