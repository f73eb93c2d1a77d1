// `mrtr audit flows | show | checkpoint | keygen` and `mrtr serve --audit`: what a person and a script see, and the
// message for every mistake they can make.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { AuditSigner, AuditVerifier, SqliteAuditReader, SqliteAuditSink } from '../../src/audit/index.js';
import { splitNotes } from '../../src/audit/internal.js';
import { flowsTable, styleFor } from '../../src/cli/audit-format.js';
import { accept, auditedServer, call, env, openTrail, stateOf, tempDir } from '../audit/fixture.js';
import { freePort } from '../helpers/free-port.js';
import { mcp } from '../helpers/mcp-http.js';
import { runCommand } from '../helpers/run-cli.js';

const tmp = tempDir();
const db = join(tmp.dir, 'audit.db');
const AUDIT = `sqlite:${db}`;
let flowId = '';

beforeAll(async () => {
  const trail = await openTrail(await SqliteAuditSink.open(db));
  const core = auditedServer(trail).core;
  const ada = { ...env, principal: { subject: 'ada', issuer: 'https://id.test' } };
  const first = await core.handle(call(1, 'delete_file', { arguments: { path: '/srv/report.pdf' } }), ada);
  await core.handle(
    call(2, 'delete_file', {
      arguments: { path: '/srv/report.pdf' },
      requestState: stateOf(first),
      inputResponses: { consent: accept({ confirm: true }) },
    }),
    ada,
  );
  await core.handle(call(3, 'delete_file', { arguments: { path: '/etc' }, requestState: 'forged' }), env);
  await trail.close();
  flowId = JSON.parse((await audit(['flows', '--json', '--principal', 'ada'])).stdout)[0].flowId;
});
afterAll(() => tmp.remove());

async function audit(args: string[], withAudit = true) {
  const out = await runCommand(
    process.execPath,
    ['dist/cli/main.js', 'audit', ...args, ...(withAudit ? ['--audit', AUDIT] : [])],
    {
      encoding: 'utf8',
      timeout: 20_000,
      env: { ...process.env, NO_COLOR: undefined },
    },
  );
  return { status: out.status, stdout: out.stdout, stderr: out.stderr };
}

describe('mrtr audit <command> --help', () => {
  it.each([
    ['flows', '--principal S'],
    ['show', '<flowId>'],
    ['verify', '--vkey KEY'],
    ['checkpoint', '--out FILE'],
    ['export', '--format ocsf|jsonl [--follow]'],
    ['bundle', '--out FILE'],
    ['keygen', '--name NAME'],
  ])('%s --help prints its usage and exits 0', async (command, option) => {
    for (const flag of ['--help', '-h']) {
      const out = await audit([command, flag], false);
      expect(out.stderr).toBe('');
      expect(out.status).toBe(0);
      expect(out.stdout).toMatch(new RegExp(`^usage: mrtr audit ${command} `));
      expect(out.stdout).toContain(option);
      // Only this command's usage, not the whole list.
      expect(out.stdout).not.toContain('commands:');
    }
  });

  it('export --help says where it reads from, even after other options', async () => {
    const out = await audit(['export', '--format', 'ocsf', '--help']);
    expect(out.status).toBe(0);
    expect(out.stdout).toContain('OCSF API Activity (class 6003)');
    expect(out.stdout).toContain('--audit URL: ');
  });
});

