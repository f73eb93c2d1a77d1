// mrtr's client against the official SDK's server in its legacy stateful mode (2025-11-25), over HTTP and stdio:
// the client finds out the server is legacy, initializes a session, and answers the server's elicitation request
// in the middle of the call through the same resolvers (and `--answers`) as an MRTR question.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { McpClient, type MrtrEvent, StdioClientTransport, scriptedResolver } from '../../src/client/index.js';
import { CLI, ROOT, requireBuiltCli } from './helpers.js';
import { type LegacySdkServer, startLegacySdkServer } from './sdk-legacy-server.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function mrtr(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [CLI, ...args], { timeout: 20_000 }, (error, stdout, stderr) =>
      resolve({ code: child.exitCode ?? (error ? 1 : 0), stdout, stderr }),
    );
    child.stdin?.end();
  });
}

const STDIO_SERVER = join(ROOT, 'test/client/sdk-legacy-stdio.mjs');
const yes = () => scriptedResolver({ q1: { action: 'accept', content: { confirm: true } } });

let server: LegacySdkServer | undefined;
beforeAll(() => requireBuiltCli());
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('the official SDK server, legacy stateful mode, over HTTP', () => {
  it('falls back from 2026-07-28 to an initialize session and answers the elicitation round', async () => {
    server = await startLegacySdkServer();
    const events: MrtrEvent[] = [];
    const client = new McpClient({ server: server.url, resolvers: [yes()] });
    const outcome = await client.callTool(
      'confirm_delete',
      { path: '/tmp/a' },
      { onEvent: (e) => events.push(e) },
    );
    expect(outcome).toMatchObject({ status: 'complete', result: { content: [{ text: 'deleted /tmp/a' }] } });
    expect(client.generation).toBe('legacy');
    expect(client.version).toBe('2025-11-25');
    expect(events.filter((e) => e.type === 'input_needed').map((e) => (e as { key: string }).key)).toEqual([
      'q1',
    ]);
    // The probe (refused: no session), initialize, initialized, then requests in the session.
    expect(server.requests.slice(0, 3)).toEqual([
      'POST server/discover none',
      'POST initialize none',
      'POST notifications/initialized session',
    ]);
    expect(server.requests).toContain('POST tools/call session');
    expect(server.requests).toContain('POST response session'); // the elicitation's answer
    expect(server.sessions()).toBe(1);
    await client.close();
    // close() ends the session with DELETE.
    expect(server.requests).toContain('DELETE  session');
    expect(server.sessions()).toBe(0);
  });

  it("mrtr call: --answers answers the server's question by its key (q1); without it, needs a person", async () => {
    server = await startLegacySdkServer();
    const ok = await mrtr([
      'call',
      server.url,
      'confirm_delete',
      '--args',
      '{"path":"/tmp/b"}',
      '--answers',
      '{"q1":"yes"}',
    ]);
    expect(ok).toMatchObject({ code: 0, stdout: 'deleted /tmp/b\n' });
    const none = await mrtr(['call', server.url, 'confirm_delete', '--args', '{"path":"/tmp/b"}']);
    expect(none.code).toBe(6);
    expect(none.stderr).toMatch(/needs a person to answer "Delete \/tmp\/b\?" \(input key "q1"/);
    const tools = await mrtr(['tools', server.url]);
    expect(tools.stdout).toMatch(/confirm_delete\s+Delete a file after asking/);
  });

  it('--protocol 2025-11-25 initializes at once (no probe); --protocol 2026-07-28 never falls back', async () => {
    server = await startLegacySdkServer();
    const forced = await mrtr([
      'call',
      server.url,
      'confirm_delete',
      '--protocol',
      '2025-11-25',
      '--args',
      '{"path":"/tmp/c"}',
      '--answers',
      '{"q1":true}',
    ]);
    expect(forced).toMatchObject({ code: 0, stdout: 'deleted /tmp/c\n' });
    expect(server.requests).not.toContain('POST server/discover none');
    const modern = await mrtr([
      'call',
      server.url,
      'confirm_delete',
      '--protocol',
      '2026-07-28',
      '--args',
      '{"path":"/tmp/c"}',
    ]);
    expect(modern.code).toBe(1);
    expect(modern.stderr).toMatch(/No valid session ID provided/);
    const bad = await mrtr(['call', server.url, 'confirm_delete', '--protocol', '2024-01-01']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(
      /--protocol 2024-01-01 is not a version this client speaks \(2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26\)/,
    );
  });
});

describe('the official SDK server, legacy, over stdio', () => {
  it('probes with server/discover, falls back to initialize, and answers the elicitation round', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [STDIO_SERVER],
      stderr: 'ignore',
    });
    const client = new McpClient({ server: transport, resolvers: [yes()] });
    const outcome = await client.callTool('confirm_delete', { path: '/tmp/d' });
    await client.close();
    expect(outcome).toMatchObject({ status: 'complete', result: { content: [{ text: 'deleted /tmp/d' }] } });
    expect(client.generation).toBe('legacy');
  });

  it('mrtr call --stdio and mrtr tools --stdio', async () => {
    const cmd = ['--', process.execPath, STDIO_SERVER];
    const ok = await mrtr([
      'call',
      '--stdio',
      'confirm_delete',
      '--args',
      '{"path":"/tmp/e"}',
      '--answers',
      '{"q1":"y"}',
      ...cmd,
    ]);
    expect(ok).toMatchObject({ code: 0, stdout: 'deleted /tmp/e\n' });
    const declined = await mrtr([
      'call',
      '--stdio',
      'confirm_delete',
      '--args',
      '{"path":"/tmp/e"}',
      '--answers',
      '{"q1":"decline"}',
      '--json',
      ...cmd,
    ]);
    expect(JSON.parse(declined.stdout)).toMatchObject({
      status: 'complete',
      result: { content: [{ text: 'kept /tmp/e (decline)' }] },
      declined: [{ key: 'q1', action: 'decline' }],
    });
    const tools = await mrtr(['tools', '--stdio', ...cmd]);
    expect(tools.stdout).toMatch(/confirm_delete/);
  });
});

describe('a legacy stdio server that ignores requests before initialize', () => {
  it('silence to the probe past probeTimeoutMs means legacy: the client initializes and goes on', async () => {
    // Answers initialize and tools/call, and nothing else before initialize (as some legacy servers do).
    const script = `
      const rl = require('node:readline').createInterface({ input: process.stdin });
      let ready = false;
      const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
      rl.on('line', (l) => {
        const m = JSON.parse(l);
        if (m.method === 'initialize') { ready = true; return send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'quiet', version: '1' } } }); }
        if (!ready || m.id === undefined) return;
        send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'hello from ' + m.method }] } });
      });`;
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['-e', script],
      stderr: 'ignore',
    });
    const client = new McpClient({ server: transport, probeTimeoutMs: 200 });
    const outcome = await client.callTool('t');
    await client.close();
    expect(outcome).toMatchObject({
      status: 'complete',
      result: { content: [{ text: 'hello from tools/call' }] },
    });
    expect(client.generation).toBe('legacy');
    expect(client.version).toBe('2025-06-18');
  });
});
