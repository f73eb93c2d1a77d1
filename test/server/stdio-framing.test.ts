// serveStdio's framing: its line cap checked and applied (the splitter itself: test/protocol/line-splitter.test.ts).
import { describe, expect, it } from 'vitest';
import { serveStdio } from '../../src/server/stdio.js';
import { META } from '../helpers/mcp-http.js';
import { stdioPipes } from '../helpers/stdio-pipes.js';
import { testServer } from './test-server.js';

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