describe('mrtr audit flows', () => {
  it('prints a table of flows, without colour when not on a terminal', async () => {
    const out = await audit(['flows']);
    expect(out.status).toBe(0);
    const lines = out.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^STARTED\s+FLOW\s+PRINCIPAL\s+TARGET\s+ROUNDS\s+OUTCOME\s+MS$/);
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(/ada\s+delete_file\s+2\s+complete/);
    expect(lines[2]).toMatch(/-\s+anonymous\s+delete_file\s+1\s+refused/);
    expect(out.stdout).not.toContain('\x1b[');
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(120);
  });

  it('filters by principal, target, outcome and time, and gives JSON', async () => {
    const refused = JSON.parse((await audit(['flows', '--outcome', 'refused', '--json'])).stdout);
    expect(refused).toEqual([
      expect.objectContaining({ outcome: 'refused', reason: 'malformed', principal: null }),
    ]);
    expect(JSON.parse((await audit(['flows', '--target', 'sign_in', '--json'])).stdout)).toEqual([]);
    expect(JSON.parse((await audit(['flows', '--since', '1h', '--json'])).stdout)).toHaveLength(2);
    expect(JSON.parse((await audit(['flows', '--since', '2999-01-01', '--json'])).stdout)).toEqual([]);
    expect((await audit(['flows', '--outcome', 'refused'])).stdout).not.toContain('ada');
  });

  it('names a bad --since, an unknown option, a bad URL and a missing file', async () => {
    const since = await audit(['flows', '--since', 'yesterday']);
    expect(since.status).toBe(2);
    expect(since.stderr).toContain("--since must be like 90s, 30m, 1h, 7d or an ISO date, got 'yesterday'");
    const option = await audit(['flows', '--colour']);
    expect(option.status).toBe(2);
    expect(option.stderr).toContain("Unknown option '--colour'");
    const url = await runCommand(
      process.execPath,
      ['dist/cli/main.js', 'audit', 'flows', '--audit', 'mongodb://x'],
      {
        encoding: 'utf8',
      },
    );
    expect(url.status).toBe(2);
    expect(url.stderr).toContain(
      'unknown audit sink "mongodb://x": expected sqlite:PATH[?synchronous=full] | postgres://USER@HOST:PORT/DB | jsonl:PATH | jsonl:-',
    );
    const missing = await runCommand(
      process.execPath,
      ['dist/cli/main.js', 'audit', 'flows', '--audit', `sqlite:${join(tmp.dir, 'none.db')}`],
      { encoding: 'utf8' },
    );
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('no audit database at');
    const sub = await audit(['frobnicate']);
    expect(sub.status).toBe(2);
    expect(sub.stderr).toContain("mrtr audit: unknown command 'frobnicate'");
  });

  it('fits the table to a narrow terminal and colours outcomes only on a TTY', () => {
    const flows = [
      {
        flowId: 'x'.repeat(40),
        started: '2026-01-01T00:00:00.000Z',
        principal: 'someone-with-a-very-long-name@example.com',
        method: 'tools/call',
        target: 'a_tool_with_a_long_name_that_goes_on',
        rounds: 2,
        outcome: 'complete' as const,
        reason: null,
        instances: ['i'],
        durationMs: 1.5,
      },
    ];
    const tty = styleFor({ isTTY: true, columns: 80 } as NodeJS.WriteStream);
    expect(tty).toEqual({ width: 80, color: true });
    const table = flowsTable(flows, tty);
    for (const line of table.trimEnd().split('\n'))
      expect(line.replaceAll('\x1b[32m', '').replaceAll('\x1b[0m', '').length).toBeLessThanOrEqual(80);
    expect(table).toContain('\x1b[32mcomplete');
    expect(styleFor({ isTTY: false } as NodeJS.WriteStream).color).toBe(false);
    process.env.NO_COLOR = '1';
    try {
      expect(styleFor({ isTTY: true, columns: 80 } as NodeJS.WriteStream).color).toBe(false);
    } finally {
      delete process.env.NO_COLOR;
    }
  });
});

