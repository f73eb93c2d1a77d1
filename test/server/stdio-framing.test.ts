// stdio framing: lines split on bytes, CRLF tolerated, and an overlong line refused without ever being held whole.
import { describe, expect, it } from 'vitest';
import { LineSplitter } from '../../src/server/line-splitter.js';
import { serveStdio } from '../../src/server/stdio.js';
import { META } from '../helpers/mcp-http.js';
import { stdioPipes } from '../helpers/stdio-pipes.js';
import { testServer } from './test-server.js';

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

describe('serveStdio framing', () => {
  it('refuses a maxLineBytes that would silently disable the cap', () => {
    expect(() => serveStdio(testServer().core, { maxLineBytes: Number.NaN })).toThrow(
      'serveStdio: maxLineBytes must be an integer from 1 to 9007199254740991, got NaN',
    );
  });

  it('answers an overlong message with -32600 before it ends, then serves the next line', async () => {
    const { input, output, messages: out } = stdioPipes();
    const done = serveStdio(testServer().core, { input, output, maxLineBytes: 4096 });

    input.write(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"${'x'.repeat(8192)}`);
    await new Promise((r) => setImmediate(r));
    // The refusal comes while the line is still open: the server did not wait for (or keep) the rest of it.
    expect(out).toEqual([
      { jsonrpc: '2.0', error: { code: -32600, message: 'Message exceeds the limit of 4096 bytes' } },
    ]);
    input.write(`${'y'.repeat(100_000)}"}}\n`);
    input.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: META } })}\r\n`,
    );
    input.end();
    await done;
    expect(out).toHaveLength(2);
    expect(out[1]).toMatchObject({ jsonrpc: '2.0', id: 2, result: { tools: expect.any(Array) } });
  });
});
