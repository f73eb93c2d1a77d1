// Tool globs: `*` any run of characters, `?` exactly one, everything else itself. Matched by hand with the classic
// two-pointer walk that only ever backtracks to the last `*`: time at most pattern × name, never exponential.

export type Glob = (text: string) => boolean;

export const hasWildcard = (pattern: string): boolean => /[*?]/.test(pattern);

export function compileGlob(pattern: string): Glob {
  if (pattern === '*') return () => true;
  if (!hasWildcard(pattern)) return (text) => text === pattern;
  return (text) => globMatches(pattern, text);
}

export function globMatches(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let starP = -1; // position in the pattern just after the last `*` seen
  let starT = 0; // where in the text that `*` is assumed to end
  // Compare code units, not code points: `?` then matches one half of a surrogate pair. Tool names are ASCII in
  // practice (MCP recommends [A-Za-z0-9_.-]); the worst case is a glob that fails to match an odd name.
  while (t < text.length) {
    const c = pattern[p];
    if (c === '*') {
      starP = ++p;
      starT = t;
    } else if (c !== undefined && (c === '?' || c === text[t])) {
      p++;
      t++;
    } else if (starP !== -1) {
      p = starP;
      t = ++starT;
    } else {
      return false;
    }
  }
  while (pattern[p] === '*') p++;
  return p === pattern.length;
}

/** `<upstream>/<tool glob>`, each part matched on its own: a `*` never reaches across the `/`. */
export interface ToolPattern {
  readonly upstream: Glob;
  readonly tool: Glob;
}

/** The two parts of `files/read_*`, or undefined when it has no `/` or an empty part. */
export function splitToolPattern(pattern: string): { upstream: string; tool: string } | undefined {
  const slash = pattern.indexOf('/');
  if (slash <= 0 || slash === pattern.length - 1) return undefined;
  return { upstream: pattern.slice(0, slash), tool: pattern.slice(slash + 1) };
}