describe('mrtr audit show', () => {
  it('prints a flow as a timeline, round by round', async () => {
    const out = await audit(['show', flowId]);
    expect(out.status).toBe(0);
    expect(out.stdout).toContain(`flow ${flowId}  tools/call delete_file`);
    expect(out.stdout).toContain('principal  ada (https://id.test)');
    expect(out.stdout).toContain('intent     {"path":"/srv/report.pdf"}');
    // Each round's intent, then its outcome, which names it.
    expect(out.stdout).toMatch(/round 0 {2}\S+ {2}test-1 #1 {2}proposed \(intent recorded before it ran\)/);
    expect(out.stdout).toMatch(/round 0 {2}\S+ {2}test-1 #2 {2}[\d.]+ ms {2}input_required/);
    expect(out.stdout).toContain('asked      consent (elicitation.form)');
    expect(out.stdout).toContain('after      intent #1');
    expect(out.stdout).toMatch(/round 1 {2}\S+ {2}test-1 #3 {2}proposed/);
    expect(out.stdout).toMatch(/round 1 {2}\S+ {2}test-1 #4 {2}[\d.]+ ms {2}complete/);
    expect(out.stdout).toContain('after      intent #3');
    expect(out.stdout).toContain('answered   consent: {"action":"accept","content":{"confirm":true}}');
    expect(out.stdout).toContain('steps      delete');
    expect(out.stdout).toContain('notes      {"resource":"/srv/report.pdf"}');
  });

  it('gives JSON, and names a flow it does not know', async () => {
    const json = JSON.parse((await audit(['show', flowId, '--json'])).stdout);
    expect(json.rounds.map((r: { outcome: string }) => r.outcome)).toEqual([
      'proposed',
      'input_required',
      'proposed',
      'complete',
    ]);
    const none = await audit(['show', 'nope']);
    expect(none.status).toBe(1);
    expect(none.stderr).toContain(`no flow nope in ${AUDIT}`);
    // Flow ids are base64url: one may begin with '-', and right after `show` it is still an id, not an option.
    const dash = await audit(['show', '-nergQylXLnLHId3MtzAjA']);
    expect(dash.status).toBe(1);
    expect(dash.stderr).toContain('no flow -nergQylXLnLHId3MtzAjA in');
    const noId = await audit(['show']);
    expect(noId.status).toBe(2);
    expect(noId.stderr).toContain('show needs one flow id');
  });
});

describe('mrtr audit checkpoint and keygen', () => {
  it('exports the latest checkpoint of each writer as signed notes', async () => {
    const file = join(tmp.dir, 'export.notes');
    const out = await audit(['checkpoint', '--out', file]);
    expect(out.status).toBe(0);
    expect(out.stderr).toContain(`1 checkpoint(s) written to ${file}`);
    const notes = splitNotes(readFileSync(file, 'utf8'));
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(
      /^mrtr-audit\/test-1\n5\n[\w+/]{43}=\ntime \S+\n\n\u2014 mrtr-audit-test \S+\n$/,
    );
  });

  it('prints a new signing key and its verifier key, and refuses a bad name', async () => {
    const out = await audit(['keygen', '--name', 'acme-audit'], false);
    expect(out.status).toBe(0);
    const [signer, verifier] = out.stdout.trim().split('\n');
    const key = AuditSigner.parse(signer!.replace('MRTR_AUDIT_KEY=', ''));
    expect(AuditVerifier.parse(verifier!.replace('MRTR_AUDIT_VKEY=', '')).text).toBe(key.verifier.text);
    expect(key.name).toBe('acme-audit');
    const bad = await audit(['keygen', '--name', 'a+b'], false);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain(`audit key name "a+b" must have no spaces and no '+'`);
  });
});

describe('npm start', () => {
  it('records every round under ./data, and seals a checkpoint when stopped', async () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } };
    const args = pkg.scripts.start
      .replace(/^exec node dist\/cli\/main\.js /, '')
      .replace('--port 3000', `--port ${await freePort()}`)
      .split(' ');
    expect(args).toContain('sqlite:./data/audit.db');
    const cwd = join(tmp.dir, 'start');
    mkdirSync(cwd);
    // The demo's development tokens file is named relative to the checkout.
    symlinkSync(join(process.cwd(), 'examples'), join(cwd, 'examples'));
    const child = spawn(process.execPath, [join(process.cwd(), 'dist/cli/main.js'), ...args], { cwd });
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (c: Buffer) => {
        const m = /listening on (\S+)/.exec(c.toString());
        if (m) resolve(m[1]!);
      });
      child.once('exit', (code) => reject(new Error(`npm start's server exited (${code})`)));
    });
    const reply = await mcp(
      url,
      'tools/call',
      { name: 'echo', arguments: { message: 'hi' } },
      { headers: { authorization: 'Bearer alice-dev-token' } },
    );
    expect(reply.response.result).toMatchObject({ content: [{ text: 'hi' }] });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const reader = new SqliteAuditReader(join(cwd, 'data', 'audit.db'));
    const events = await reader.events();
    const checkpoints = await reader.checkpoints();
    await reader.close();
    expect(events.map((e) => [JSON.parse(e.text).target, JSON.parse(e.text).outcome])).toEqual([
      ['echo', 'proposed'],
      ['echo', 'complete'],
    ]);
    expect(checkpoints.map((c) => c.seq)).toEqual([2]);
  });
});

