// Where `mrtr gateway` and `mrtr gateway pin` keep the pinned tool definitions unless --lock says: one rule, in one
// place, so the two commands always read the same file.
import { dirname, join, parse as parsePath } from 'node:path';

/** `gateway.yaml` → `gateway.lock.json` beside it. */
export function defaultLockFile(configFile: string): string {
  const { dir, name } = parsePath(configFile);
  return join(dir || dirname(configFile), `${name}.lock.json`);
}
