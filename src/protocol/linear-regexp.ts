// The regular expression engine of every Ajv in mrtr: RE2 (re2js), whose matching time is linear in the input. A
// JSON Schema `pattern` comes from outside (a tool author, an upstream server), and with JavaScript's backtracking
// engine one nested quantifier lets a 40-character argument hold the event loop for seconds. A pattern RE2 cannot
// run (lookaround, backreferences) is refused with the reason, never handed to a backtracking engine instead.
import { RE2JS } from 're2js';
import { InvalidArgumentError, type MrtrError } from './mrtr-error.js';

/** What Ajv calls `.test()` on: a compiled pattern. */
export interface LinearPattern {
  test(input: string): boolean;
  /** Ajv shares one compiled pattern per `toString()` within a schema: it must name the pattern. */
  toString(): string;
}

// JavaScript's `\s` (ECMA-262 WhiteSpace and LineTerminator); RE2's is ASCII only, so it is spelt out.
const JS_SPACE =
  '\\t\\n\\x{0B}\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}';
// JavaScript's `.` stops at every line terminator; RE2's stops at `\n` only.
const JS_DOT = '[^\\n\\r\\x{2028}\\x{2029}]';

/**
 * The pattern in RE2's syntax, meaning what ECMA-262 means by it: `\s`, `\S` and `.` are widened to JavaScript's
 * sets; `\uXXXX`, `\u{…}`, `\cX` and `(?<name>` become RE2's spellings (re2js's translation does those).
 */
function toRe2Syntax(pattern: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '\\' && i + 1 < pattern.length) {
      const next = pattern[i + 1];
      i++;
      if (next === 's') out += inClass ? JS_SPACE : `[${JS_SPACE}]`;
      // Inside a class RE2 has no way to say "not JavaScript's space"; its ASCII `\S` is the nearest (documented).
      else if (next === 'S') out += inClass ? '\\S' : `[^${JS_SPACE}]`;
      else out += `\\${next}`;
      continue;
    }
    if (inClass) {
      if (ch === ']') inClass = false;
      // A `[` inside a class is a literal in JavaScript; RE2 would read `[:alpha:]` as a POSIX class.
      else if (ch === '[') {
        out += '\\[';
        continue;
      }
    } else if (ch === '[') {
      inClass = true;
      // A `]` first in a class is a literal in RE2 but ends an empty class in JavaScript: keep JavaScript's reading.
      if (pattern[i + 1] === ']') {
        out += '[^\\x00-\\x{10FFFF}]';
        i++;
        inClass = false;
        continue;
      }
      if (pattern[i + 1] === '^' && pattern[i + 2] === ']') {
        out += '[\\x00-\\x{10FFFF}]';
        i += 2;
        inClass = false;
        continue;
      }
    } else if (ch === '.') {
      out += JS_DOT;
      continue;
    }
    out += ch;
  }
  return RE2JS.translateRegExp(out);
}

/**
 * The most RE2 instructions a pattern may compile to. RE2 runs in linear time, but re2js takes about 10 µs an
 * instruction to compile, and a 37-character `(?:a{0,999}b|a{0,999}c|a{0,999}d)*` is 6,000 of them: a hostile
 * upstream's 5 KB pattern held the event loop for 10 s before any argument was checked.
 */
export const MAX_PATTERN_PROGRAM = 2000;

const COUNTED = /^\{(\d+)(,(\d*))?\}/;

/**
 * An upper bound of the instructions RE2 compiles `pattern` (valid ECMA-262) to, the way RE2 sizes one: a counted
 * repeat copies what it repeats, alternatives and groups add theirs. Stops counting past `limit`.
 */
