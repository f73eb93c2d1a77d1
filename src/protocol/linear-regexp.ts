// The regular expression engine of every Ajv in mrtr: RE2 (re2js), whose matching time is linear in the input. A
// JSON Schema `pattern` comes from outside (a tool author, an upstream server), and with JavaScript's backtracking
// engine one nested quantifier lets a 40-character argument hold the event loop for seconds. A pattern RE2 cannot
// run (lookaround, backreferences) is refused with the reason, never handed to a backtracking engine instead.
import { RE2JS } from 're2js';
import { MrtrError } from './mrtr-error.js';

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

/** Why RE2 could not compile a pattern, in words a schema's author can act on. */
function refusal(pattern: string, reason: string): MrtrError {
  return new MrtrError(
    'ERR_INVALID_ARGUMENT',
    `pattern ${JSON.stringify(pattern)} is refused: RE2, the linear-time engine mrtr checks patterns with, cannot run it (${reason}); RE2 has no lookaround, no backreferences and no repeat count over 1000`,
  );
}

function compile(pattern: string, flags: string): LinearPattern {
  try {
    // JSON Schema's patterns are ECMA-262 regular expressions: one JavaScript refuses is invalid, whatever RE2 says.
    // Constructing a RegExp only parses it; nothing is matched with it.
    new RegExp(pattern, flags);
  } catch (error) {
    throw new MrtrError(
      'ERR_INVALID_ARGUMENT',
      `pattern ${JSON.stringify(pattern)} is not a valid regular expression: ${(error as Error).message}`,
    );
  }
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
