// The stdio transport, driven through a real child process: same dispatch, one JSON line per message.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertWireValid, META } from '../helpers/mcp-http.js';

let child: ChildProcessWithoutNullStreams;
let stderr = '';
const waiting = new Map<unknown, { resolve(m: Record<string, unknown>): void; reject(e: Error): void }>();
const stray: Array<Record<string, unknown>> = [];

beforeAll(() => {
  child = spawn(process.execPath, ['dist/cli/main.js', 'serve', '--fixture', 'conformance', '--stdio'], {
    cwd: process.cwd(),
  });
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  createInterface({ input: child.stdout }).on('line', (line) => {
    const message = JSON.parse(line) as Record<string, unknown>;
    const waiter = waiting.get(message.id);
    if (waiter && !('method' in message)) {
      waiting.delete(message.id);
      waiter.resolve(message);
    } else stray.push(message);
  });
  // No answer can come once the server is gone: fail whoever waits, with what it said.
  child.once('exit', (code, signal) => {
    for (const waiter of waiting.values())
      waiter.reject(new Error(`server exited (${code ?? signal}) before answering: ${stderr}`));
    waiting.clear();
  });
});
afterAll(() => child.kill());

function send(line: string, id: unknown): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    child.stdin.write(`${line}\n`);
  });
}
const request = (id: number, method: string, params: Record<string, unknown> = {}) =>
  send(JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: META } }), id);

describe('stdio transport', () => {
  it('serves discovery and lists', async () => {
    const discover = await request(1, 'server/discover');
    assertWireValid('server/discover', discover);
    expect((discover.result as { supportedVersions: string[] }).supportedVersions).toEqual(['2026-07-28']);
    const tools = await request(2, 'tools/list');
    expect((tools.result as { tools: unknown[] }).tools.length).toBeGreaterThan(10);
  });

  it('runs a multi-round flow', async () => {
    const r1 = await request(3, 'tools/call', {
      name: 'test_input_required_result_multi_round',
      arguments: {},
    });
    const s1 = (r1.result as { requestState: string }).requestState;
    const r2 = await request(4, 'tools/call', {
      name: 'test_input_required_result_multi_round',
      arguments: {},
      requestState: s1,
      inputResponses: { step1: { action: 'accept', content: { name: 'Ada' } } },
    });
    const s2 = (r2.result as { requestState: string }).requestState;
    expect(s2).not.toBe(s1);
    const r3 = await request(5, 'tools/call', {
      name: 'test_input_required_result_multi_round',
      arguments: {},
      requestState: s2,
      inputResponses: { step2: { action: 'accept', content: { color: 'green' } } },
    });
    assertWireValid('tools/call', r3);
    expect(r3.result).toMatchObject({ resultType: 'complete', content: [{ text: 'Ada likes green' }] });
  });

  it('answers garbage lines with errors and keeps going', async () => {
    const before = stray.length;
    child.stdin.write('this is not json\n');
    child.stdin.write('[1,2]\n');
    const after = await request(6, 'tools/list');
    expect(after.result).toBeDefined();
    const errors = stray.slice(before).map((m) => (m.error as { code: number }).code);
    expect(errors).toEqual([-32700, -32600]);
  });

  it('answers protocol errors with the same codes as HTTP', async () => {
    const missing = await send(
      JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} }),
      7,
    );
    expect((missing.error as { code: number }).code).toBe(-32602);
    const unknown = await request(8, 'nope/nope');
    expect((unknown.error as { code: number }).code).toBe(-32601);
  });

  it("answers a 2025 client's initialize through the bridge; a 2026-07-28 request still takes the MRTR path", async () => {
    const legacy = await send(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 10,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'old', version: '1' },
        },
      }),
      10,
    );
    expect(legacy.result).toMatchObject({
      protocolVersion: '2025-06-18',
      serverInfo: { name: 'mrtr-conformance' },
      capabilities: { tools: {} },
    });
    const modern = await request(11, 'tools/list');
    expect((modern.result as { resultType: string }).resultType).toBe('complete');
  });

  it("refuses a 2025 client's answer that is no JSON-RPC response, naming why, instead of delivering it", async () => {
    const opened = await send(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 12,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'old', version: '1' },
        },
      }),
      12,
    );
    expect(opened.result).toBeDefined();
    const refused = await send(JSON.stringify({ jsonrpc: '2.0', id: 'nobody.1', result: 'yes' }), 'nobody.1');
    expect(refused).toEqual({
      jsonrpc: '2.0',
      id: 'nobody.1',
      error: { code: -32600, message: 'Invalid Request: result must be an object' },
    });
  });

  it('sends progress notifications before the response', async () => {
    const before = stray.length;
    const done = await send(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'test_tool_with_progress', arguments: {}, _meta: { ...META, progressToken: 'tok' } },
      }),
      9,
    );
    expect(done.result).toBeDefined();
    const progress = stray.slice(before).filter((m) => m.method === 'notifications/progress');
    expect(progress.map((m) => (m.params as { progress: number }).progress)).toEqual([0, 50, 100]);
  });

  it('drops the response of a request cancelled with notifications/cancelled', async () => {
    const before = stray.length;
    const call = (id: number) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'test_tool_with_progress', arguments: {}, _meta: META },
      });
    let answered = false;
    waiting.set(10, {
      resolve: () => {
        answered = true;
      },
      reject: () => {},
    });
    child.stdin.write(`${call(10)}\n`);
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 10 } })}\n`,
    );
    // The same tool, called next: its timers run behind request 10's, so when its answer arrives request 10 has
    // finished as well, and an answer to 10, had one been written, would have come first.
    const next = await send(call(11), 11);
    expect(next.result).toMatchObject({ content: [{ type: 'text', text: 'Progress complete' }] });
    expect(answered).toBe(false);
    expect(stray.slice(before).some((m) => m.id === 10)).toBe(false);
    waiting.delete(10);
  });
});
