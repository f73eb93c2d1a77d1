// What `mrtr gateway pin` does, without the doing: given the book and what the upstreams list now, the lines to print
// and the book to save. With no --accept and no --all nothing is pinned: the command then only shows where the
// lock file and the upstreams disagree, each change line by line.
import type { JsonObject } from '../../protocol/index.js';
import type { PinBook } from './pin-book.js';
import { pinKey, pinPattern } from './pin-key.js';

/** One tool as an upstream lists it now. */
export interface SeenTool {
  readonly upstream: string;
  readonly tool: string;
  readonly definition: JsonObject;
}

export interface PinCommandOptions {
  /** `<upstream>/<tool>` keys or globs (`files/*`): pin these when new, accept them when changed. */
  accept?: readonly string[];
  /** Pin every new tool and accept every change. */
  all?: boolean;
}

export interface PinCommandPlan {
  /** What to print, one line each: a status per tool, a change per indented line, a summary last. */
  readonly lines: string[];
  /** The book with the pins made (a copy: the one given is untouched). */
  readonly book: PinBook;
  /** True when the book gained or replaced a pin: save it. */
  readonly changed: boolean;
  /** Accept patterns that matched no tool listed now (a typo, or an upstream that did not answer); not in `lines`. */
  readonly unmatched: string[];
  /** Tools listed now that the book (after the pins made) does not serve as listed: `<key> (new|changed)`. */
  readonly differing: string[];
}

/**
 * Compare what the upstreams list with the book and pin what the options say.
 * @throws MrtrError ERR_INVALID_ARGUMENT for an accept pattern that is not `<upstream>/<tool>`.
 */
export function pinCommandPlan(
  book: PinBook,
  seenTools: readonly SeenTool[],
  options: PinCommandOptions = {},
): PinCommandPlan {
  const patterns = (options.accept ?? []).map((pattern) => ({
    pattern,
    matches: pinPattern(pattern),
    used: false,
  }));
  const wanted = (key: string): boolean => {
    let hit = options.all === true;
    for (const pattern of patterns) {
      if (pattern.matches(key)) hit = pattern.used = true;
    }
    return hit;
  };
  const updated = book.clone();
  const lines: string[] = [];
  const differing: string[] = [];
  const counts = { unchanged: 0, pinned: 0, accepted: 0, new: 0, changed: 0 };
  const seenKeys = new Set<string>();
  const sorted = [...seenTools].sort((a, b) =>
    compare(pinKey(a.upstream, a.tool), pinKey(b.upstream, b.tool)),
  );
  for (const { upstream, tool, definition } of sorted) {
    const key = pinKey(upstream, tool);
    seenKeys.add(key);
    const check = updated.check(upstream, tool, definition);
    const take = wanted(key);
    if (check.status === 'pinned') {
      counts.unchanged++;
      lines.push(`unchanged ${key}`);
    } else if (check.status === 'new') {
      if (take) {
        updated.pin(upstream, tool, definition);
        counts.pinned++;
        lines.push(`pinned    ${key} (new)`);
      } else {
        counts.new++;
        differing.push(`${key} (new)`);
        lines.push(`new       ${key} (not pinned: --accept ${key} or --all pins it)`);
      }
    } else {
      const changes = updated.drift().find((d) => d.upstream === upstream && d.tool === tool)?.changes ?? [];
      if (take) {
        updated.pin(upstream, tool, definition);
        counts.accepted++;
        lines.push(`accepted  ${key} (changed since it was pinned)`);
      } else {
        counts.changed++;
        differing.push(`${key} (changed)`);
        lines.push(`changed   ${key} (withheld until accepted: --accept ${key})`);
      }
      for (const change of changes) lines.push(`    ${change}`);
    }
  }
  // A pin whose tool is no longer listed stays: the tool may come back, and must come back the same.
  const listedUpstreams = new Set(seenTools.map((seen) => seen.upstream));
  for (const { upstream, tool } of book.pins()) {
    const key = pinKey(upstream, tool);
    if (listedUpstreams.has(upstream) && !seenKeys.has(key))
      lines.push(`gone      ${key} (pinned, not listed by ${upstream} now; the pin is kept)`);
  }
  const unmatched = patterns.filter((pattern) => !pattern.used).map((pattern) => pattern.pattern);
  lines.push(summary(sorted.length, counts));
  return {
    lines: lines.map(printable),
    book: updated,
    changed: counts.pinned + counts.accepted > 0,
    unmatched,
    differing: differing.map(printable),
  };
}

function summary(
  listed: number,
  counts: Record<'unchanged' | 'pinned' | 'accepted' | 'new' | 'changed', number>,
): string {
  const parts = [`${counts.unchanged} unchanged`];
  if (counts.pinned > 0) parts.push(`${counts.pinned} newly pinned`);
  if (counts.accepted > 0) parts.push(`${counts.accepted} changes accepted`);
  if (counts.new > 0) parts.push(`${counts.new} new, not pinned`);
  if (counts.changed > 0) parts.push(`${counts.changed} changed, withheld`);
  return `${listed} ${listed === 1 ? 'tool' : 'tools'} listed: ${parts.join(', ')}`;
}

/**
 * Control, format, separator and lone surrogate characters as `\uXXXX`: tool names, schema keys and texts are the
 * upstream's, and on an admin's terminal they could erase or repaint a line, or forge one ("unchanged files/…").
 * Escaped rather than removed, so two names that differ only by one stay told apart.
 */
function printable(line: string): string {
  return line.replace(
    /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu,
    (c) => `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`,
  );
}

/** Code-unit order, as the lock file's keys: the same on every machine whatever its locale. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
