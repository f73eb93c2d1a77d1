// What a person is shown of an effect, the one rule for every surface (consent question, review page, console card,
// JSON API, webhooks): every fact and every argument by name, each value bounded on its own — its start, its end and
// its size — never a prefix of the whole, so a long harmless value cannot push the one that matters out of sight.
import type { Effect } from './effect.js';

export const PREVIEW_LIMITS = {
  /** A value longer than this (in characters) is shown as its start, its size and its end. */
  valueChars: 200,
  /** Characters kept at each end of a value that is cut. */
  keepChars: 80,
  /** A name longer than this is cut the same way. */
  nameChars: 64,
  /** A string inside an object or array is cut shorter, so the value around it stays in view. */
  leafChars: 48,
  /** Entries shown of an object or array inside a value; the rest are counted. */
  entries: 10,
  /** Depth shown inside a value; deeper containers are counted. */
  depth: 3,
  /** Rows (facts and arguments) outside the review page; the rest are counted and named. */
  rows: 30,
  /** Names listed of the rows not shown. */
  hiddenNames: 20,
} as const;

/** One fact of the effect, or one argument of a gateway call, as a person reads it. */
export interface PreviewRow {
  readonly kind: 'fact' | 'argument';
  /** The name, escaped (quoted when it is not a plain word) and bounded. */
  readonly name: string;
  /** The value, escaped and bounded: start and end kept, its size between them. */
  readonly value: string;
  /** The value whole, for a page's "show all" (strings as they are, other values as indented JSON). */
  readonly whole: string;
  /** Characters in the whole value. */
  readonly chars: number;
  /** Whether `value` leaves part of `whole` out. */
  readonly cut: boolean;
}

export interface EffectPreview {
  readonly rows: readonly PreviewRow[];
  /** The rows left out (past `PREVIEW_LIMITS.rows`): how many, and the first names. */
  readonly hidden: { readonly count: number; readonly names: readonly string[] };
}

