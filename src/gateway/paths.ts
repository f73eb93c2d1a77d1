// One spelling per path. A policy condition such as `args.path.startsWith("/srv/share/secret")` must hold for every
// way of writing that path — `public/../secret/key.txt`, `//srv//share/secret`, `/srv/./share/secret/` — so the
// gateway rewrites path arguments to their normal form before the policy reads them, and sends the upstream that
// same normal form: what was checked is what runs. POSIX spelling only: a Windows upstream's `\` is not a separator
// here.
//
// Unicode: every path is put in NFC, because the official filesystem server (and macOS) open a name by its canonical
// equivalent: `prive\u0301` is `privé`, K (U+212A KELVIN SIGN) is K. Compatibility forms (NFKC: ﬁ→fi, ｓ→s) are
// NOT applied: no upstream we know opens `ﬁle` for `file`, and sending `file` would open a different file than asked.
import { posix } from 'node:path';
import { InvalidArgumentError } from '../protocol/index.js';

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
  /** The upstream matches names case-insensitively (a macOS or Windows share): paths are also case-folded. */
  readonly caseInsensitive?: boolean | undefined;
}

/** Whether the argument `name` holds a path (see PathArgumentOptions.names). */
export function isPathName(name: string, names: readonly string[] | undefined): boolean {
  if (names) return names.includes(name);
  return DEFAULT_PATH_ARGUMENTS.includes(name) || PATH_LIKE_NAME.test(name);
}

/**
 * Each character to the lower case of its upper case, one for one: `ς`, `σ` and `Σ` all read `σ`, `ı` reads `i`, K
 * reads `k`. A character whose upper case is longer (`ß` → `SS`) is only lowered: no case-insensitive file system
 * we know opens `strasse` for `straße`, so `ß` stays `ß`.
 */
export function foldCase(text: string): string {
  let folded = '';
  for (const char of text) {
    const upper = char.toUpperCase();
    folded += [...upper].length === 1 ? upper.toLowerCase() : char.toLowerCase();
  }
  return folded.normalize('NFC');
}

/**
 * The normal form of one path: in NFC, `.` and `..` resolved, `//` collapsed, no trailing `/` (but `/` itself),
 * relative resolved against `base` when given, case-folded when `caseInsensitive`. A NUL is refused: the upstream's
 * operating system would cut the path there, after the policy read all of it.
 */
export function normalizePath(value: string, base?: string, name = 'path', caseInsensitive = false): string {
  if (value.includes('\0'))
    throw new InvalidArgumentError(`argument "${name}" contains a NUL character; no path may`);
  const joined = base !== undefined && !posix.isAbsolute(value) ? posix.join(base, value) : value;
  // NFC first: a decomposed `.\u0301` is no `.` and must not be mistaken for one by normalize, nor the other way.
  const normal = posix.normalize(joined.normalize('NFC'));
  const trimmed = normal.length > 1 && normal.endsWith('/') ? normal.slice(0, -1) : normal;
  return caseInsensitive ? foldPath(trimmed, base) : trimmed;
}

/**
 * A normal path of a case-insensitive upstream in its one case: folded, but the upstream's own directory `base` kept
 * as written (the filesystem server checks its root by exact text, so `/users/a` would be refused for `/Users/a`).
 */
export function foldPath(path: string, base?: string): string {
  const folded = foldCase(path);
  if (base === undefined) return folded;
  const root = normalizePath(base);
  const foldedRoot = foldCase(root);
  if (folded === foldedRoot) return root;
  const inside = foldedRoot === '/' ? '/' : `${foldedRoot}/`;
  return folded.startsWith(inside) ? `${root}${folded.slice(foldedRoot.length)}` : folded;
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
    const one = (item: string) => normalizePath(item, options.base, name, options.caseInsensitive === true);
    if (typeof value === 'string') return one(value);
    if (Array.isArray(value)) return value.map((item) => (typeof item === 'string' ? one(item) : item));
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
