// A rule's `paths`: the directories and files it is about, compared with a call's path arguments in the one form the
// gateway sends them in (paths.ts) — NFC, normalised, case-folded for a case-insensitive upstream. A deny rule applies
// when any path argument is in a listed path; for its `descendingTools` also when one is above a listed path (a
// search from the share root would list what is under secret/). An allow rule applies when every one is inside.
import { foldPath, isPathName, normalizePath } from '../paths.js';
import type { PolicyUpstream, ToolRef } from './types.js';

/** Whether the rule's paths hold for the call, or why that cannot be told (the rule then fails closed). */
export type PathScopeResult =
  | { readonly ok: true; readonly value: boolean }
  | { readonly ok: false; readonly error: string };

export type PathScope = (ref: ToolRef, args: Readonly<Record<string, unknown>>) => PathScopeResult;

const inside = (path: string, dir: string) => path === dir || path.startsWith(dir === '/' ? '/' : `${dir}/`);

/** `paths` are absolute and normal (compile-rule checks that); `descending` matches the descending tools. */
export function compilePathScope(
  paths: readonly string[],
  options: {
    readonly deny: boolean;
    readonly descending: (ref: ToolRef) => boolean;
    readonly upstreams: ReadonlyMap<string, PolicyUpstream>;
  },
): PathScope {
  const folded = new Map<string, readonly string[]>();
  const listedFor = (upstream: PolicyUpstream | undefined): readonly string[] => {
    if (!upstream?.caseInsensitive) return paths;
    let list = folded.get(upstream.name);
    if (!list) {
      list = paths.map((p) => foldPath(p, upstream.cwd));
      folded.set(upstream.name, list);
    }
    return list;
  };
  return (ref, args) => {
    const upstream = options.upstreams.get(ref.upstream);
    const values: string[] = [];
    for (const [name, value] of Object.entries(args)) {
      if (!isPathName(name, upstream?.pathArguments)) continue;
      for (const item of Array.isArray(value) ? value : [value])
        if (typeof item === 'string')
          // Idempotent on prepared arguments; a program that calls decide() directly gets the same judgement.
          values.push(normalizePath(item, upstream?.cwd, name, upstream?.caseInsensitive === true));
    }
    if (values.length === 0) return { ok: true, value: false };
    const relative = values.find((v) => !v.startsWith('/'));
    if (relative !== undefined)
      return {
        ok: false,
        error: `path "${relative}" is relative and upstream ${ref.upstream} has no cwd, so paths cannot place it`,
      };
    const listed = listedFor(upstream);
    if (!options.deny) return { ok: true, value: values.every((v) => listed.some((p) => inside(v, p))) };
    const descends = options.descending(ref);
    return {
      ok: true,
      value: values.some((v) => listed.some((p) => inside(v, p) || (descends && inside(p, v)))),
    };
  };
}
