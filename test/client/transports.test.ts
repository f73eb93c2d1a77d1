// Transport details: SSE framing, and stdio servers that misbehave.
import { describe, expect, it } from 'vitest';
import { McpClient, StdioClientTransport } from '../../src/client/index.js';
import { SseParser } from '../../src/client/sse.js';
import { deferred } from '../helpers/signals.js';

describe('SSE parser', () => {
  it('handles LF, CRLF and CR line ends split anywhere, comments, multi-line data and event names', () => {
    const text = ': hi\r\ndata: a\r\ndata: b\r\n\r\nevent: ping\ndata: x\n\ndata:no-space\r\rdata: tail';
    for (let cut = 0; cut < text.length; cut++) {
      const events: string[] = [];
      const p = new SseParser((e) => events.push(`${e.event}:${e.data}`));
      p.push(text.slice(0, cut));
      p.push(text.slice(cut));
      expect(events, `cut at ${cut}`).toEqual(['message:a\nb', 'ping:x', 'message:no-space']);
      expect(p.midEvent).toBe(true); // "data: tail" never got its blank line
    }
  });

  it('refuses an event larger than its limit', () => {
    const p = new SseParser(() => {}, 10);
    expect(() => p.push(`data: ${'x'.repeat(20)}`)).toThrow(/larger than/);
  });
});

/** A stdio "server" in a few lines of JavaScript. */
function stdioServer(script: string) {
  return new StdioClientTransport({
    command: process.execPath,
    args: ['-e', script],
    stderr: 'ignore',
    shutdownGraceMs: 200,
  });
}

const READ = `const rl = require('node:readline').createInterface({ input: process.stdin });`;

describe('stdio transport', () => {
  it('answers by id, routes progress by token, and carries MRTR rounds', async () => {
    const t = stdioServer(`${READ}
      rl.on('line', (l) => {
        const m = JSON.parse(l);
        if (m.method !== 'tools/call') return console.log(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { resultType: 'complete', tools: [] } }));
        const tok = m.params._meta.progressToken;
        if (tok !== undefined) console.log(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: tok, progress: 1 } }));
        if (!m.params.requestState) return console.log(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { resultType: 'input_required', requestState: 'r1' } }));
        console.log(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { resultType: 'complete', content: [{ type: 'text', text: m.params.requestState }] } }));
      });`);
    const c = new McpClient({ server: t });
    const seen: string[] = [];
    const outcome = await c.callTool(
      'x',
      {},
      { progress: true, backoff: { initialMs: 1 }, onEvent: (e) => seen.push(e.type) },
    );
    expect(outcome).toMatchObject({ status: 'complete', rounds: 2, result: { content: [{ text: 'r1' }] } });
    expect(seen.filter((e) => e === 'notification')).toHaveLength(2);
    await c.close();
  });

  it('a line that is not JSON on stdout is a protocol error; a dying server is a transport error', async () => {
    const garbage = stdioServer(`${READ} rl.on('line', () => console.log('hello, I am not MCP'));`);
    const c1 = new McpClient({ server: garbage });
    expect(await c1.callTool('x')).toMatchObject({ status: 'protocol_error' });
    await c1.close();
    const dying = stdioServer(`${READ} rl.on('line', () => process.exit(3));`);
    const c2 = new McpClient({ server: dying });
    const o = await c2.callTool('x');
    expect(o).toMatchObject({ status: 'transport_error' });
    if (o.status === 'transport_error') expect(o.message).toMatch(/exited \(code 3\)/);
    await c2.close();
  });

  const ping = (id: number) => ({ message: { jsonrpc: '2.0' as const, id, method: 'ping' } });

  it('a line over maxLineBytes fails the requests in flight, even when it arrives whole in one chunk', async () => {
    const t = new StdioClientTransport({
      command: process.execPath,
      args: [
        '-e',
        `${READ} rl.on('line', (l) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: JSON.parse(l).id, result: { pad: 'x'.repeat(200) } }) + '\\n'));`,
      ],
      stderr: 'ignore',
      shutdownGraceMs: 200,
      maxLineBytes: 64,
    });
    await expect(t.send(ping(1))).rejects.toThrow('server wrote a line longer than the limit on stdout');
    await t.close();
  });

  it('after an overlong line, the rest of it up to its newline is skipped and the next line is read', async () => {
    // Request 1 gets the first 100 bytes of a line (past the cap); request 2 gets the rest of that line, then its answer.
    const t = new StdioClientTransport({
      command: process.execPath,
      args: [
        '-e',
        `${READ} rl.on('line', (l) => {
          const { id } = JSON.parse(l);
          if (id === 1) process.stdout.write('{"jsonrpc":"2.0","id":1,"result":{"pad":"' + 'x'.repeat(100));
          else process.stdout.write('yyyy"}}\\n' + JSON.stringify({ jsonrpc: '2.0', id, result: {} }) + '\\n');
        });`,
      ],
      stderr: 'ignore',
      shutdownGraceMs: 200,
      maxLineBytes: 64,
    });
    await expect(t.send(ping(1))).rejects.toThrow('longer than the limit');
    await expect(t.send(ping(2))).resolves.toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    await t.close();
  });

  it('refuses a maxLineBytes that would silently disable the cap', () => {
    for (const maxLineBytes of [Number.NaN, 0, Number.POSITIVE_INFINITY])
      expect(() => new StdioClientTransport({ command: 'x', maxLineBytes })).toThrow(
        `maxLineBytes must be an integer from 1 to 9007199254740991, got ${maxLineBytes}`,
      );
  });

  it('aborting sends notifications/cancelled for the request', async () => {
    // The server says what it got as log notifications, and never answers the call.
    const t = stdioServer(`${READ}
      const say = (data) => console.log(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data } }));
      rl.on('line', (l) => {
        const m = JSON.parse(l);
        if (m.method === 'tools/call') say('received ' + m.id);
        if (m.method === 'notifications/cancelled') say('cancelled ' + m.params.requestId);
      });`);
    const controller = new AbortController();
    const notes: string[] = [];
    const cancelled = deferred();
    const note = (n: { params?: unknown }) => {
      const data = String((n.params as { data: string }).data);
      notes.push(data);
      if (data.startsWith('received')) controller.abort();
      if (data.startsWith('cancelled')) cancelled.resolve();
    };
    // While the call is pending its notifications go to the call; afterwards, to the transport.
    t.onNotification = note;
    // This server answers nothing, server/discover included: forced to 2026-07-28, the client does not probe it.
    const c = new McpClient({ server: t, protocol: '2026-07-28' });
    const o = await c.callTool(
      'x',
      {},
      { signal: controller.signal, onEvent: (e) => e.type === 'notification' && note(e.notification) },
    );
    expect(o.status).toBe('aborted');
    await cancelled.promise;
    expect(notes).toEqual(['received 1', 'cancelled 1']);
    await c.close();
  });
});