export function patternProgramSize(pattern: string, limit = MAX_PATTERN_PROGRAM): number {
  // Per open group: the finished alternatives' size, the current one's, and the size of its last atom.
  const stack: Array<{ done: number; alt: number; last: number }> = [];
  let cur = { done: 0, alt: 0, last: 0 };
  const atom = (size: number) => {
    cur.alt += size;
    cur.last = size;
  };
  for (let i = 0; i < pattern.length; i++) {
    if (cur.done + cur.alt > limit) return cur.done + cur.alt;
    const ch = pattern[i];
    if (ch === '\\') {
      // `\p{L}`, `\u{1F600}`, `\k<name>`: their braces are no repeat count.
      const open = pattern[i + 2];
      if (
        (open === '{' && 'pPu'.includes(pattern[i + 1] ?? '')) ||
        (open === '<' && pattern[i + 1] === 'k')
      ) {
        const close = pattern.indexOf(open === '{' ? '}' : '>', i + 2);
        i = close === -1 ? i + 1 : close;
      } else i++;
      atom(1);
    } else if (ch === '[') {
      // A class is one instruction, whatever its ranges; `]` first closes an empty class in JavaScript.
      let j = i + 1;
      while (j < pattern.length && pattern[j] !== ']') j += pattern[j] === '\\' ? 2 : 1;
      i = j;
      atom(1);
    } else if (ch === '(') {
      stack.push(cur);
      cur = { done: 0, alt: 0, last: 0 };
      if (pattern[i + 1] === '?') {
        // `(?:`, `(?=`, `(?!`, `(?<=`, `(?<!`, `(?<name>`: the group's kind, not its content.
        const name = pattern[i + 2] === '<' && !'=!'.includes(pattern[i + 3] ?? '');
        i = name ? pattern.indexOf('>', i) : i + (pattern[i + 2] === '<' ? 3 : 2);
      }
    } else if (ch === ')') {
      const size = cur.done + cur.alt + 2;
      cur = stack.pop() ?? { done: 0, alt: 0, last: 0 };
      atom(size);
    } else if (ch === '|') {
      cur.done += cur.alt + 1;
      cur.alt = 0;
      cur.last = 0;
    } else if (ch === '*' || ch === '+' || ch === '?') {
      cur.alt += 2;
    } else if (ch === '{' && COUNTED.test(pattern.slice(i, i + 24))) {
      const [text, min, comma, max] = COUNTED.exec(pattern.slice(i, i + 24)) as RegExpExecArray;
      const copies = comma === undefined ? Number(min) : max === '' ? Number(min) + 1 : Number(max);
      cur.alt += cur.last * Math.max(copies - 1, 0) + copies;
      cur.last *= Math.max(copies, 1);
      i += text.length - 1;
    } else atom(1);
  }
  return cur.done + cur.alt;
}

/** Why RE2 could not compile a pattern, in words a schema's author can act on. */
function refusal(pattern: string, reason: string): MrtrError {
  return new InvalidArgumentError(
    `pattern ${JSON.stringify(pattern)} is refused: RE2, the linear-time engine mrtr checks patterns with, cannot run it (${reason}); RE2 has no lookaround, no backreferences and no repeat count over 1000`,
  );
}

function compile(pattern: string, flags: string): LinearPattern {
  try {
    // JSON Schema's patterns are ECMA-262 regular expressions: one JavaScript refuses is invalid, whatever RE2 says.
    // Constructing a RegExp only parses it; nothing is matched with it.
    new RegExp(pattern, flags);
  } catch (error) {
    throw new InvalidArgumentError(
      `pattern ${JSON.stringify(pattern)} is not a valid regular expression: ${(error as Error).message}`,
    );
  }
  // A count over 1000 RE2's parser refuses at once, with its own words; any other large program is refused here.
  const overCount = [...pattern.matchAll(/\{(\d+)(?:,(\d*))?\}/g)].some(
    ([, min, max]) => Number(min) > 1000 || Number(max ?? 0) > 1000,
  );
  if (!overCount && patternProgramSize(pattern) > MAX_PATTERN_PROGRAM)
    throw new InvalidArgumentError(
      `pattern ${JSON.stringify(pattern)} is refused: it would compile to more than ${MAX_PATTERN_PROGRAM} RE2 instructions (its counted repeats copy what they repeat), too slow to compile; write it with fewer or smaller {n,m}`,
    );
  let re2: RE2JS;
  try {
    re2 = RE2JS.compile(toRe2Syntax(pattern));
  } catch (error) {
    throw refusal(pattern, (error as Error).message.replace(/^error parsing regexp: /, ''));
  }
  const name = `/${pattern}/${flags}`;
  return { test: (input) => re2.test(input), toString: () => name };
}

// Ajv compiles a pattern once per schema; the gateway compiles an upstream's schemas again on every change of its
// listing, so compiled patterns are kept (a few: a peer can send endlessly many).
const MAX_CACHED = 1024;
const cache = new Map<string, LinearPattern>();

/** Ajv's `code.regExp`: compile `pattern` for linear-time matching, or throw an MrtrError saying why it cannot be. */
function linearRegExpEngine(pattern: string, flags: string): LinearPattern {
  const key = `${flags}/${pattern}`;
  let compiled = cache.get(key);
  if (!compiled) {
    compiled = compile(pattern, flags);
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
    cache.set(key, compiled);
  }
  return compiled;
}

/** The engine as Ajv takes it. `code` is read only by Ajv's standalone code generation, which mrtr never uses. */
export const linearRegExp = Object.assign(linearRegExpEngine, { code: 'linearRegExp' });
