// The arrows between rooms (docs/architecture.md), as data, and the check that reads every import in src/ against
// them. A room may import only the rooms its row names, and only through their index.ts.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export const SRC = resolve(import.meta.dirname, '../../src');

/** Which rooms each room may import. `.` is src/index.ts, the package's root entry point. */
export const ARROWS: Readonly<Record<string, readonly string[]>> = {
  protocol: [],
  // state, files and stores import protocol for one thing: MrtrError, the base of every error mrtr throws.
  state: ['protocol'],
  files: ['protocol'],
  held: ['protocol'],
  stores: ['protocol', 'files'],
  // auth → state: sign-in cookies are signed by state's one HMAC signer (signing.ts).
  auth: ['protocol', 'state'],
  flow: ['protocol', 'state'],
  guard: ['protocol', 'state', 'stores'],
  audit: ['protocol', 'state', 'files'],
  controls: ['protocol', 'state', 'stores', 'auth', 'flow'],
  server: ['protocol', 'state', 'flow', 'stores', 'guard', 'auth', 'held'],
  client: ['protocol', 'held'],
  cli: [
    'protocol',
    'state',
    'files',
    'flow',
    'stores',
    'guard',
    'auth',
    'audit',
    'controls',
    'server',
    'client',
  ],
  '.': ['protocol', 'state', 'flow', 'stores', 'guard', 'auth', 'server', 'client'],
};

export interface SourceFile {
  /** Path relative to src/, with forward slashes. */
  path: string;
  text: string;
}

const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

const roomOf = (path: string): string => (path.includes('/') ? path.slice(0, path.indexOf('/')) : '.');

/** Every import that breaks an arrow, as "file → specifier (why)". */
export function boundaryViolations(files: readonly SourceFile[]): string[] {
  const problems: string[] = [];
  for (const file of files) {
    const from = roomOf(file.path);
    for (const match of file.text.matchAll(IMPORT)) {
      const specifier = match[1] ?? match[2]!;
      if (!specifier.startsWith('.')) continue;
      const target = relative(SRC, resolve(SRC, dirname(file.path), specifier))
        .split('\\')
        .join('/');
      if (target.startsWith('..')) {
        problems.push(`${file.path} → ${specifier} (imports from outside src/)`);
        continue;
      }
      const to = roomOf(target);
      if (to === from) continue;
      const allowed = ARROWS[from];
      if (!allowed) problems.push(`${file.path} → ${specifier} (room "${from}" has no row in ARROWS)`);
      else if (!allowed.includes(to))
        problems.push(`${file.path} → ${specifier} (${from} may not import ${to})`);
      else if (target !== `${to}/index.js`) {
        problems.push(`${file.path} → ${specifier} (past ${to}'s index.ts: import from ${to}/index.js)`);
      }
    }
  }
  return problems;
}

export function sourceFiles(dir = SRC): SourceFile[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    if (!entry.name.endsWith('.ts')) return [];
    return [{ path: relative(SRC, full).split('\\').join('/'), text: readFileSync(full, 'utf8') }];
  });
}