describe('mrtr serve --audit', () => {
  const serve = (args: string[]) =>
    runCommand(process.execPath, ['dist/cli/main.js', 'serve', '--port', '0', ...args], {
      encoding: 'utf8',
      timeout: 25_000,
    });

  it('names an audit URL it cannot use', async () => {
    const out = await serve(['--audit', 'sqlite:']);
    expect(out.status).toBe(2);
    expect(out.stderr).toContain(
      'mrtr serve: invalid --audit: audit "sqlite:" names no file: expected sqlite:PATH',
    );
  });

  it('names a file it cannot make or read: under /proc, or a directory where the file should be', async () => {
    // Node's recursive mkdir loops for ever on /proc (ENOENT from a parent that exists): serve hung at full CPU.
    for (const url of ['jsonl:/proc/mrtr-none/audit.jsonl', 'sqlite:/proc/mrtr-none/audit.db']) {
      const out = await serve(['--audit', url]);
      expect(out.status).toBe(2);
      expect(out.stderr).toContain("mkdir '/proc/mrtr-none'");
    }
    const dir = join(tmp.dir, 'a-directory.jsonl');
    mkdirSync(dir);
    const out = await serve(['--audit', `jsonl:${dir}`]);
    expect(out.status).toBe(2);
    expect(out.stderr).toContain(`invalid --audit: ${dir} is a directory, not a JSON-lines file`);
  });

  it('refuses JSON lines on stdout when stdout carries MCP (--stdio)', async () => {
    const out = await serve(['--stdio', '--audit', 'jsonl:-']);
    expect(out.status).toBe(2);
    expect(out.stderr).toContain('jsonl:- writes to stdout, which --stdio uses for MCP messages');
  });

  it('with jsonl:- keeps stdout for the trail, so what it wrote verifies as it is', async () => {
    const child = spawn(process.execPath, [
      'dist/cli/main.js',
      'serve',
      '--fixture',
      'example',
      '--port',
      '0',
      '--audit',
      'jsonl:-',
    ]);
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    let stdout = '';
    let stderr = '';
    // Ready on whichever stream says so first; which one it was is what this test checks.
    const url = await new Promise<string>((resolve, reject) => {
      const ready = () => {
        const m = /listening on (\S+)/.exec(stderr) ?? /listening on (\S+)/.exec(stdout);
        if (m) resolve(m[1]!);
      };
      child.stdout.on('data', (c: Buffer) => {
        stdout += c.toString();
        ready();
      });
      child.stderr.on('data', (c: Buffer) => {
        stderr += c.toString();
        ready();
      });
      child.once('exit', (code) => reject(new Error(`serve exited (${code}): ${stderr}`)));
    });
    const reply = await mcp(url, 'tools/call', { name: 'echo', arguments: { message: 'hi' } });
    expect(reply.response.result).toMatchObject({ content: [{ text: 'hi' }] });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr).toContain(`listening on ${url}`);
    expect(stdout).not.toContain('listening on');
    const verify = await runCommand(
      process.execPath,
      ['dist/cli/main.js', 'audit', 'verify', '--audit', 'jsonl:-'],
      {
        input: stdout,
        encoding: 'utf8',
        timeout: 20_000,
      },
    );
    expect(verify.stderr).not.toContain('is not JSON');
    expect(verify.stdout).toContain('intact: 2 events in 1 chain(s), 1 checkpoint(s) verified');
    expect(verify.status).toBe(0);
  });

  it('refuses a malformed audit key', async () => {
    const out = await runCommand(
      process.execPath,
      ['dist/cli/main.js', 'serve', '--port', '0', '--audit', `sqlite:${join(tmp.dir, 'k.db')}`],
      { encoding: 'utf8', timeout: 25_000, env: { ...process.env, MRTR_AUDIT_KEY: 'PRIVATE+KEY+x' } },
    );
    expect(out.status).toBe(2);
    expect(out.stderr).toContain(
      'invalid --audit: audit key: expected PRIVATE+KEY+<name>+<key id hex>+<base64 seed>',
    );
  });
});