// Characters that move or hide text (line breaks, controls, bidirectional overrides, zero-width marks) are shown as
// escapes, so one value cannot forge another line or reorder what is read.
const INVISIBLE = /[\p{Cc}\p{Cf}\u2028\u2029]/gu;
const ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const hex = (c: string): string => {
  const code = c.codePointAt(0) ?? 0;
  return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`;
};
const visible = (text: string): string => text.replace(INVISIBLE, (c) => ESCAPES[c] ?? hex(c));

const count = (n: number): string => n.toLocaleString('en-US');

/** Characters as a person counts them: code points, so a pair (an emoji) is one. */
export function charCount(text: string): number {
  return text.length - (text.match(PAIRS)?.length ?? 0);
}
const PAIRS = /[\ud800-\udbff][\udc00-\udfff]/g;

/** `text` in at most `max` characters (code points, so no pair is split): start, `…(N chars)…`, end. */
function bounded(
  text: string,
  max: number,
  keep: number,
  shown: (part: string) => string,
  size?: number,
): string {
  const chars = charCount(text);
  if (chars <= max) return shown(text);
  // Only the ends are split into code points: a value of a megabyte costs no more than a short one.
  const head = Array.from(text.slice(0, keep * 2 + 2))
    .slice(0, keep)
    .join('');
  const tail = Array.from(text.slice(-(keep * 2 + 2)))
    .slice(-keep)
    .join('');
  return `${shown(head)}…(${count(size ?? chars)} chars)…${shown(tail)}`;
}

/** A string as JSON shows it (quoted), cut to `max` with both ends kept. */
const quoted = (text: string, max: number, keep: number): string => {
  const inner = (part: string) => visible(JSON.stringify(part).slice(1, -1));
  return `"${bounded(text, max, keep, inner)}"`;
};

const PLAIN_NAME = /^[A-Za-z0-9_$.-]+$/;

/** A name as shown: plain words as they are, anything else quoted and escaped; long names cut. */
export function previewName(name: string): string {
  const { nameChars, keepChars } = PREVIEW_LIMITS;
  const keep = Math.min(keepChars, Math.floor(nameChars / 2) - 8);
  if (PLAIN_NAME.test(name)) return bounded(name, nameChars, keep, (p) => p);
  return quoted(name, nameChars, keep);
}

/** A JSON value inside an argument: strings cut shorter, containers to their first entries, depth bounded. */
function nested(value: unknown, depth: number): string {
  const { leafChars, entries, depth: maxDepth } = PREVIEW_LIMITS;
  if (typeof value === 'string') return quoted(value, leafChars, Math.floor(leafChars / 2) - 8);
  if (value === null || typeof value !== 'object') return String(value);
  const items = Array.isArray(value) ? value : Object.entries(value);
  const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  if (items.length === 0) return `${open}${close}`;
  if (depth >= maxDepth) return `${open}…${count(items.length)} entries…${close}`;
  const shown = items.slice(0, entries).map((item) => {
    if (Array.isArray(value)) return nested(item, depth + 1);
    const [k, v] = item as [string, unknown];
    return `${quoted(k, leafChars, Math.floor(leafChars / 2) - 8)}:${nested(v, depth + 1)}`;
  });
  if (items.length > entries) shown.push(`…(${count(items.length - entries)} more)`);
  return `${open}${shown.join(',')}${close}`;
}

/** One argument's value: a string as JSON shows it, cut at both ends; an object or array entry by entry. */
function argumentRow(name: string, value: unknown): PreviewRow {
  const { valueChars, keepChars } = PREVIEW_LIMITS;
  const whole = typeof value === 'string' ? value : (JSON.stringify(value, null, 2) ?? String(value));
  const chars = charCount(whole);
  // An object or array is shown entry by entry, then bounded again as a whole, with the size of the value.
  const shown =
    typeof value === 'string'
      ? quoted(value, valueChars, keepChars)
      : bounded(nested(value, 0), valueChars * 2, keepChars * 2, (p) => p, chars);
  const cut = typeof value === 'string' ? chars > valueChars : shown !== visible(JSON.stringify(value) ?? '');
  return { kind: 'argument', name: previewName(name), value: shown, whole, chars, cut };
}

function factRow(name: string, value: Effect[string]): PreviewRow {
  const { valueChars, keepChars } = PREVIEW_LIMITS;
  const whole = value === null ? '—' : String(value);
  const chars = charCount(whole);
  return {
    kind: 'fact',
    name: previewName(name),
    value: bounded(whole, valueChars, keepChars, visible),
    whole,
    chars,
    cut: chars > valueChars,
  };
}

/** The arguments of a gateway call, when the effect carries them as a JSON object under `arguments`. */
function argumentsOf(value: Effect[string]): Array<[string, unknown]> | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const parsed = JSON.parse(value) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
    return Object.entries(parsed);
  } catch {
    return undefined;
  }
}

/** Every row of the effect: its facts in the author's order, and a call's `arguments` one by one, by name. */
export function previewRows(effect: Effect): PreviewRow[] {
  return Object.entries(effect).flatMap(([k, v]) => {
    const args = k === 'arguments' ? argumentsOf(v) : undefined;
    return args ? args.map(([name, value]) => argumentRow(name, value)) : [factRow(k, v)];
  });
}

/**
 * The rows a surface without room for all shows (`limit` in all), and what it leaves out. The author's facts (the
 * tool, the policy) come first: arguments fill the room that is left, so many arguments cannot crowd out a fact.
 */
export function effectPreview(effect: Effect, limit: number = PREVIEW_LIMITS.rows): EffectPreview {
  const all = previewRows(effect);
  let factRoom = limit;
  let argumentRoom = limit - Math.min(limit, all.filter((r) => r.kind === 'fact').length);
  const rows: PreviewRow[] = [];
  const rest: PreviewRow[] = [];
  for (const row of all) {
    const fits = row.kind === 'fact' ? factRoom-- > 0 : argumentRoom-- > 0;
    (fits ? rows : rest).push(row);
  }
  return {
    rows,
    hidden: { count: rest.length, names: rest.slice(0, PREVIEW_LIMITS.hiddenNames).map((r) => r.name) },
  };
}

/** A row as one line of text: `tool: move_file`, `argument source: "/share/payroll.txt"`. */
export const previewLine = (row: PreviewRow): string =>
  `${row.kind === 'argument' ? 'argument ' : ''}${row.name}: ${row.value}`;

/** The line that counts and names what is left out, and says where all of it can be read. */
export function hiddenLine(hidden: EffectPreview['hidden'], where: string): string | undefined {
  if (hidden.count === 0) return undefined;
  const more = hidden.count > hidden.names.length ? ', …' : '';
  return `…and ${count(hidden.count)} more not shown here (${hidden.names.join(', ')}${more}): ${where}`;
}

/** The effect as lines of text (a consent question, a webhook): bounded, every row by name or counted. */
export function previewLines(effect: Effect, where: string): string[] {
  const preview = effectPreview(effect);
  const last = hiddenLine(preview.hidden, where);
  return [...preview.rows.map(previewLine), ...(last ? [last] : [])];
}
