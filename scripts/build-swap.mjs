// Build into a fresh directory, then swap it in with one rename, so that `dist` is never missing or half-built:
// a running `npm start`, `./bin/mrtr` or a test keeps working while `npm install`, `npm test` or `npm run build`
// rebuilds next to it, and an interrupted build leaves the previous one in place.
//
// `dist` is a symbolic link to a sibling `.dist-<stamp>-<pid>` directory. Replacing a symbolic link by renaming a new
// one over it is atomic (rename(2)); replacing a directory is not (it must be removed or moved aside first). The
// build directories sit next to `dist`, at the same depth, so paths a module computes from its own location (the
// schema at `../../schema`) resolve the same way.
//
// `npm pack` does not follow a symbolic link, so when npm packs or publishes (npm_command), `dist` is left a real
// directory; the next ordinary build turns it back into a link (the one moment, on that switch, where `dist` is
// briefly absent: a directory cannot be renamed over).
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';

const PREFIX = '.dist-';
/** Written into a build once its entries were checked: a build without it was interrupted (or is in progress). */
const COMPLETE = '.mrtr-build-complete';
/** Builds kept besides the new one: a server started from one of them may still import a module from it lazily. */
const KEEP_PREVIOUS = 2;

/**
 * Runs `compile(outDir)` into a fresh directory under `root`, checks that `entries` exist in it, then points
 * `root/<link>` at it. Throws (leaving `<link>` untouched) when compiling fails or an entry is missing.
 * @param {{ root: string, compile: (outDir: string) => void | Promise<void>, entries: string[], link?: string,
 *   realDirectory?: boolean, log?: (line: string) => void }} options
 * @returns {Promise<string>} the directory now behind `<link>`
 */
export async function buildAndSwap({
  root,
  compile,
  entries,
  link = 'dist',
  realDirectory = false,
  log = () => {},
}) {
  // Unique even for two builds of one process in one millisecond: a name reused would compile into the directory
  // `<link>` points at, under readers' feet. The pid stays last (prune reads it).
  const name = `${PREFIX}${Date.now().toString(36)}${randomBytes(3).toString('hex')}-${process.pid}`;
  const outDir = join(root, name);
  log(`building into ${name}`);
  await compile(outDir);
  const missing = entries.filter((entry) => !existsSync(join(outDir, entry)));
  if (missing.length)
    throw new Error(`build into ${name} is missing ${missing.join(', ')}; ${link} is unchanged`);
  writeFileSync(join(outDir, COMPLETE), '');

  const target = join(root, link);
  // A reader may have just resolved the old link: the build it points at is kept until the next build.
  const previous = currentBuild(root, link);
  if (realDirectory) {
    rmSync(join(outDir, COMPLETE));
    replace(target, outDir, root);
    log(`${link} is the directory built as ${name} (for npm pack)`);
  } else {
    // Build the new link beside the old one, then rename it over: readers see the old build or the new one.
    const staging = join(root, `${name}.link`);
    symlinkSync(process.platform === 'win32' ? outDir : name, staging, 'junction');
    replace(target, staging, root);
    log(`${link} -> ${name}`);
  }
  prune(root, link, previous);
  return outDir;
}

/**
 * Renames `source` to `target`. A link renamed over a link is the atomic case; a directory cannot be renamed over
 * anything but an empty directory, so a real `target` directory (an older layout, or a build for npm pack) is moved
 * aside first and kept as a previous build, and a link is removed before a directory takes its place.
 */
function replace(target, source, root) {
  const stat = lstatSync(target, { throwIfNoEntry: false });
  if (stat?.isDirectory()) {
    const aside = join(root, `${PREFIX}replaced-${Date.now().toString(36)}-0`);
    renameSync(target, aside);
    writeFileSync(join(aside, COMPLETE), '');
  } else if (stat && (!stat.isSymbolicLink() || lstatSync(source).isDirectory())) unlinkSync(target);
  renameSync(source, target);
}

/**
 * Removes build directories nothing needs: keeps the one `<link>` points at, the one it pointed at before this build
 * and the newest others up to KEEP_PREVIOUS in all, and any
 * whose building process is still running (a concurrent build); removes the rest, interrupted builds included.
 */
function prune(root, link, previous) {
  const current = currentBuild(root, link);
  const builds = readdirSync(root)
    .filter((entry) => entry.startsWith(PREFIX) && !entry.endsWith('.link'))
    .filter((entry) => entry !== current)
    .map((entry) => ({
      entry,
      complete: existsSync(join(root, entry, COMPLETE)),
      pid: Number(entry.split('-').at(-1)),
      mtime: statSync(join(root, entry)).mtimeMs,
    }))
    .sort((a, b) => b.mtime - a.mtime);
  // The build `<link>` pointed at until now is one of those kept, whatever the clock says (builds a millisecond apart
  // tie on mtime).
  let kept = 0;
  const previousBuild = builds.find((build) => build.entry === previous);
  if (previousBuild) {
    builds.splice(builds.indexOf(previousBuild), 1);
    kept++;
  }
  for (const build of builds) {
    if (!build.complete && isRunning(build.pid)) continue;
    if (build.complete && kept < KEEP_PREVIOUS) {
      kept++;
      continue;
    }
    rmSync(join(root, build.entry), { recursive: true, force: true });
  }
}

function currentBuild(root, link) {
  try {
    return resolve(root, readlinkSync(join(root, link)))
      .split(/[\\/]/)
      .at(-1);
  } catch {
    return undefined;
  }
}

function isRunning(pid) {
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}
