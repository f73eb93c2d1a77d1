// Saying where a gateway config is wrong. Every mistake an operator can make in the file is a GatewayConfigError
// whose message starts with FILE:LINE: and names the key (`rules[1].require`) and what is wrong with it. ConfigSite
// is a value in the parsed YAML with its place (the node's line, the key path leading to it), so each check below
// can fail where the mistake is without threading line numbers by hand.
import { type Document, isAlias, isMap, isScalar, isSeq, type LineCounter, type Node } from 'yaml';
import { MrtrError } from '../protocol/index.js';

/** A gateway config that cannot be used: the message starts with FILE:LINE: and names the key to fix. */
export class GatewayConfigError extends MrtrError {
  override readonly name: string = 'GatewayConfigError';
  declare readonly code: 'ERR_GATEWAY_CONFIG';
  constructor(message: string, options?: ErrorOptions) {
    super('ERR_GATEWAY_CONFIG', message, options);
  }
}

/** `FILE:LINE: KEY: PROBLEM`, the one shape of every config error. */
export function configError(
  file: string,
  line: number | undefined,
  key: string,
  problem: string,
): GatewayConfigError {
  return new GatewayConfigError(`${file}:${line ?? 1}: ${key === '' ? '' : `${key}: `}${problem}`);
}

/** The parsed file the sites point into. */
export interface ConfigSource {
  readonly file: string;
  readonly doc: Document;
  readonly lines: LineCounter;
}

/** `choose a, b, c` — the usual tail of a message about a value from a closed list. */
export const choose = (options: readonly string[]): string => `choose ${options.join(', ')}`;

const describe = (node: unknown): string => {
  if (isMap(node)) return 'a map';
  if (isSeq(node)) return 'a list';
  if (isScalar(node)) {
    const v = node.value;
    if (v === null) return 'empty';
    if (typeof v === 'string') return `the text ${JSON.stringify(v)}`;
    return `${typeof v} ${String(v)}`;
  }
  return 'missing';
};

/** One value of the config file, with its line and the key path naming it in messages. */
export class ConfigSite {
  readonly node: Node | null | undefined;

  constructor(
    readonly source: ConfigSource,
    node: unknown,
    /** The key path in messages: `rules[1].require`. */
    readonly key: string,
    /** Where to point when the value is missing: its parent's line. */
    private readonly fallbackLine = 1,
  ) {
    // An alias (`*roles`) reads as the value its anchor names; yaml caps how many are expanded.
    this.node = (isAlias(node) ? node.resolve(source.doc) : node) as Node | null | undefined;
  }

  get line(): number {
    const offset = this.node?.range?.[0];
    return offset === undefined ? this.fallbackLine : this.source.lines.linePos(offset).line;
  }

  get missing(): boolean {
    return this.node == null || (isScalar(this.node) && this.node.value === null);
  }

  fail(problem: string): never {
    throw configError(this.source.file, this.line, this.key, problem);
  }

  /** A map whose keys are all in `allowed` (else the unknown key's line names it); its values by key. */
  map(allowed: readonly string[]): Map<string, ConfigSite> {
    if (!isMap(this.node)) this.fail(`must be a map, not ${describe(this.node)}`);
    const entries = new Map<string, ConfigSite>();
    for (const pair of this.node.items) {
      const keyNode = pair.key;
      const keyLine = new ConfigSite(this.source, keyNode, this.key, this.line).line;
      if (!isScalar(keyNode) || typeof keyNode.value !== 'string')
        throw configError(
          this.source.file,
          keyLine,
          this.key,
          `keys must be words, not ${describe(keyNode)}`,
        );
      const name = keyNode.value;
      if (!allowed.includes(name))
        throw configError(this.source.file, keyLine, this.key, `unknown key "${name}" (${choose(allowed)})`);
      const childKey = this.key === '' ? name : `${this.key}.${name}`;
      entries.set(name, new ConfigSite(this.source, pair.value, childKey, keyLine));
    }
    return entries;
  }

  /** A map of free-form names (the keys are data, as in `env`): each name with its value. */
  entries(): [string, ConfigSite][] {
    if (!isMap(this.node)) this.fail(`must be a map, not ${describe(this.node)}`);
    return this.node.items.map((pair) => {
      const keySite = new ConfigSite(this.source, pair.key, this.key, this.line);
      const keyNode = keySite.node;
      if (!isScalar(keyNode) || typeof keyNode.value !== 'string') return keySite.fail('keys must be text');
      const name = keyNode.value;
      return [name, new ConfigSite(this.source, pair.value, `${this.key}.${name}`, keySite.line)];
    });
  }

  /** A list: its items, each named `key[i]`. */
  list(): ConfigSite[] {
    if (!isSeq(this.node)) this.fail(`must be a list, not ${describe(this.node)}`);
    return this.node.items.map(
      (item, i) => new ConfigSite(this.source, item, `${this.key}[${i}]`, this.line),
    );
  }

  text(): string {
    const node = this.node;
    if (!isScalar(node) || typeof node.value !== 'string') this.fail(`must be text, not ${describe(node)}`);
    if (node.value.trim() === '') this.fail('must not be empty');
    return node.value;
  }

  /** A non-empty list of non-empty texts; a single text is not taken for a list of one (say `[x]`). */
  texts(): string[] {
    const items = this.list();
    if (items.length === 0) this.fail('must not be an empty list');
    return items.map((item) => item.text());
  }

  boolean(): boolean {
    const node = this.node;
    if (!isScalar(node) || typeof node.value !== 'boolean')
      this.fail(`must be true or false, not ${describe(node)}`);
    return node.value;
  }

  /** A whole number from 1 to `max`. */
  count(max: number): number {
    const node = this.node;
    const value = isScalar(node) ? node.value : undefined;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max)
      this.fail(`must be a whole number from 1 to ${max}, not ${describe(node)}`);
    return value;
  }
}
