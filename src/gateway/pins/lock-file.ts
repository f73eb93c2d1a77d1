// The lock file of pinned tool definitions: read with every mistake named (file, key, what is wrong), written
// pretty with a stable key order so that it diffs well under version control, and replaced atomically.
import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { isJsonObject, type JsonObject, MrtrError } from '../../protocol/index.js';
import { canonicalJson } from '../../state/index.js';
import { definitionDigest, pinnedDefinition, pinnedKindOf } from './digest.js';
import { splitPinKey } from './pin-key.js';

/** The form of the file; a new form gets a new number and a reader that knows both. */
export const LOCK_FILE_VERSION = 1;

/** One pinned definition, as the lock file holds it. */
export interface PinnedTool {
  /** definitionDigest of `definition`. */
  readonly digest: string;
  /** When it was pinned or last accepted (ISO 8601). */
  readonly pinnedAt: string;
  /** The bound fields of the definition (pinnedDefinition), kept so that a change can be shown, not only noticed. */
  readonly definition: JsonObject;
}

/** The pins in a lock file by `<upstream>/<tool>`; an absent file holds none. */
export function readLockFile(path: string): Map<string, PinnedTool> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
    throw pinsError(`lock file ${path}`, `cannot read it: ${(error as Error).message}`, error);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw pinsError(`lock file ${path}`, `not JSON: ${(error as Error).message}`, error);
  }
  if (!isJsonObject(parsed))
    throw pinsError(`lock file ${path}`, 'not a JSON object { "version": 1, "tools": { … } }');
  if (parsed.version !== LOCK_FILE_VERSION)
    throw pinsError(
      `lock file ${path}`,
      `version ${JSON.stringify(parsed.version)}, but this mrtr reads version ${LOCK_FILE_VERSION}`,
    );
  if (!isJsonObject(parsed.tools))
    throw pinsError(`lock file ${path}`, '"tools" must be an object keyed by <upstream>/<tool>');
  const pins = new Map<string, PinnedTool>();
  for (const [key, entry] of Object.entries(parsed.tools))
    pins.set(key, readPinnedEntry(`lock file ${path}`, `tools[${JSON.stringify(key)}]`, key, entry));
  return pins;
}

/**
 * One pin as the lock file (or a fleet's store) holds it, checked as the lock file is: `where` names the file or
 * store and `at` the entry in the messages.
 * @throws MrtrError ERR_GATEWAY_PINS naming what is wrong.
 */
export function readPinnedEntry(where: string, at: string, key: string, entry: unknown): PinnedTool {
  const split = splitPinKey(key);
  if (!split) throw pinsError(where, `${at}: the key is not <upstream>/<tool>`);
  if (!isJsonObject(entry))
    throw pinsError(where, `${at} must be an object with digest, pinnedAt and definition`);
  const { digest, pinnedAt, definition } = entry;
  if (typeof digest !== 'string') throw pinsError(where, `${at}.digest must be a string`);
  if (typeof pinnedAt !== 'string' || Number.isNaN(Date.parse(pinnedAt)))
    throw pinsError(where, `${at}.pinnedAt must be an ISO 8601 time`);
  if (!isJsonObject(definition)) throw pinsError(where, `${at}.definition must be an object`);
  // A pin is named by what the upstream names it by: a tool's or prompt's name, a resource's URI, a template's.
  const kind = pinnedKindOf(split.upstream);
  const field = split.upstream.endsWith('#resource')
    ? 'uri'
    : split.upstream.endsWith('#template')
      ? 'uriTemplate'
      : 'name';
  if (definition[field] !== split.tool)
    throw pinsError(
      where,
      `${at}.definition.${field} is ${JSON.stringify(definition[field])}, not the key's ${kind === 'tool' ? 'tool' : 'name'}`,
    );
  // The digest is what is checked, the definition what is shown: a hand edit to one but not the other would show
  // an admin one thing and enforce another, so it is refused rather than trusted either way.
  if (definitionDigest(definition, kind) !== digest)
    throw pinsError(
      where,
      `${at}.digest does not match its definition (edited by hand?); remove the entry and pin the tool again`,
    );
  return { digest, pinnedAt, definition: pinnedDefinition(definition, kind) };
}

/** The file's text: keys sorted at every level, two-space indents, a final newline. */
export function lockFileText(pins: ReadonlyMap<string, PinnedTool>): string {
  const tools: JsonObject = {};
  for (const key of [...pins.keys()].sort()) {
    const pin = pins.get(key) as PinnedTool;
    tools[key] = {
      digest: pin.digest,
      pinnedAt: pin.pinnedAt,
      definition: JSON.parse(canonicalJson(pin.definition)) as JsonObject,
    };
  }
  return `${JSON.stringify({ version: LOCK_FILE_VERSION, tools }, null, 2)}\n`;
}

/**
 * Replace the file in one step (a temporary file beside it, then a rename): a gateway that stops mid-write, or a
 * second one reading, never sees half a lock file.
 */
export function writeLockFile(path: string, pins: ReadonlyMap<string, PinnedTool>): void {
  const temporary = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    writeFileSync(temporary, lockFileText(pins), { mode: 0o644 });
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw pinsError(`lock file ${path}`, `cannot write it: ${(error as Error).message}`, error);
  }
}

/** The gateway's lock file of pinned definitions cannot be read or written, or is not in the form mrtr writes. */
export class GatewayPinsError extends MrtrError {
  override readonly name = 'GatewayPinsError';
  declare readonly code: 'ERR_GATEWAY_PINS';
  constructor(message: string, options?: ErrorOptions) {
    super('ERR_GATEWAY_PINS', message, options);
  }
}

function pinsError(where: string, problem: string, cause?: unknown): GatewayPinsError {
  return new GatewayPinsError(`${where}: ${problem}`, cause === undefined ? undefined : { cause });
}
