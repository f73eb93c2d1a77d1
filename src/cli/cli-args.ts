// Command-line parsing for `mrtr call` and `mrtr tools`, with errors a newcomer can act on: the flag named, a
// "did you mean" for a misspelt option, and the command after `--` kept apart from mrtr's own options.
import { readFileSync } from 'node:fs';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { LEGACY_PROTOCOL_VERSIONS } from '../client/index.js';
import { isJsonObject, type JsonObject, MrtrError, SUPPORTED_PROTOCOL_VERSIONS } from '../protocol/index.js';

export class UsageError extends MrtrError {
  declare readonly code: 'ERR_USAGE';
  constructor(message: string, options?: ErrorOptions) {
    super('ERR_USAGE', message, options);
  }
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** How every client command reaches a server: token, stdio child, protocol, OAuth client. One list for all. */
export const CONNECT_OPTIONS = {
  token: { type: 'string' },
  'token-env': { type: 'string' },
  json: { type: 'boolean', default: false },
  stdio: { type: 'boolean', default: false },
  env: { type: 'string', multiple: true },
  protocol: { type: 'string' },
  'client-id': { type: 'string' },
  'client-secret': { type: 'string' },
  scope: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

/** Edit distance, for "did you mean". */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const here = row[j] as number;
      row[j] = Math.min(here + 1, (row[j - 1] as number) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = here;
    }
  }
  return row[b.length] as number;
}

/** The known option closest to `given` (a prefix, or within two edits), as `--name`. */
export function closestOption(given: string, options: Options): string | undefined {
  const bare = given.replace(/^-+/, '').split('=')[0] ?? '';
  const names = Object.keys(options);
  const prefixed = names.filter((n) => n.startsWith(bare) || bare.startsWith(n));
  const ranked = (prefixed.length > 0 ? prefixed : names)
    .map((n) => ({ n, d: distance(bare, n) }))
    .filter((x) => prefixed.length > 0 || x.d <= 2)
    .sort((a, b) => a.d - b.d);
  return ranked[0] ? `--${ranked[0].n}` : undefined;
}

export interface Parsed<V> {
  values: V;
  positionals: string[];
  /** Everything after a lone `--`: the command of a stdio server. */
  command: string[];
}

/**
 * parseArgs with a clear message for unknown options and missing values; `--` splits off the server command.
 * `positional` picks out arguments that are positionals though they start with `-` (a task id): never an option's
 * value (`--token -x`).
 */
export function parseCommandLine<V>(
  argv: string[],
  options: Options,
  positional?: (arg: string, index: number) => boolean,
): Parsed<V> {
  const dash = argv.indexOf('--');
  const given = dash === -1 ? argv : argv.slice(0, dash);
  const command = dash === -1 ? [] : argv.slice(dash + 1);
  // Held aside as placeholders parseArgs reads as plain positionals (no argument holds a NUL), then put back.
  const held: string[] = [];
  const own = given.map((arg, i) => {
    const before = given[i - 1];
    const isValue =
      before?.startsWith('--') && !before.includes('=') && options[before.slice(2)]?.type === 'string';
    if (isValue || !arg.startsWith('-') || !positional?.(arg, i)) return arg;
    held.push(arg);
    return `\0${held.length - 1}`;
  });
  try {
    const { values, positionals } = parseArgs({ args: own, allowPositionals: true, strict: true, options });
    const restored = positionals.map((p) => (p.startsWith('\0') ? (held[Number(p.slice(1))] as string) : p));
    return { values: values as V, positionals: restored, command };
  } catch (error) {
    const code = (error as { code?: string }).code;
    const message = (error as Error).message;
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const given = /'([^']+)'/.exec(message)?.[1] ?? 'option';
      const near = closestOption(given, options);
      throw new UsageError(`unknown option ${given}${near ? ` (did you mean ${near}?)` : ''}`);
    }
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      const flag = /(--[a-z-]+)/.exec(message)?.[1] ?? 'an option';
      throw new UsageError(`${flag} needs a value`);
    }
    throw new UsageError(message);
  }
}

/** A flag's value as a JSON object, or a UsageError naming the flag and where the JSON broke. */
export function jsonObjectFlag(flag: string, given: string, what: string): JsonObject {
  // `@FILE` reads the JSON from a file and `@-` from stdin, as curl's -d does: no JSON object starts with '@', and
  // large or quote-heavy arguments are easier kept in a file than escaped for a shell.
  const from = given.startsWith('@') ? given.slice(1) : undefined;
  const source = from === undefined ? flag : from === '-' ? `${flag} @- (stdin)` : `${flag} @${from}`;
  let text = given;
  if (from !== undefined) {
    if (from === '') throw new UsageError(`${flag} @: name a file after @ (or @- for stdin)`);
    try {
      text = readFileSync(from === '-' ? 0 : from, 'utf8');
    } catch (error) {
      const { code, message } = error as NodeJS.ErrnoException;
      throw new UsageError(`${source}: cannot read it (${code ?? message})`);
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${source} is not valid JSON (${(error as Error).message}); expected ${what}`);
  }
  if (!isJsonObject(value)) throw new UsageError(`${source} must be ${what}`);
  return value;
}

/** `--env NAME=VALUE` or `--env NAME` (passed on from this environment) into a record. */
export function envFlags(
  entries: readonly string[] | undefined,
  from: NodeJS.ProcessEnv,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of entries ?? []) {
    const eq = entry.indexOf('=');
    const name = eq === -1 ? entry : entry.slice(0, eq);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw new UsageError(`--env ${JSON.stringify(entry)}: expected NAME=VALUE or NAME`);
    if (eq !== -1) env[name] = entry.slice(eq + 1);
    else if (from[name] !== undefined) env[name] = from[name] as string;
    else throw new UsageError(`--env ${name}: ${name} is not set here (use --env ${name}=VALUE)`);
  }
  return env;
}

/** `--protocol VERSION`: one this client speaks, or a UsageError listing them. */
export function protocolFlag(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const known = [...SUPPORTED_PROTOCOL_VERSIONS, ...LEGACY_PROTOCOL_VERSIONS];
  if (!known.includes(value))
    throw new UsageError(`--protocol ${value} is not a version this client speaks (${known.join(', ')})`);
  return value;
}
