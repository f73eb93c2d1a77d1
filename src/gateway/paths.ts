// One spelling per path. A policy condition such as `args.path.startsWith("/srv/share/secret")` must hold for every
// way of writing that path — `public/../secret/key.txt`, `//srv//share/secret`, `/srv/./share/secret/` — so the
// gateway rewrites path arguments to their normal form before the policy reads them, and sends the upstream that
// same normal form: what was checked is what runs. POSIX spelling only: a Windows upstream's `\` is not a separator
// here.
import { posix } from 'node:path';
import { MrtrError } from '../protocol/index.js';

/** Argument names taken as paths when an upstream's config names none (`pathArguments`). */
export const DEFAULT_PATH_ARGUMENTS: readonly string[] = Object.freeze([
  'path',
  'paths',
  'source',
  'destination',
  'file',
  'filename',
  'filepath',
  'file_path',
  'dir',
  'directory',
  'root',
]);

/** Beyond the default names: `targetPath`, `output_path`, `basepath`, … */
const PATH_LIKE_NAME = /(?:path|Path|_path)$/;

export interface PathArgumentOptions {
  /** The argument names that hold paths; given, these and only these (no suffix rule). Default: DEFAULT_PATH_ARGUMENTS plus any name ending in path, Path or _path. */
  readonly names?: readonly string[] | undefined;
  /** Relative paths are resolved against this directory (the stdio upstream's cwd); without it they stay relative, normalized. */
  readonly base?: string | undefined;
}

function isPathName(name: string, names: readonly string[] | undefined): boolean {
  if (names) return names.includes(name);
  return DEFAULT_PATH_ARGUMENTS.includes(name) || PATH_LIKE_NAME.test(name);
}

/**
 * The normal form of one path: `.` and `..` resolved, `//` collapsed, no trailing `/` (but `/` itself), relative
 * resolved against `base` when given. A NUL is refused: the upstream's operating system would cut the path there,
 * after the policy read all of it.
 */
export function normalizePath(value: string, base?: string, name = 'path'): string {
  if (value.includes('\0'))
    throw new MrtrError('ERR_INVALID_ARGUMENT', `argument "${name}" contains a NUL character; no path may`);
  const joined = base !== undefined && !posix.isAbsolute(value) ? posix.join(base, value) : value;
  const normal = posix.normalize(joined);
  return normal.length > 1 && normal.endsWith('/') ? normal.slice(0, -1) : normal;
}

/**
 * `args` with every path argument (by name, see PathArgumentOptions) in its normal form: strings, and the strings in
 * arrays of them; other values and other arguments are kept as they are. `args` itself is not changed.
 */
export function normalizePathArguments<T extends Readonly<Record<string, unknown>>>(
  args: T,
  options: PathArgumentOptions = {},
): T {
  const normalize = (name: string, value: unknown): unknown => {
    if (typeof value === 'string') return normalizePath(value, options.base, name);
    if (Array.isArray(value))
      return value.map((item) => (typeof item === 'string' ? normalizePath(item, options.base, name) : item));
    return value;
  };
  // fromEntries defines own properties: an argument named "__proto__" stays an argument, never a prototype.
  return Object.fromEntries(
    Object.entries(args).map(([name, value]) => [
      name,
      isPathName(name, options.names) ? normalize(name, value) : value,
    ]),
  ) as T;
}
