// stdio framing, server and client alike (src/protocol/line-splitter.ts): lines split on bytes, CRLF tolerated, blank
// lines dropped, and an overlong line refused without ever being held whole.
import { describe, expect, it } from 'vitest';
import { LineSplitter } from '../../src/protocol/index.js';

function splitter(max: number) {
  const lines: string[] = [];
  let overflows = 0;
  const s = new LineSplitter(max, {
    line: (l) => lines.push(l),
    overflow: () => {
      overflows++;
    },
  });
  return { s, lines, overflows: () => overflows };
}

describe('LineSplitter', () => {
  it('splits across chunk boundaries, drops a trailing CR, keeps multi-byte characters whole', () => {
    const { s, lines } = splitter(100);
    const text = Buffer.from('first\r\nsécond ✓\nthird', 'utf8');
    // Feed one byte at a time: every boundary, including inside multi-byte characters, is crossed.
    for (let i = 0; i < text.length; i++) s.push(text.subarray(i, i + 1));
    expect(lines).toEqual(['first', 'sécond ✓']);
    s.end();
    expect(lines).toEqual(['first', 'sécond ✓', 'third']);
  });

  it('reports an overlong line once, as soon as it passes the cap, and resumes after its newline', () => {
    const { s, lines, overflows } = splitter(10);
    s.push(Buffer.from('0123456789'));
    expect(overflows()).toBe(0);
    s.push(Buffer.from('A'));
    expect(overflows()).toBe(0); // one byte over could still be the CR of a CRLF
    s.push(Buffer.from('B'));
    expect(overflows()).toBe(1);
    s.push(Buffer.from('more of the same overlong line'));
    s.push(Buffer.from(' still\nok\n'));
    expect(overflows()).toBe(1);
    expect(lines).toEqual(['ok']);
  });

  it('applies the cap to the line itself: a CRLF ending does not count, one byte more does', () => {
    const { s, lines, overflows } = splitter(4);
    s.push(Buffer.from('abcd\r\nabcd\nabcde\r\nabcde\nok\n'));
    expect(lines).toEqual(['abcd', 'abcd', 'ok']);
    expect(overflows()).toBe(2);
  });

  it('passes no blank or whitespace-only line on: they carry no message', () => {
    const { s, lines } = splitter(100);
    s.push(Buffer.from('\n\r\n  \t\nx\n \n'));
    expect(lines).toEqual(['x']);
  });

  it('refuses a cap that is no cap (NaN, 0, Infinity, a fraction)', () => {
    for (const max of [Number.NaN, 0, Number.POSITIVE_INFINITY, 1.5])
      expect(() => splitter(max)).toThrow(
        `maxLineBytes must be an integer from 1 to 9007199254740991, got ${max}`,
      );
  });

  it('never holds more than the cap of a line that never ends', () => {
    const { s, overflows } = splitter(1024);
    const chunk = Buffer.alloc(64 * 1024, 0x78);
    let most = 0;
    for (let i = 0; i < 256; i++) {
      s.push(chunk); // 16 MiB in all, no newline
      most = Math.max(most, s.bufferedBytes);
    }
    expect(most).toBeLessThanOrEqual(1025);
    expect(overflows()).toBe(1);
  });
});
