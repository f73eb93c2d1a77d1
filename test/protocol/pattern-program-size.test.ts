// A second attack round on issue 37, item 2: RE2 matches in linear time, but re2js takes about 10 µs an instruction to
// compile a pattern, and counted repeats copy what they repeat. A 37-character pattern from a hostile upstream's tool
// schema compiled to 6,000 instructions, and a 5 KB one held the event loop for 10 s before any argument was checked.
// Such a pattern is refused like one RE2 cannot run (the gateway withholds the tool), before it is compiled.
import { describe, expect, it } from 'vitest';
import { linearRegExp, MAX_PATTERN_PROGRAM, patternProgramSize } from '../../src/protocol/linear-regexp.js';

/** `k` alternatives, each a counted repeat of up to 999: the shape that compiled slowest for its length. */
const alternatives = (k: number) =>
  `^(?:${Array.from({ length: k }, (_, i) => `a{0,999}${String.fromCharCode(98 + (i % 20))}${i}`).join('|')})*$`;

describe('a pattern whose counted repeats compile to too many instructions is refused before compiling', () => {
  it.each([
    ['three repeats of 999 in 37 characters', '^(?:a{0,999}b|a{0,999}c|a{0,999}d)*$'],
    ['24 alternatives (a 284-character pattern: 0.8 s to compile)', alternatives(24)],
    ['400 alternatives (a 5 KB pattern: 10 s to compile)', alternatives(400)],
    ['repeats side by side', `^${'[\\s\\S]{0,999}x'.repeat(3)}$`],
    ['a repeat of a group of repeats', '^(?:\\d{0,30}\\w{0,30}){0,40}$'],
    ['repeats inside a named group and a lookahead-free class', '^(?<n>\\p{L}{0,999}\\p{N}{0,999}){1,2}$'],
  ])('%s', (_, pattern) => {
    expect(patternProgramSize(pattern)).toBeGreaterThan(MAX_PATTERN_PROGRAM);
    expect(() => linearRegExp(pattern, 'u')).toThrow(/would compile to more than 2000 RE2 instructions/);
  });

  it.each([
    ['a host label', '^[a-z0-9-]{1,63}$'],
    ['a UUID', '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'],
    ['an e-mail address, bounded', '^[\\w.+-]{1,64}@[\\w-]{1,63}(?:\\.[\\w-]{1,63}){1,8}$'],
    ['one repeat of 999', '^a{0,999}$'],
    ['escapes whose braces are no repeat', '^\\p{L}{1,100}\\u{1F600}?\\d{3}$'],
    ['a class with a brace in it', '^[{}]{1,10}$'],
  ])('%s still compiles and matches', (_, pattern) => {
    const compiled = linearRegExp(pattern, 'u');
    expect(typeof compiled.test('x')).toBe('boolean');
  });
});
