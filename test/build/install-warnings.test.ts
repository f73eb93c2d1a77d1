// What `npm install` warns about, decided once (README, "Node.js ≥ 20"): every dependency with an install script is
// allowed or denied in package.json's allowScripts, and the packages whose engines ask for a newer Node than 20 are
// development tools only — a user of mrtr never meets the EBADENGINE warning.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  allowScripts: Record<string, boolean>;
};
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { hasInstallScript?: boolean; dev?: boolean; engines?: { node?: string } }>;
};
const nameOf = (path: string) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);

/** Whether a Node of major version 20 (its latest minor) satisfies an engines range of the forms the lockfile has. */
function admits20(range: string): boolean {
  return range.split('||').some((alternative) => {
    const a = alternative.trim();
    const m = /^(>=|\^|~)?\s*(\d+)(?:\.(\d+|x))?/.exec(a);
    if (!m) return true; // a form not handled here is not counted against anyone
    const major = Number(m[2]);
    return m[1] === '>=' ? major <= 20 : major === 20;
  });
}

describe('npm install on Node 20', () => {
  it('every dependency with an install script is allowed or denied in allowScripts', () => {
    const undecided = Object.entries(lock.packages)
      .filter(([path, p]) => path !== '' && p.hasInstallScript)
      .map(([path]) => nameOf(path))
      .filter((name) => !Object.hasOwn(pkg.allowScripts, name));
    expect(undecided).toEqual([]);
    expect(pkg.allowScripts['better-sqlite3']).toBe(true); // its native binding is how SQLite stores open
  });

  it('only development tools ask for a newer Node (EBADENGINE)', () => {
    const needNewer = Object.entries(lock.packages).filter(
      ([path, p]) => path !== '' && p.engines?.node && !admits20(p.engines.node),
    );
    expect(needNewer.map(([path]) => nameOf(path))).toContain('@modelcontextprotocol/inspector');
    expect(needNewer.filter(([, p]) => !p.dev).map(([path]) => path)).toEqual([]);
  });
});
