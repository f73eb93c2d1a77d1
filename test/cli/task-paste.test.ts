// The command lines `mrtr call` prints for a task run as printed: pasted into bash from the folder mrtr ran in, with
// mrtr as that shell reaches it (./bin/mrtr in a checkout), the token read from a variable (never in the line), and
// an id that starts with `-` (an older server's ids did, one in 64; here every id does).
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BearerAuth, DevTokens, parseDevTokens } from '../../src/auth/index.js';
import { type HttpEndpoint, McpServer, text } from '../../src/server/index.js';
import { generateKeySpec } from '../../src/state/index.js';
import { CLI, ROOT, requireBuiltCli } from '../client/helpers.js';
import { freePort } from '../helpers/free-port.js';

vi.mock('../../src/server/tasks/task-book.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/server/tasks/task-book.js')>();
  // An older server's id: 43 base64url characters, the first a `-`.
  return { ...real, newTaskId: () => `-4${real.newTaskId().slice(2)}` };
});

const TOKEN = 'alice-dev-token';
let endpoint: HttpEndpoint;
let url: string;

beforeAll(async () => {
  requireBuiltCli();
  const port = await freePort();
  url = `http://127.0.0.1:${port}/mcp`;
  const tokens = new DevTokens(parseDevTokens({ [TOKEN]: { sub: 'alice', roles: [] } }));
  const server = new McpServer({
    name: 'paste-test',
    version: '1',
    stateKeys: generateKeySpec(),
    auth: new BearerAuth({ verifier: tokens, resource: url }),
    logger: { info() {}, warn() {}, error() {} },
  }).tool({ name: 'quick', description: 'a task that answers at once', task: 'optional' }, () =>
    text('quick done'),
  );
  endpoint = await server.listen({ port });
});
afterAll(() => endpoint?.close());

/** The environment of a person's shell in a checkout: no mrtr on the PATH, none of npm's variables. */
const shellEnv = (extra: Record<string, string> = {}) => ({
  PATH: '/usr/local/bin:/usr/bin:/bin',
  HOME: process.env.HOME ?? '/tmp',
  ...extra,
});

interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** A program run to its end without blocking this process: the server it talks to runs here. */
function ran(program: string, args: string[], env: Record<string, string>): Promise<Ran> {
  const child = spawn(program, args, { cwd: ROOT, env: shellEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.once('close', (status) => resolve({ status, stdout, stderr })));
}

const mrtr = (args: string[], env: Record<string, string> = {}) => ran(process.execPath, [CLI, ...args], env);

/** A line run by bash exactly as it is written, in the folder mrtr ran in. */
const bash = (line: string, env: Record<string, string> = {}) => ran('bash', ['-c', line], env);

/**
 * Everything after "resume with: " to the end of its line, as a person copies it, and the indented line below it
 * (the note that says where the token comes from), if any.
 */
function resumeLine(stderr: string): { id: string; command: string; note: string } {
  const m = /^task (\S+) — resume with: (.+)$(?:\n( {2}\S.*)$)?/m.exec(stderr);
  if (!m?.[1] || !m[2]) throw new Error(`no resume line on stderr:\n${stderr}`);
  return { id: m[1], command: m[2], note: m[3] ?? '' };
}

describe('the resume line mrtr call prints', () => {
  it('with --token: ./bin/mrtr, the id as is, the token from MRTR_TOKEN; the whole line runs in bash as printed', async () => {
    const call = await mrtr(['call', url, 'quick', '--token', TOKEN]);
    expect(call.status, call.stderr).toBe(0);
    const { id, command, note } = resumeLine(call.stderr);
    expect(id).toMatch(/^-4[\w-]{41}$/);
    expect(command).toBe(`./bin/mrtr task get ${id} ${url} --token-env MRTR_TOKEN`);
    expect(call.stderr).not.toContain(TOKEN);
    expect(note).toBe('  set your token first: export MRTR_TOKEN=<your token> (mrtr never prints it)');
    const resumed = await bash(command, { MRTR_TOKEN: TOKEN });
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(resumed.stdout).toBe('quick done\n');
    // Without the variable set, a sentence that says what to do, not a request without a token.
    const unset = await bash(command);
    expect(unset.status).toBe(2);
    expect(unset.stderr).toContain(
      '--token-env MRTR_TOKEN: MRTR_TOKEN is not set here (export MRTR_TOKEN=<your token> first)',
    );
  });

  it('with --token-env NAME: the same variable in the line, and no note', async () => {
    const call = await mrtr(['call', url, 'quick', '--token-env', 'MY_TOKEN'], { MY_TOKEN: TOKEN });
    expect(call.status, call.stderr).toBe(0);
    const { command, note } = resumeLine(call.stderr);
    expect(command).toMatch(/^\.\/bin\/mrtr task get -4[\w-]{41} \S+ --token-env MY_TOKEN$/);
    expect(note).toBe('');
    const resumed = await bash(command, { MY_TOKEN: TOKEN });
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(resumed.stdout).toBe('quick done\n');
  });
});

describe('mrtr task get|cancel take an id that starts with -', () => {
  it('first, or after --, or by its shape elsewhere', async () => {
    const { id } = resumeLine((await mrtr(['call', url, 'quick', '--token', TOKEN])).stderr);
    const first = await mrtr(['task', 'get', id, url, '--token', TOKEN, '--no-wait']);
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout).toContain(`task ${id}: completed`);
    const afterDash = await mrtr(['task', 'cancel', '--token', TOKEN, '--', id, url]);
    expect(afterDash.status, afterDash.stderr).toBe(0);
    expect(afterDash.stdout).toBe(`task ${id} had already ended (completed): nothing to cancel\n`);
    // An id in the second place is still told apart from options by its shape.
    const second = await mrtr(['task', 'get', '--no-wait', id, url, '--token', TOKEN]);
    expect(second.status, second.stderr).toBe(0);
  });
});

describe('a token no HTTP header can carry', () => {
  it('is a usage error naming the character, not a raw Node header error', async () => {
    const pasted = await mrtr(['call', url, 'quick', '--token', '…']);
    expect(pasted.status).toBe(2);
    expect(pasted.stderr).toContain(
      "--token is not a bearer token: it holds '…' (U+2026), which an HTTP header cannot carry",
    );
    expect(pasted.stderr).not.toMatch(/Invalid character|ERR_INVALID_CHAR/);
    const both = await mrtr(['tools', url, '--token', TOKEN, '--token-env', 'MRTR_TOKEN'], {
      MRTR_TOKEN: TOKEN,
    });
    expect(both.status).toBe(2);
    expect(both.stderr).toContain('give --token or --token-env, not both');
  });
});
