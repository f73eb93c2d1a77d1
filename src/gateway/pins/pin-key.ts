// How a pinned tool is named in the lock file and on `mrtr gateway pin --accept`: `<upstream>/<tool>`. Upstream
// names hold no `/`, so the first `/` splits a key back the one way, whatever the tool's own name holds.
import { InvalidArgumentError } from '../../protocol/index.js';

/** The lock file's key of an upstream's tool. */
export function pinKey(upstream: string, tool: string): string {
  return `${upstream}/${tool}`;
}

/** The upstream and tool a key names, or undefined when it is not `<upstream>/<tool>`. */
export function splitPinKey(key: string): { upstream: string; tool: string } | undefined {
  const at = key.indexOf('/');
  if (at <= 0 || at === key.length - 1) return undefined;
  return { upstream: key.slice(0, at), tool: key.slice(at + 1) };
}

/**
 * A test for keys from an accept pattern: `files/write_file`, `files/*` (every tool of one upstream), `*\/delete_*`.
 * `*` stands for any run of characters but `/`, `?` for one such character; everything else is literal.
 * @throws MrtrError ERR_INVALID_ARGUMENT for a pattern that is not `<upstream>/<tool>`.
 */
export function pinPattern(pattern: string): (key: string) => boolean {
  if (splitPinKey(pattern) === undefined)
    throw new InvalidArgumentError(
      `accept pattern ${JSON.stringify(pattern)} is not <upstream>/<tool> (a glob such as files/* is fine)`,
    );
  const source = [...pattern]
    .map((char) => {
      if (char === '*') return '[^/]*';
      if (char === '?') return '[^/]';
      return char.replace(/[.+^${}()|[\]\\/]/g, '\\$&');
    })
    .join('');
  const regex = new RegExp(`^${source}$`, 'u');
  return (key) => regex.test(key);
}
