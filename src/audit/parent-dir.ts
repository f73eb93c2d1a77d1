// Making the directory an audit file goes in, one level at a time: Node's recursive mkdir (sync and async) loops for
// ever where mkdir answers ENOENT under a parent that exists — anywhere in /proc — which hung `mrtr serve --audit
// jsonl:/proc/x/audit.jsonl` at full CPU with nothing said. Level by level, the first mkdir that fails names its path.
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** `mkdir -p` of the directory `file` is in. */
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
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}
