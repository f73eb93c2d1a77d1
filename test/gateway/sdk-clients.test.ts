// The clients people run, through `mrtr gateway` in front of the real filesystem server: the official TypeScript SDK
// client (@modelcontextprotocol/client) as an application builds it — default options, so it speaks 2025-11-25 and
// the gateway's bridge asks the consent mid-call — and with 2026-07-28 negotiated; and mrtr's own `mrtr call`, which
// never answers a consent from --answers and so is run in a terminal (a pty from `script`), where its person says yes.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Client,
  type ClientOptions,
  type ElicitResult,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { type ServedCli, serveCli } from '../helpers/serve-cli.js';

const require = createRequire(import.meta.url);
const FILESYSTEM = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
const KEYS = `k1:${Buffer.alloc(32, 6).toString('base64url')}`;

let dir: string;
let share: string;
let gateway: ServedCli;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mrtr-gw-clients-'));
  share = join(dir, 'share');
  mkdirSync(share);
  writeFileSync(join(share, 'hello.txt'), 'hello');
  writeFileSync(
    join(dir, 'tokens.json'),
    JSON.stringify({ 'alice-dev-token': { sub: 'alice', roles: ['requester'] } }),
  );
  writeFileSync(
    join(dir, 'gateway.yaml'),
    `upstreams:
  - name: files
    command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(FILESYSTEM)}, ${JSON.stringify(share)}]
    cwd: ${JSON.stringify(share)}
rules:
  - tools: ["files/read_*", "files/list_*"]
    roles: ["*"]
  - tools: ["files/write_file"]
    roles: [requester]
    require: [consent]
`,
  );
  gateway = await serveCli(
    [
      '--config',
      join(dir, 'gateway.yaml'),
      '--port',
      String(await freePort()),
      '--tokens',
      join(dir, 'tokens.json'),
      '--state-keys',
      KEYS,
      '--store',
      `sqlite:${join(dir, 'replay.db')}`,
    ],
    'gateway',
  );
  // Upstreams start with the gateway: the clients connect once it has listed them.
  await gateway.saidOnStderr('upstreams started:');
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The SDK client as an application makes it: a name, elicitation declared, a bearer token on every request. */
async function sdkClient(
  elicit: (params: Record<string, unknown>) => ElicitResult,
  options: ClientOptions = {},
) {
  const client = new Client(
    { name: 'an-app', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } }, ...options },
  );
  const asked: Array<Record<string, unknown>> = [];
  client.setRequestHandler('elicitation/create', async (request) => {
    const params = request.params as Record<string, unknown>;
    asked.push(params);
    return elicit(params);
  });
  const transport = new StreamableHTTPClientTransport(new URL(gateway.url), {
    requestInit: { headers: { authorization: 'Bearer alice-dev-token' } },
  });
  await client.connect(transport);
  onTestFinished(() => client.close());
  return { client, asked, protocol: () => transport.protocolVersion };
}

const yes = (): ElicitResult => ({ action: 'accept', content: { confirm: true } });

describe('the official SDK client through the gateway', () => {
  it.each([
    ['default options (2025-11-25: the consent arrives mid-call)', {}, '2025-11-25'],
    [
      '2026-07-28 negotiated (the consent is an input_required round)',
      { versionNegotiation: { mode: 'auto' } },
      '2026-07-28',
    ],
  ] as Array<[string, ClientOptions, string]>)(
    '%s: lists the tools and completes a call that needs consent',
    async (_, options, version) => {
      const path = join(share, `sdk-${Object.keys(options).length}.txt`);
      const { client, asked, protocol } = await sdkClient(yes, options);
      expect(protocol()).toBe(version);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(
        expect.arrayContaining(['files__read_text_file', 'files__write_file', 'files__list_directory']),
      );
      expect(tools.map((t) => t.name)).not.toContain('files__move_file'); // no rule allows it
      const read = await client.callTool({
        name: 'files__read_text_file',
        arguments: { path: join(share, 'hello.txt') },
      });
      expect(read.content).toEqual([{ type: 'text', text: 'hello' }]);
      expect(asked).toEqual([]);

      const wrote = await client.callTool({
        name: 'files__write_file',
        arguments: { path, content: 'from the SDK' },
      });
      expect(wrote.isError).toBeFalsy();
      expect(wrote.content).toEqual([{ type: 'text', text: `Successfully wrote to ${path}` }]);
      expect(readFileSync(path, 'utf8')).toBe('from the SDK');
      expect(asked).toHaveLength(1);
      expect(asked[0]?.message).toContain('Allow write_file on files, exactly as below?');
      expect(asked[0]?.message).toContain(path);
    },
  );

  it('a declined consent: the file is not written and the app is told', async () => {
    const path = join(share, 'declined.txt');
    const { client, asked } = await sdkClient(() => ({ action: 'decline' }));
    const refused = await client.callTool({ name: 'files__write_file', arguments: { path, content: 'no' } });
    expect(asked).toHaveLength(1);
    expect(refused.isError).toBe(true);
    expect(existsSync(path)).toBe(false);
  });
});

/** Run `./bin/mrtr …` in a pseudo-terminal; `answer(output)` returns what to type once the output asks, if anything. */
function inTerminal(args: string[], answer: (output: string) => string | undefined) {
  const quoted = ['./bin/mrtr', ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  const child = spawn('script', ['-qfec', quoted, '/dev/null'], {
    env: { ...process.env, NO_COLOR: '1' },
  });
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    const typed = answer(output);
    if (typed !== undefined) child.stdin.write(typed);
  });
  return new Promise<{ status: number | null; output: string }>((resolve) =>
    child.once('exit', (status) => resolve({ status, output })),
  );
}

describe('mrtr call through the gateway', () => {
  it('--answers does not answer a consent (a person must): exit 6, naming the input key', async () => {
    const path = join(share, 'scripted.txt');
    const run = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [
        'dist/cli/main.js',
        'call',
        gateway.url,
        'files__write_file',
        '--args',
        JSON.stringify({ path, content: 'scripted' }),
        '--answers',
        JSON.stringify({ consent: { confirm: true } }),
        '--token',
        'alice-dev-token',
      ]);
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.once('exit', (status) => resolve({ status, stderr }));
    });
    expect(run.status).toBe(6);
    expect(run.stderr).toContain('(input key "consent"; consent)');
    expect(run.stderr).toContain('only a person may answer this: run it in a terminal');
    expect(existsSync(path)).toBe(false);
  });

  it('in a terminal, the person answers the consent and the file is written', async () => {
    const path = join(share, 'typed.txt');
    let answered = false;
    const run = await inTerminal(
      [
        'call',
        gateway.url,
        'files__write_file',
        '--args',
        JSON.stringify({ path, content: 'typed by alice' }),
        '--token',
        'alice-dev-token',
      ],
      (output) => {
        if (answered || !output.includes('(y/n)')) return undefined;
        answered = true;
        return 'y\n';
      },
    );
    expect(run.output).toContain('Allow write_file on files, exactly as below?');
    expect(run.output).toContain('key "consent"');
    expect(run.output).toContain(`Successfully wrote to ${path}`);
    expect(run.status).toBe(0);
    expect(readFileSync(path, 'utf8')).toBe('typed by alice');
  });
});
