// `npm run gateway:demo` as a person runs it: the script's own command (from package.json, only the port moved to a
// free one, and --data given) in a folder that has the repository's dist/, bin/ and examples/. It puts the gateway
// in front of the official filesystem server on a share it makes, and prints a line to type per rule. Each printed
// line runs as printed: those that need no person as they are, the write and the move in a real terminal (tmux),
// with alice consenting to the write and bob approving the move over the approvals API.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haveTmux, Tmux } from '../client/tmux.js';
import { documentedLines } from '../docs/documented-lines.js';
import { launchChromium } from '../helpers/chromium.js';
import { freePortPair } from '../helpers/free-port.js';
import { signedInBrowser } from '../helpers/page-sessions.js';

const REPO = join(import.meta.dirname, '../..');
/** Generous: each line starts a CLI (and the gateway its upstream); the limit only stops a hang, it measures nothing. */
const LONG = { timeout: 120_000 };
const SCRIPT = (
  JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
).scripts['gateway:demo'] as string;

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

let dir: string;
let data: string;
let share: string;
let child: ChildProcess;
let stdout = '';
let stderr = '';
let url: string;
let origin: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mrtr-gw-demo-'));
  for (const part of ['dist', 'bin', 'examples']) symlinkSync(join(REPO, part), join(dir, part));
  data = join(dir, 'd');
  share = join(data, 'gateway-demo', 'share');
  // The demo's tracker listens on the port after the gateway's.
  const port = await freePortPair();
  expect(SCRIPT).toBe('exec node dist/cli/main.js gateway demo --port 3100');
  child = spawn('sh', ['-c', `${SCRIPT.replace('--port 3100', `--port ${port}`)} --data ${data}`], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  // Ready once the help's last line is out (it follows "listening on").
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (c: Buffer) => {
      stdout += c.toString();
      if (stdout.includes('Approvals inbox')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the gateway demo exited (${code}): ${stderr}`)));
  });
  url = /listening on (\S+)/.exec(stdout)![1]!;
  origin = new URL(url).origin;
}, 60_000);
afterAll(async () => {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

/** The printed `./bin/mrtr …` lines, as a person copies them. */
const printedLines = () =>
  stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('./bin/mrtr '));
const printed = (start: string) => {
  const line = printedLines().find((l) => l.startsWith(`./bin/mrtr ${start} `));
  expect(line, `a printed line ./bin/mrtr ${start} …`).toBeDefined();
  return line!;
};
const callLine = (tool: string, token: string) =>
  printedLines().find((l) => l.startsWith(`./bin/mrtr call ${url} ${tool} --token ${token} `)) ??
  expect.fail(`no printed call of ${tool} as ${token}`);

/** A printed line run as a shell runs it, in the folder, with nothing on stdin (no terminal). */
function run(line: string): Promise<Ran> {
  const shell = spawn('bash', ['-c', line], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  shell.stdout.on('data', (c: Buffer) => (out += c.toString()));
  shell.stderr.on('data', (c: Buffer) => (err += c.toString()));
  return new Promise((resolve) => shell.once('close', (code) => resolve({ code, stdout: out, stderr: err })));
}

/** A printed line in a terminal, as a person runs it; the pane stays open (cat waits) to read its end. */
function inTerminal(line: string): Tmux {
  if (!haveTmux())
    throw new Error('tmux is not installed: apt-get install -y tmux (the interactive CLI test needs it)');
  return new Tmux(`cd '${dir}' && ${line}; echo EXIT=$?; exec cat`);
}

describe('npm run gateway:demo', () => {
  it(
    'listens on 127.0.0.1, makes the share and its config under --data, and prints the lines docs/gateway.md shows',
    LONG,
    async () => {
      expect(url).toBe(`http://127.0.0.1:${new URL(url).port}/mcp`);
      expect(stdout).toContain(`Try it (a share at ${share};`);
      expect(readFileSync(join(share, 'public/hello.txt'), 'utf8')).toBe('Hello from the share.\n');
      expect(existsSync(join(share, 'secret/key.txt'))).toBe(true);
      expect(existsSync(join(dir, 'data'))).toBe(false); // --data was taken, not the default ./data
      const check = await run(`./bin/mrtr gateway check --config ${join(data, 'gateway-demo/gateway.yaml')}`);
      expect(check.code, check.stderr).toBe(0);
      expect(check.stdout).toMatch(/: 2 upstreams, 5 rules, policy version \S+/);
      expect(stdout).toContain(`Approvals inbox (sign in with bob-dev-token): ${origin}/mrtr/approvals`);
      // The tracker's own redirect URI, said at start (it was said before the gateway listened).
      expect(stderr).toContain(
        `upstream tracker: people connect their own accounts; register the redirect URI ${origin}/mrtr/connect/callback/tracker at its authorization server`,
      );
      // What the reader of docs/gateway.md copies is what the demo prints (but for the port).
      const documented = documentedLines(REPO)
        .filter(
          (d) =>
            d.file === 'docs/gateway.md' &&
            d.line.startsWith('./bin/mrtr') &&
            d.line.includes('127.0.0.1:3100/mcp'),
        )
        .map((d) => d.line.replace('http://127.0.0.1:3100/mcp', url));
      expect(documented).toHaveLength(7);
      expect(printedLines()).toEqual(documented);
    },
  );

  it(
    'the printed lines that need no person run as printed: the tools, a read, and secret/ refused',
    LONG,
    async () => {
      const tools = await run(printed('tools'));
      expect(tools.code, tools.stderr).toBe(0);
      expect(tools.stdout).toMatch(/files__write_file/);
      expect(tools.stdout).toMatch(/files__move_file/);
      const read = await run(callLine('files__read_text_file', 'bob-dev-token'));
      expect(read.code, read.stderr).toBe(0);
      expect(read.stdout).toContain('Hello from the share.');
      const denied = await run(
        printedLines().find((l) => l.includes('secret/key.txt')) ??
          expect.fail('no printed line for secret/'),
      );
      expect(denied.code, denied.stderr).toBe(1);
      expect(denied.stdout).toContain('secret/ is not for agents');
      expect(`${denied.stdout}${denied.stderr}`).not.toContain('not for the agent'); // the secret's text
    },
  );

  // The write comes first: the move's source is the file it writes.
  it(
    'the write, in a terminal, asks alice to consent to exactly this write; she says yes and the file is written',
    LONG,
    async () => {
      const t = inTerminal(callLine('files__write_file', 'alice-dev-token'));
      const asked = await t.waitFor('Yes or no (y/n)');
      expect(asked).toContain('Allow write_file on files, exactly as below?');
      // She consents to the path the upstream will write, resolved in the share (wrapped lines joined).
      expect(asked.replaceAll('\n', '')).toContain(`argument path: "${share}/public/note.txt"`);
      expect(existsSync(join(share, 'public/note.txt'))).toBe(false);
      t.type('y', 'Enter');
      const done = await t.waitFor('EXIT=');
      expect(done).toContain('round 1 · answered consent');
      expect(done).toContain('EXIT=0');
      expect(readFileSync(join(share, 'public/note.txt'), 'utf8')).toBe('hi');
    },
  );

  it(
    'the move, in a terminal, waits for bob; he approves over the approvals API and the file moves',
    LONG,
    async () => {
      const t = inTerminal(callLine('files__move_file', 'alice-dev-token'));
      // mrtr call declares the tasks extension: the wait for bob is a task, shown by its status line.
      const waiting = await t.waitFor('waiting for approval, 0 of 1 (role approver)');
      expect(waiting).toContain('resume with: ./bin/mrtr task get ');
      const bob = { authorization: 'Bearer bob-dev-token' };
      const inbox = (await (await fetch(`${origin}/mrtr/approvals`, { headers: bob })).json()) as {
        approvals: Array<{
          id: string;
          state: string;
          requester: { subject: string };
          effect: { tool: string };
        }>;
      };
      const pending = inbox.approvals.filter((a) => a.state === 'pending');
      expect(pending).toMatchObject([{ requester: { subject: 'alice' }, effect: { tool: 'move_file' } }]);
      const id = pending[0]!.id;
      const vote = await fetch(`${origin}/mrtr/approvals/${id}`, {
        method: 'POST',
        headers: { ...bob, 'content-type': 'application/json' },
        body: JSON.stringify({ decision: 'approve', comment: 'tidy the share' }),
      });
      expect(vote.status).toBe(200);
      expect(await vote.json()).toMatchObject({ state: 'approved' });
      const done = await t.waitFor('EXIT=');
      expect(done).toContain('EXIT=0');
      expect(existsSync(join(share, 'public/note.txt'))).toBe(false);
      expect(readFileSync(join(share, 'public/moved.txt'), 'utf8')).toBe('hi');
    },
  );

  it(
    'the tracker call, in a terminal, sends alice to connect her own tracker account; she does in a browser and it goes on',
    LONG,
    async () => {
      const t = inTerminal(callLine('tracker__connect', 'alice-dev-token'));
      const asked = (await t.waitFor('Done there?')).replaceAll('\n', '');
      const link = /(http:\/\/127\.0\.0\.1:\d+\/mrtr\/connect\/[A-Za-z0-9_-]+)/.exec(asked)?.[1];
      expect(link, asked).toBeDefined();
      expect(link!.startsWith(`${origin}/mrtr/connect/`)).toBe(true);
      const browser = await launchChromium();
      try {
        const { page } = await signedInBrowser(browser, origin, 'alice-dev-token');
        // The gateway sends her to the tracker's own page, which sends her back to the gateway's callback.
        await page.goto(link!);
        await page.getByRole('button', { name: 'Allow as alice' }).click();
        await page.waitForURL(/\/mrtr\/connect\/callback\/tracker\?/);
        const connected = await page.content();
        expect(connected).toContain('Connected');
        await page.goto(`${origin}/mrtr/connections`);
        expect(await page.content()).toMatch(/tracker/i);
      } finally {
        await browser.close();
      }
      t.type('Enter');
      const done = await t.waitFor('EXIT=');
      expect(done).toContain('account is connected');
      expect(done).toContain('EXIT=0');
      // Her second call needs no link: the gateway keeps her tracker token, and the client never saw it.
      const again = await run(callLine('tracker__list_tickets', 'alice-dev-token'));
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain('No tickets yet.');
      // Bob has not connected: his call is asked separately (no terminal: the question cannot be answered).
      const bob = await run(
        callLine('tracker__list_tickets', 'alice-dev-token').replace('alice-dev-token', 'bob-dev-token'),
      );
      expect(bob.code).not.toBe(0);
      expect(`${bob.stdout}${bob.stderr}`).toMatch(/Connect your tracker account/i);
    },
  );

  it(
    "prints its pid for kill -HUP, and the audit lines of its own trail, which run as printed (not npm start's)",
    LONG,
    async () => {
      expect(stdout).toContain(
        `pid ${child.pid}: kill -HUP ${child.pid} reloads the rules and the lock file\n`,
      );
      const trail = `sqlite:${join(data, 'gateway-demo', 'audit.db')}`;
      const printedAfter = (label: string) =>
        /: (\.\/bin\/mrtr .*)$/.exec(stdout.split('\n').find((l) => l.includes(label)) ?? '')?.[1] ??
        expect.fail(`no printed line after "${label}"`);
      const flowsLine = printedAfter("Every round on this demo's record");
      expect(flowsLine).toBe(`./bin/mrtr audit flows --audit ${trail}`);
      const flows = await run(flowsLine);
      expect(flows.code, flows.stderr).toBe(0);
      expect(flows.stdout).toContain('read_text_file'); // the demo's own calls, made by the tests above
      const verifyLine = printedAfter('and check nothing was edited');
      expect(verifyLine).toMatch(/^\.\/bin\/mrtr audit verify --audit \S+ --vkey \S+$/);
      const verified = await run(verifyLine);
      expect(verified.code, verified.stderr).toBe(0);
    },
  );
});
