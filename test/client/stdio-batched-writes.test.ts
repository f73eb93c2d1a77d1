// The stdio client transport writes the messages of one turn of the event loop in one pipe write: requests sent
// together (many callers through a gateway) cost the server's stdin one writev, not one write each, in order.
import { Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { StdioClientTransport } from '../../src/client/index.js';

// Answers every request with its own id and the order it was read in.
const ECHO = `let n = 0, buf = '';
process.stdin.on('data', (c) => {
  buf += c;
  let i;
  while ((i = buf.indexOf('\\n')) >= 0) {
    const m = JSON.parse(buf.slice(0, i));
    buf = buf.slice(i + 1);
    if (m.id !== undefined) process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { n: ++n } }) + '\\n');
  }
});`;

afterEach(() => {
  vi.restoreAllMocks();
});

describe('stdio client transport', () => {
  it('sends the requests of one turn in one pipe write, in order', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: ['-e', ECHO] });
    const writes: { socket: Socket; chunks: number }[] = [];
    type Sink = (this: Socket, ...args: unknown[]) => void;
    const proto = Socket.prototype as unknown as { _writev: Sink; _write: Sink };
    const { _writev: writev, _write: write } = proto;
    vi.spyOn(proto, '_writev').mockImplementation(function (this: Socket, ...args: unknown[]) {
      writes.push({ socket: this, chunks: (args[0] as unknown[]).length });
      return writev.apply(this, args);
    });
    vi.spyOn(proto, '_write').mockImplementation(function (this: Socket, ...args: unknown[]) {
      writes.push({ socket: this, chunks: 1 });
      return write.apply(this, args);
    });
    try {
      const ids = [1, 2, 3, 4, 5];
      const answers = await Promise.all(
        ids.map((id) => transport.send({ message: { jsonrpc: '2.0', id, method: 'ping' } })),
      );
      expect(answers.map((a) => [a.id, (a as unknown as { result: { n: number } }).result.n])).toEqual(
        ids.map((id) => [id, id]),
      );
      const stdin = (transport as unknown as { child: { stdin: Socket } }).child.stdin;
      expect(writes.filter((w) => w.socket === stdin)).toEqual([{ socket: stdin, chunks: 5 }]);
      // The next turn's request is a write of its own.
      await transport.send({ message: { jsonrpc: '2.0', id: 6, method: 'ping' } });
      expect(writes.filter((w) => w.socket === stdin)).toHaveLength(2);
    } finally {
      await transport.close();
    }
  });
});
