// How a person runs this mrtr again from their shell, for the command lines mrtr prints ("resume with: …"): `mrtr`
// only when that name on their PATH is this very program; else the path of this package's bin/mrtr (`./bin/mrtr` in
// a checkout), which runs wherever mrtr was started from; `npx mrtr` when npx started it.
import { existsSync, realpathSync } from 'node:fs';
import { basename, delimiter, dirname, isAbsolute, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** This package's launcher: dist/cli/self-command.js → bin/mrtr. */
const OWN_BIN = fileURLToPath(new URL('../../bin/mrtr', import.meta.url));

function realpath(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/** Whether `mrtr` typed in the person's shell runs this program. */
function onPath(env: NodeJS.ProcessEnv, own: string): boolean {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    // npm adds node_modules/.bin to the PATH of what it runs; the person's own shell does not have it.
    if (dir === '' || dir.split(sep).slice(-2).join('/') === 'node_modules/.bin') continue;
    const candidate = join(dir, 'mrtr');
    if (existsSync(candidate) && realpath(candidate) === own) return true;
  }
  return false;
}

/**
 * The launcher as the person reached it: the script Node was given (bin/mrtr, or dist/cli/main.js beside a bin/), not
 * resolved through symbolic links as the module's own URL is; else this package's.
 */
function launcher(script: string | undefined): string {
  if (script !== undefined && basename(script) === 'mrtr') return script;
  if (script?.endsWith(join('dist', 'cli', 'main.js'))) {
    const bin = join(dirname(script), '..', '..', 'bin', 'mrtr');
    if (existsSync(bin)) return bin;
  }
  return OWN_BIN;
}

/** The words that start this mrtr from the person's shell in `cwd`. */
export function selfCommand(
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
  script: string | undefined = process.argv[1],
): string[] {
  // npx sets these for the command it runs; a program npx started (vitest) passes them on to its children too.
  if (env.npm_command === 'exec' && /^mrtr(\s|$)/.test(env.npm_lifecycle_script ?? ''))
    return ['npx', 'mrtr'];
  const bin = launcher(script);
  const own = realpath(bin);
  if (own !== undefined && onPath(env, own)) return ['mrtr'];
  const path = relative(cwd, bin);
  if (path === '' || path === '..' || path.startsWith(`..${sep}`) || isAbsolute(path)) return [bin];
  return [`.${sep}${path}`];
}
