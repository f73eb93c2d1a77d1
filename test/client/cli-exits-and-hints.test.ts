// The command line's exits and hints: a refused --token exits 7 (as the exit-code table says for HTTP 401), a
// closed reader (`| head`) ends the command quietly, and a misspelt option's hint is the last line, not buried under
// the options.
import { execFile, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { CLI, requireBuiltCli } from './helpers.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function mrtr(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [CLI, ...args], (_error, stdout, stderr) =>
      resolve({ code: child.exitCode, stdout, stderr }),
    );
    child.stdin?.end();
  });
}

let url: string;
let server: ReturnType<typeof spawn>;
beforeAll(async () => {
  requireBuiltCli();
  const port = await freePort();
  server = spawn(process.execPath, [
    CLI,
    'serve',
    '--fixture',
    'example',
    '--port',
    String(port),
    '--tokens',
    'examples/workflows/tokens.json',
  ]);
  let stderr = '';
  server.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  url = await new Promise<string>((resolve, reject) => {
    server.stdout?.on('data', (c: Buffer) => {
      const m = /listening on (\S+)/.exec(c.toString());
      if (m) resolve(m[1]!);
    });
    server.once('exit', () => reject(new Error(`serve exited: ${stderr}`)));
  });
});
afterAll(async () => {
  if (server.exitCode !== null || server.signalCode !== null) return;
  const exited = new Promise((r) => server.once('exit', r));
  server.kill('SIGKILL');
  await exited;
});

describe('a wrong --token', () => {
  it('exits 7 (HTTP 401) from call and tools, saying the server refused it', async () => {
    const call = await mrtr(['call', url, 'echo', '--args', '{"message":"hi"}', '--token', 'wrong']);
    expect(call.code).toBe(7);
    expect(call.stderr).toMatch(/HTTP 401 from .*: Unauthorized: the access token is not valid/);
    const tools = await mrtr(['tools', url, '--token', 'wrong']);
    expect(tools.code).toBe(7);
    expect(tools.stderr).toMatch(/HTTP 401/);
  });
});

describe('a closed reader', () => {
  it('`mrtr tools … | head`: the command ends quietly, no EPIPE stack trace', async () => {
    const child = spawn(process.execPath, [CLI, 'tools', url, '--token', 'bob-dev-token'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The reader is gone before the command writes its list (it first asks the server).
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise((resolve) => child.once('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});

describe('a misspelt option', () => {
  it('the "did you mean" hint is the last line, after a short usage', async () => {
    const r = await mrtr(['call', url, 'echo', '--arg', '{"message":"hi"}', '--token', 'bob-dev-token']);
    expect(r.code).toBe(2);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines.at(-1)).toBe('mrtr call: unknown option --arg (did you mean --args?)');
    expect(lines.length).toBeLessThanOrEqual(5);
    expect(r.stderr).toContain('(mrtr call --help shows every option)');
    const t = await mrtr(['tools', url, '--jsn']);
    expect(t.code).toBe(2);
    expect(t.stderr.trimEnd().split('\n').at(-1)).toBe(
      'mrtr tools: unknown option --jsn (did you mean --json?)',
    );
  });
});
