// The one preview rule every surface uses to show an effect to a person: every fact and every argument by name, each
// value bounded on its own (start, size, end), names escaped and bounded, nested values bounded entry by entry, and
// the whole bounded — so a long harmless value can never push the one that matters out of sight.
import { describe, expect, it } from 'vitest';
import {
  effectPreview,
  PREVIEW_LIMITS,
  previewLines,
  previewName,
  previewRows,
} from '../../src/controls/effect-preview.js';

const PAD = 'a'.repeat(6000);
const call = (args: Record<string, unknown>) => ({
  upstream: 'files',
  tool: 'move_file',
  arguments: JSON.stringify(args),
});
/** The rows of the arguments alone. */
const argRows = (args: Record<string, unknown>) => previewRows({ arguments: JSON.stringify(args) });

describe('the preview rule', () => {
  it('a long harmless first argument leaves every later argument in view, by name, whole', () => {
    const lines = previewLines(
      call({ note: PAD, source: '/share/payroll.txt', destination: '/tmp/out' }),
      'see the page',
    );
    expect(lines).toContain('argument source: "/share/payroll.txt"');
    expect(lines).toContain('argument destination: "/tmp/out"');
    expect(lines).toContain(`argument note: "${'a'.repeat(80)}…(6,000 chars)…${'a'.repeat(80)}"`);
    expect(lines.join('\n').length).toBeLessThan(1000);
  });

  it('a value of 871 characters of padding and then a path shows the end of the path', () => {
    const [row] = argRows({ path: `${' '.repeat(871)}/share/secret/payroll.txt` });
    expect(row!.value).toMatch(/…\(896 chars\)….*\/share\/secret\/payroll\.txt"$/);
    expect(row!.cut).toBe(true);
    expect(row!.whole).toBe(`${' '.repeat(871)}/share/secret/payroll.txt`);
    expect(row!.chars).toBe(896);
  });

  it('a fact of the author is bounded the same way: start and end, with its size', () => {
    const [row] = previewRows({ path: `${'x'.repeat(900)}/etc/shadow` });
    expect(row!.value).toBe(`${'x'.repeat(80)}…(911 chars)…${'x'.repeat(69)}/etc/shadow`);
  });

  it('many arguments: the first rows shown, the rest counted and named, the lines bounded', () => {
    const args = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`a${i}`, PAD]));
    const preview = effectPreview(call(args));
    expect(preview.rows).toHaveLength(PREVIEW_LIMITS.rows);
    expect(preview.hidden.count).toBe(502 - PREVIEW_LIMITS.rows);
    const lines = previewLines(call(args), 'the review page shows every one');
    expect(lines.at(-1)).toMatch(
      /^…and 472 more not shown here \(a28, a29, .*a47, …\): the review page shows every one$/,
    );
    expect(lines.join('\n').length).toBeLessThan(PREVIEW_LIMITS.rows * 400 + 2000);
  });

  it('names are escaped and bounded: a name cannot forge a line or hide behind a long one', () => {
    expect(previewName('source')).toBe('source');
    expect(previewName('x\nargument source: "/ok"')).toBe('"x\\nargument source: \\"/ok\\""');
    expect(previewName('n'.repeat(5000))).toBe(`${'n'.repeat(24)}…(5,000 chars)…${'n'.repeat(24)}`);
    const lines = previewLines(call({ 'a\u202eb': 1 }), '');
    expect(lines).toContain('argument "a\\u202eb": 1');
  });

  it('a value with line breaks or bidirectional overrides shows them as escapes, never as text that moves', () => {
    const lines = previewLines({ note: 'ok\nargument source: "/fake"', flip: 'abc\u202edef' }, '');
    expect(lines).toEqual(['note: ok\\nargument source: "/fake"', 'flip: abc\\u202edef']);
  });

  it('nested values are bounded per string and per container, and the whole value again', () => {
    const [row] = argRows({
      options: {
        keep: PAD,
        list: Array.from({ length: 50 }, (_, i) => i),
        deep: { a: { b: { c: { d: 1 } } } },
      },
    });
    expect(row!.value).toContain('"keep":"aaaaaaaaaaaaaaaa…(6,000 chars)…aaaaaaaaaaaaaaaa"');
    expect(row!.value).toContain('[0,1,2,3,4,5,6,7,8,9,…(40 more)]');
    expect(row!.value).toContain('"deep":{"a":{"b":{…1 entries…}}}');
    expect(row!.cut).toBe(true);
    expect(JSON.parse(row!.whole)).toMatchObject({ keep: PAD });
  });

  it('a value is cut on whole characters: no half of a pair is shown', () => {
    const [row] = argRows({ emoji: '😀'.repeat(300) });
    expect(row!.value).toBe(`"${'😀'.repeat(80)}…(300 chars)…${'😀'.repeat(80)}"`);
  });

  it('arguments that are not a JSON object are one fact, bounded at both ends (never a prefix)', () => {
    const rows = previewRows({ arguments: `{"note":"${PAD}","source":"/share/payroll.txt"` });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.value.endsWith('"source":"/share/payroll.txt"')).toBe(true);
  });
});
