// Making the directory a file goes in, one level at a time. Node's recursive mkdir (sync and async) loops for ever
// where mkdir answers ENOENT under a parent that exists — anywhere in /proc — which hung `mrtr serve --audit
// jsonl:/proc/x/audit.jsonl` (and --store, --state-keys-file, `mrtr users totp --totp`) at full CPU with nothing
// said. Level by level, the first mkdir that fails is named, with the file it was for.
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { MakeDirectoryError } from '../protocol/index.js';

/** The directory for a file could not be made: `path` is the level that failed, `cause` the system's error. */
export class DirectoryError extends MakeDirectoryError {
  override readonly name: string = 'DirectoryError';
  constructor(
    readonly path: string,
    readonly file: string,
    cause: NodeJS.ErrnoException,
  ) {
    super(`cannot make the directory ${path} for ${file}: ${cause.message}`, { cause });
  }
}

/** `mkdir -p` of the directory `file` is in, without Node's recursive mkdir; throws a DirectoryError. */
export function makeParentDirectory(file: string): void {
  const missing: string[] = [];
  for (let dir = dirname(resolve(file)); !existsSync(dir); dir = dirname(dir)) {
    missing.push(dir);
    if (dirname(dir) === dir) break;
  }
  for (const dir of missing.reverse()) {
    try {
      mkdirSync(dir);
    } catch (error) {
      // Made meanwhile by another process: what was asked for is there.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST')
        throw new DirectoryError(dir, file, error as NodeJS.ErrnoException);
    }
  }
}
