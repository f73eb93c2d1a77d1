// `--roots` of `mrtr call`/`prompt`/`read`: the workspace roots the CLI offers a server that asks for them
// (roots/list), as the Inspector does. Default: the working directory; `--roots DIR` (repeatable) names others;
// `--roots none` offers none, and then the roots capability is not declared at all.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { UsageError } from './cli-args.js';

export interface CliRoot {
  uri: string;
  name: string;
}

export function rootsFromFlag(values: string[] | undefined, cwd: string): CliRoot[] {
  if (values === undefined || values.length === 0) return [root(cwd)];
  if (values.includes('none')) {
    if (values.length > 1)
      throw new UsageError('--roots none offers no roots: give it alone, not with folders');
    return [];
  }
  return values.map((dir) => {
    if (dir.trim() === '') throw new UsageError('--roots needs a folder (or none)');
    return root(resolve(cwd, dir));
  });
}

function root(dir: string): CliRoot {
  return { uri: pathToFileURL(dir).href, name: dir.split(/[\\/]/).filter(Boolean).at(-1) ?? dir };
}
