// `npm start` as a person runs it on a fresh clone: the start script's own command (from package.json, only the
// port changed to a free one) in an empty folder that has the repository's dist/, bin/ and examples/. It serves the
// demo fixture with its stores and audit under ./data and prints how to try it; every printed `./bin/mrtr call`
// line is run as printed. The two a person must answer (a consent) end with "run it in a terminal"; the test then
// answers them as that person would, with the project's client, the step-up page and the approvals API.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type InputResolver, McpClient, scriptedResolver } from '../../src/client/index.js';
import { freePort } from '../helpers/free-port.js';
import { getPage, hiddenFields, postForm, sessionCookie } from '../helpers/page-sessions.js';
import { runCommand } from '../helpers/run-cli.js';
import { deferred } from '../helpers/signals.js';

const REPO = join(import.meta.dirname, '../..');
const START = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { scripts: { start: string } })
  .scripts.start;
const WORKFLOW_TOOLS = [
  'create_ticket',
  'update_profile',
  'search_documents',
  'resize_vm',
  'delete_vm',
  'grant_role',
];

/** Words of a printed shell line: plain words and '…' single-quoted ones (what the help prints). */
function shellWords(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? (m[2] as string));
}

let dir: string;
let child: ChildProcess;
let stdout = '';
let url: string;
let origin: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mrtr-npm-start-'));
  for (const part of ['dist', 'bin', 'examples']) symlinkSync(join(REPO, part), join(dir, part));
  const port = await freePort();
  expect(START).toContain('--port 3000');
  child = spawn('sh', ['-c', START.replace('--port 3000', `--port ${port}`)], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  // Ready once the help's last line is out (it follows "listening on").
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (c: Buffer) => {
      stdout += c.toString();
      if (stdout.includes('./bin/mrtr audit show')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`npm start's command exited (${code}): ${stderr}`)));
  });
  url = /listening on (\S+)/.exec(stdout)![1]!;
  origin = new URL(url).origin;
}, 60_000);
afterAll(async () => {
  if (child.exitCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

const mrtr = (args: string[]) =>
  runCommand(process.execPath, [join(dir, 'bin/mrtr'), ...args], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 30_000,
  });
const callLine = (tool: string) => {
  const line = stdout.split('\n').find((l) => l.trim().startsWith(`./bin/mrtr call ${url} ${tool} `));
  expect(line, `a ./bin/mrtr call line for ${tool}`).toBeDefined();
  return shellWords(line!.trim()).slice(1);
};

describe('npm start', () => {
  it('serves the demo on 127.0.0.1 with its stores, audit and keys under ./data, and prints how to try it', () => {
    expect(START).toContain('--fixture demo');
    expect(url).toBe(`http://127.0.0.1:${new URL(url).port}/mcp`);
    for (const file of [
      'replay.db',
      'audit.db',
      'audit-key',
      'state-keys',
      'cloud.db',
      'iam.db',
      'helpdesk.db',
    ])
      expect(existsSync(join(dir, 'data', file)), file).toBe(true);
    for (const tool of [...WORKFLOW_TOOLS, 'resolve_bug']) callLine(tool);
    expect(stdout).toContain(`Approvals inbox (sign in with bob-dev-token): ${origin}/mrtr/approvals`);
    expect(stdout).toContain(
      `Operator's console (sign in with carol-dev-token, admin: approvals, flows, audit integrity): ${origin}/mrtr/console`,
    );
    expect(stdout).toContain('./bin/mrtr audit flows --audit sqlite:./data/audit.db');
    expect(stdout).toContain('./bin/mrtr users totp alice --totp data/totp.json');
  });

  it('the printed calls that carry their answers complete as printed', async () => {
    const expected: Record<string, RegExp> = {
      create_ticket: /^Ticket #\d+ filed for alice: network$/m,
      update_profile: /^Profile of alice updated: department engineering, recovery contact set$/m,
      search_documents: /^#\d+ backup policy support 2025/m,
      resize_vm: /^vm-00003 resized from \w+ to large$/m,
      resolve_bug: /^Bug 42 resolved as Fixed$/m,
    };
    for (const [tool, output] of Object.entries(expected)) {
      const run = await mrtr(callLine(tool));
      expect(run.stderr, tool).toBe('');
      expect(run.status, tool).toBe(0);
      expect(run.stdout).toMatch(output);
    }
  });

  it('delete_vm and grant_role, printed without answers, need a person; answered by one they complete', async () => {
    for (const tool of ['delete_vm', 'grant_role']) {
      const run = await mrtr(callLine(tool));
      expect(run.status, tool).toBe(6);
      expect(run.stderr).toContain('(input key "consent"; consent)');
      expect(run.stderr).toContain('only a person may answer this: run it in a terminal');
    }
    const argsOf = (tool: string) => {
      const words = callLine(tool);
      return JSON.parse(words[words.indexOf('--args') + 1]!) as Record<string, unknown>;
    };
    const yes = { action: 'accept' as const, content: { confirm: true } };
    const deleter = new McpClient({
      server: url,
      token: 'alice-dev-token',
      resolvers: [scriptedResolver({ consent: yes }, { person: true })],
    });
    const deleted = await deleter.callTool('delete_vm', argsOf('delete_vm'));
    expect(deleted.status === 'complete' && deleted.result.content).toEqual([
      { type: 'text', text: expect.stringMatching(/^vm-00006 \([\w-]+\) deleted$/) },
    ]);
    await deleter.close();

    // The printed enrolment line, then alice at the keyboard: yes, her code on the page. The approval waits on the
    // server's side as a task (the client declares the extension), and bob approves from his inbox meanwhile.
    const enrol = await mrtr(['users', 'totp', 'alice', '--totp', 'data/totp.json']);
    expect(enrol.status).toBe(0);
    const secret = JSON.parse(readFileSync(join(dir, 'data/totp.json'), 'utf8')).users.alice.secret as string;
    const alice: InputResolver = {
      name: 'alice',
      kinds: ['elicitation.form', 'elicitation.url'],
      person: true,
      accepts: (q) => ['consent', 'step_up'].includes(q.key),
      async resolve(q) {
        if (q.key === 'consent') return yes;
        const link = (q.request.params as { url: string }).url;
        const cookie = await sessionCookie(origin, 'alice-dev-token');
        const { csrf } = hiddenFields((await getPage(link, cookie)).html);
        const code = new TOTP({ secret, algorithm: 'SHA1', digits: 6, period: 30 }).generate();
        expect((await postForm(link, cookie, { csrf: csrf!, code }, origin)).html).toContain('Confirmed');
        return { action: 'accept' };
      },
    };
    const granter = new McpClient({ server: url, token: 'alice-dev-token', resolvers: [alice] });
    const waiting = deferred<string>();
    const granting = granter.callTool('grant_role', argsOf('grant_role'), {
      onEvent: (e) => {
        if (e.type === 'task' && e.statusMessage?.startsWith('waiting for approval'))
          waiting.resolve(e.taskId);
      },
    });
    await waiting.promise;
    const inbox = await fetch(`${origin}/mrtr/approvals`, {
      headers: { authorization: 'Bearer bob-dev-token', accept: 'application/json' },
    });
    const pending = ((await inbox.json()) as { approvals: Array<{ id: string; effect: { tool: string } }> })
      .approvals;
    const request = pending.find((a) => a.effect.tool === 'grant_role')!;
    const vote = await fetch(`${origin}/mrtr/approvals/${request.id}`, {
      method: 'POST',
      headers: { authorization: 'Bearer bob-dev-token', 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve', comment: 'on-call rota' }),
    });
    expect(vote.status).toBe(200);
    const granted = await granting;
    expect(granted.status === 'complete' && granted.result.content).toEqual([
      { type: 'text', text: 'Granted on-call to carol (approved by bob)' },
    ]);
    await granter.close();
  });

  it('the printed audit command lists the flows, and one shows round by round', async () => {
    const flows = await mrtr(['audit', 'flows', '--audit', 'sqlite:./data/audit.db']);
    expect(flows.status).toBe(0);
    for (const tool of [...WORKFLOW_TOOLS, 'resolve_bug']) expect(flows.stdout).toContain(tool);
    const flowId = /^\S+ \S+\s+(\S+)\s+alice\s+grant_role\s+4\s+complete/m.exec(flows.stdout)?.[1];
    expect(flowId, flows.stdout).toBeDefined();
    const show = await mrtr(['audit', 'show', flowId!, '--audit', 'sqlite:./data/audit.db']);
    expect(show.status).toBe(0);
    expect(show.stdout).toContain('grant_role');
  });

  it('the printed verify line, with the verifier key in it, finds the trail intact', async () => {
    const line = stdout.split('\n').find((l) => l.includes('./bin/mrtr audit verify '));
    expect(line, 'a ./bin/mrtr audit verify line').toBeDefined();
    const words = shellWords(line!.slice(line!.indexOf('./bin/mrtr')));
    expect(words).toContain('--vkey');
    const verify = await mrtr(words.slice(1));
    expect(verify.stderr).toBe('');
    expect(verify.stdout).toMatch(/^intact: \d+ events in 1 chain\(s\)/);
    expect(verify.status).toBe(0);
  });

  it('the printed console address opens, for carol (admin), the approvals, flows and audit panels', async () => {
    const line = stdout.split('\n').find((l) => l.startsWith("Operator's console"));
    const address = line!.slice(line!.lastIndexOf(' ') + 1);
    const carol = await sessionCookie(origin, 'carol-dev-token');
    const home = await getPage(address, carol);
    expect(home.status).toBe(200);
    for (const panel of ['approvals', 'flows', 'audit'])
      expect((await getPage(`${address}/${panel}`, carol)).status, panel).toBe(200);
    const flows = await getPage(`${address}/flows`, carol);
    expect(flows.html).toContain('create_ticket');
  });
});
