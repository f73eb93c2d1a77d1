// The one sanitizer for server text bound for a terminal. Printers take `SafeText`, which only these functions
// make, so a server's bytes cannot reach the screen unfiltered by someone forgetting a call: tsc refuses it.

declare const SAFE: unique symbol;

/** Text that is safe to write to a terminal: no control sequences, no invisible or direction-changing characters. */
export type SafeText = string & { readonly [SAFE]: true };

declare const BLOCK: unique symbol;

/**
 * Server text that may span lines, sanitized but not yet printable: a printer takes `SafeText`, so a block must go
 * through `quoteLines` or `afterLabel`, which put something of ours in front of every line it has.
 */
export type SafeBlock = string & { readonly [BLOCK]: true };

/**
 * What every line of multi-line server text starts with on a terminal. No line of the CLI's own starts with it, so a
 * server cannot print a line that passes for ours (a fake "✓ verified by mrtr", a fake "round 2 · answered").
 */
export const QUOTE = '┆ ' as SafeText;

// Format characters (bidi overrides and isolates, zero-width space/joiners, BOM, tags), line and paragraph
// separators (U+2028, U+2029) and lone surrogates: invisible on screen, yet they reorder or hide what is shown.
const INVISIBLE = /[\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;

/** ESC and C1 introducers of strings that run to a terminator (OSC, DCS, SOS, PM, APC): OSC 52 writes clipboards. */
const STRING_INTRODUCERS = new Set([']', 'P', 'X', '^', '_']);
const C1_STRING_INTRODUCERS = new Set([0x90, 0x98, 0x9d, 0x9e, 0x9f]);

/** Index just past a control string starting at `i` (ended by BEL, ST = ESC \\ or 0x9c, or the end of the text). */
function skipControlString(text: string, i: number): number {
  for (let j = i; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === 0x07 || c === 0x9c) return j + 1;
    if (c === 0x1b && text[j + 1] === '\\') return j + 2;
  }
  return text.length;
}

/** Index just past a CSI sequence whose parameters start at `i` (ended by a final byte 0x40–0x7e). */
function skipCsi(text: string, i: number): number {
  let j = i;
  while (j < text.length) {
    const c = text.charCodeAt(j);
    j++;
    if (c >= 0x40 && c <= 0x7e) break;
  }
  return j;
}

function clean(text: string, multiline: boolean): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x1b) {
      const next = text[i + 1];
      if (next === '[') i = skipCsi(text, i + 2);
      else if (next !== undefined && STRING_INTRODUCERS.has(next)) i = skipControlString(text, i + 2);
      else i += next !== undefined && next >= ' ' && next <= '~' ? 2 : 1;
      continue;
    }
    if (c === 0x9b) {
      i = skipCsi(text, i + 1);
      continue;
    }
    if (C1_STRING_INTRODUCERS.has(c)) {
      i = skipControlString(text, i + 1);
      continue;
    }
    if (c === 0x0a || c === 0x0d || c === 0x09) {
      // A newline in a title or a name would draw a line that looks like ours (a fake "╰─ sent"): one line only.
      if (multiline && c !== 0x0d) out += text[i];
      else if (!multiline) out += ' ';
      i++;
      continue;
    }
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) {
      i++;
      continue;
    }
    const cp = text.codePointAt(i) as number;
    const ch = String.fromCodePoint(cp);
    if (!INVISIBLE.test(ch)) out += ch;
    i += ch.length;
  }
  return out;
}

/** Server text as one line: control sequences and invisible characters removed, newlines and tabs become spaces. */
export function safeLine(text: unknown): SafeText {
  return clean(typeof text === 'string' ? text : String(text), false) as SafeText;
}

/**
 * Server text that may span lines (a message, a result): control sequences and invisible characters removed,
 * newlines and tabs kept. A printer that frames it must prefix every line (see `safeLines`).
 */
export function safeText(text: unknown): SafeBlock {
  return clean(typeof text === 'string' ? text : String(text), true) as SafeBlock;
}

/** Server text split into safe lines, each to be printed behind the printer's own frame (a question's `│`). */
export function safeLines(text: unknown): SafeText[] {
  return safeText(text).split('\n') as SafeText[];
}

/** Server text that stands on its own lines (a result, a prompt's messages): every line behind `QUOTE`. */
export function quoteLines(text: unknown): SafeText[] {
  return safeLines(text).map((line) => `${QUOTE}${line}` as SafeText);
}

/**
 * Server text printed after a label of ours (`mrtr call: <error>`): its first line goes after the label, each further
 * line behind an indented `QUOTE`, so a newline in an error message cannot start a line of its own.
 */
export function afterLabel(text: unknown): [SafeText, ...SafeText[]] {
  const [first = '' as SafeText, ...rest] = safeLines(text);
  return [first, ...rest.map((line) => `  ${QUOTE}${line}` as SafeText)];
}

/**
 * Build a line from our own words (the literal parts) and safe pieces. Only `SafeText` and numbers may be
 * interpolated: a raw server string does not type-check.
 */
export function safe(strings: TemplateStringsArray, ...values: ReadonlyArray<SafeText | number>): SafeText {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += String(values[i]) + (strings[i + 1] ?? '');
  return out as SafeText;
}

/** Join safe pieces on one line (a separator with a newline is flattened like any other text). */
export function joinSafe(parts: readonly SafeText[], separator: string): SafeText {
  return parts.join(safeLine(separator)) as SafeText;
}
