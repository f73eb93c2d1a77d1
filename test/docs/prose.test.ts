// The README and the architecture page are read once by a newcomer: their prose averages 25 words a sentence or
// fewer. Code blocks, tables, headings and HTML comments are left out; inline code counts as one word.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const MAX_AVERAGE_WORDS = 25;

/** The word count of each prose sentence of a Markdown text. */
function sentenceLengths(markdown: string): number[] {
  const prose = markdown
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/```[\s\S]*?```/g, '')
    .split('\n')
    .filter((line) => !/^\s*(\||#|<)/.test(line))
    .join('\n')
    .replace(/`[^`]*`/g, 'X')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
  const lengths: number[] = [];
  for (const paragraph of prose.split(/\n\s*\n|\n\s*[-*] |\n\s*\d+\. /))
    for (const sentence of paragraph.replace(/\s+/g, ' ').split(/(?<=[.!?])\s+(?=[A-Z`*(])/)) {
      const words = sentence
        .trim()
        .split(/\s+/)
        .filter((word) => /[A-Za-z0-9]/.test(word));
      if (words.length > 0) lengths.push(words.length);
    }
  return lengths;
}

const average = (lengths: number[]) => lengths.reduce((a, b) => a + b, 0) / lengths.length;

describe('prose a newcomer reads once', () => {
  it('counts sentences, leaving code, tables, headings and comments out', () => {
    const text =
      '# A long heading of many words\n\nOne two three. Four `five six` seven!\n\n| a | b |\n\n```ts\nx y z\n```\n';
    expect(sentenceLengths(text)).toEqual([3, 3]);
  });

  for (const file of ['README.md', 'docs/architecture.md'])
    it(`${file} averages ${MAX_AVERAGE_WORDS} words a sentence or fewer`, () => {
      const lengths = sentenceLengths(readFileSync(join(ROOT, file), 'utf8'));
      expect(lengths.length).toBeGreaterThan(10);
      expect(average(lengths)).toBeLessThanOrEqual(MAX_AVERAGE_WORDS);
    });
});
