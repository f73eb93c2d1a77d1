// `mrtr call` and `mrtr tools` as people and scripts use them: exit codes, --json, and the interactive mode driven
// in a real pseudo-terminal (tmux), typing answers and reading the screen.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { exampleServer } from '../../src/cli/demo-servers/example.js';
import { runCli } from '../../src/cli/run.js';
import type { HttpEndpoint } from '../../src/server/index.js';
import { askAgain, CLI, json, requireBuiltCli, toolCallServer } from './helpers.js';
import { haveTmux, Tmux } from './tmux.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function mrtr(args: string[], timeoutMs = 20_000): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [CLI, ...args],
      { timeout: timeoutMs },
      (error, stdout, stderr) => {
        resolve({ code: child.exitCode ?? (error ? 1 : 0), stdout, stderr });
      },
    );
    child.stdin?.end();
  });
}

let endpoint: HttpEndpoint;
/** Files for --args @FILE: an array, broken JSON, and (written by the test) real arguments. */
const files = mkdtempSync(join(tmpdir(), 'mrtr-cli-args-'));
afterAll(() => rmSync(files, { recursive: true, force: true }));
beforeAll(async () => {
  writeFileSync(join(files, 'array.json'), '[1]');
  writeFileSync(join(files, 'broken.json'), '{"confirm":');
  requireBuiltCli();
  endpoint = await exampleServer().listen({ port: 0 });
});
afterAll(() => endpoint?.close());

/** `mrtr call <endpoint> resolve_bug --args ARGS --answers ANSWERS [flags]` against the example server. */
const resolveBug = (args: string, answers: string, ...flags: string[]) =>
  mrtr(['call', endpoint.url, 'resolve_bug', '--args', args, '--answers', answers, ...flags]);

describe('mrtr call (scripted)', () => {
  it('--answers drives resolve_bug through 3 questions; --json reports result and rounds', async () => {
    const r = await resolveBug(
      '{"id":42}',
      '{"resolution":"Duplicate","original":{"original":7},"confirm":"yes"}',
      '--json',
    );
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({
      status: 'complete',
      rounds: 4,
      retries: 3,
      exitCode: 0,
      result: { content: [{ type: 'text', text: 'Bug 42 resolved as Duplicate (duplicate of 7)' }] },
    });
  });

  it('prints the result text without --json', async () => {
    const r = await resolveBug('{"id":3}', '{"resolution":"Fixed","confirm":true}');
    expect(r).toMatchObject({ code: 0, stdout: 'Bug 3 resolved as Fixed\n' });
  });

  it('exit 3 when a question was declined and the tool failed', async () => {
    const r = await resolveBug('{"id":3}', '{"resolution":"Fixed","confirm":"decline"}');
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/declined confirm; the tool reported an error/);
  });

  it('exit 1 for a tool error, and for a JSON-RPC error from the server', async () => {
    const same = await resolveBug('{"id":9}', '{"resolution":"Duplicate","original":9}');
    expect(same.code).toBe(1);
    expect(same.stdout).toMatch(/cannot duplicate itself/);
    expect(same.stderr).toContain('the tool reported an error (3 requests)');
    const atOnce = await toolCallServer((s, res) =>
      json(res, {
        jsonrpc: '2.0',
        id: s.body.id,
        result: { resultType: 'complete', isError: true, content: [{ type: 'text', text: 'no' }] },
      }),
    );
    try {
      const one = await mrtr(['call', atOnce.url, 'fails']);
      expect(one.code).toBe(1);
      expect(one.stderr).toContain('the tool reported an error (1 request)\n');
    } finally {
      await atOnce.close();
    }
    const unknown = await mrtr(['call', endpoint.url, 'no_such_tool', '--json']);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout)).toMatchObject({ status: 'server_error', error: { code: -32602 } });
  });

  it('exit 6 when a question has no answer and no person is there to ask', async () => {
    const r = await mrtr(['call', endpoint.url, 'resolve_bug', '--args', '{"id":3}']);
    expect(r.code).toBe(6);
    expect(r.stderr).toMatch(/needs a person to answer "How was bug 3 resolved\?"/);
    expect(r.stderr).toMatch(/--answers/);
    const bad = await resolveBug('{"id":3}', '{"resolution":"Sideways"}');
    expect(bad.code).toBe(2); // an answer that does not fit is a usage error, not a missing person
    expect(bad.stderr).toMatch(/--answers\["resolution"\] does not fit the question/);
  });

  it('exit 4 at the round cap, 5 on a protocol error, 7 on timeout or no server', async () => {
    const loop = await toolCallServer((s, res) => {
      if (s.body.params.name === 'garbage') return json(res, 'not json at all');
      if (s.body.params.name === 'hang') return;
      askAgain(res, s.body.id, 's');
    });
    try {
      const cap = await mrtr([
        'call',
        loop.url,
        'loop',
        '--answers',
        '{"ok":"yes"}',
        '--max-rounds',
        '2',
        '--json',
      ]);
      expect(cap.code).toBe(4);
      expect(JSON.parse(cap.stdout)).toMatchObject({ status: 'round_cap', rounds: 3, maxRounds: 2 });
      expect(loop.calls('tools/call')).toHaveLength(3);
      const garbage = await mrtr(['call', loop.url, 'garbage']);
      expect(garbage.code).toBe(5);
      expect(garbage.stderr).toMatch(/protocol error/);
      const hang = await mrtr(['call', loop.url, 'hang', '--timeout', '0.5']);
      expect(hang.code).toBe(7);
      expect(hang.stderr).toMatch(/timed out/);
    } finally {
      await loop.close();
    }
    const none = await mrtr(['call', 'http://127.0.0.1:9/mcp', 'x']);
    expect(none.code).toBe(7);
  });

  it('--args @FILE reads the arguments from a file, --answers @- from stdin', async () => {
    writeFileSync(join(files, 'args.json'), '{"id": 42}\n');
    const r = await new Promise<Run>((resolve) => {
      const child = execFile(
        process.execPath,
        [
          CLI,
          'call',
          endpoint.url,
          'resolve_bug',
          '--args',
          `@${join(files, 'args.json')}`,
          '--answers',
          '@-',
          '--json',
        ],
        { timeout: 20_000 },
        (error, stdout, stderr) => resolve({ code: child.exitCode ?? (error ? 1 : 0), stdout, stderr }),
      );
      child.stdin?.end('{"resolution":"Duplicate","original":{"original":7},"confirm":"yes"}');
    });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      status: 'complete',
      result: { content: [{ type: 'text', text: 'Bug 42 resolved as Duplicate (duplicate of 7)' }] },
    });
  });

  // In this process: a usage error is found before anything is sent, and five process starts in a row are what
  // made this test run into its time limit on a loaded machine.
  it('exit 2 on bad usage', async () => {
    const said: string[] = [];
    const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      said.push(String(chunk));
      return true;
    });
    try {
      for (const [args, why] of [
        [['call', endpoint.url], /needs <url> and <tool>/],
        [['call', endpoint.url, 't', '--args', '[1]'], /--args/],
        [['call', endpoint.url, 't', '--args', '{bad'], /--args/],
        [['call', endpoint.url, 't', '--max-rounds', '-1'], /--max-rounds/],
        [
          ['call', endpoint.url, 't', '--args', `@${join(files, 'none.json')}`],
          /--args @\S+none\.json: cannot read it \(ENOENT\)/,
        ],
        [['call', endpoint.url, 't', '--args', `@${files}`], /--args @\S+: cannot read it \(EISDIR\)/],
        [['call', endpoint.url, 't', '--args', '@'], /--args @: name a file after @/],
        [
          ['call', endpoint.url, 't', '--args', `@${join(files, 'array.json')}`],
          /--args @\S+array\.json must be a JSON object/,
        ],
        [
          ['call', endpoint.url, 't', '--answers', `@${join(files, 'broken.json')}`],
          /--answers @\S+broken\.json is not valid JSON/,
        ],
        [['call', 'not a url', 't'], /not a url/],
      ] as const) {
        said.length = 0;
        expect(await runCli([...args]), args.join(' ')).toBe(2);
        expect(said.join(''), args.join(' ')).toMatch(why);
      }
    } finally {
      write.mockRestore();
    }
  });
});

describe('mrtr tools', () => {
  it('lists tools with their arguments', async () => {
    const r = await mrtr(['tools', endpoint.url]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/resolve_bug\s+Resolve a bug/);
    expect(r.stdout).toMatch(/\(id: integer\)/);
    const j = await mrtr(['tools', endpoint.url, '--json']);
    expect(JSON.parse(j.stdout).tools.map((t: { name: string }) => t.name)).toContain('echo');
  });
});

// --- interactive, in a real pseudo-terminal -----------------------------------------------------------------------

describe('mrtr call (interactive, tmux)', () => {
  const call = (args: string) =>
    `${process.execPath} ${CLI} call ${endpoint.url} resolve_bug ${args}; echo EXIT=$?; sleep 30`;

  it('asks the questions in place, re-asks on a bad answer, and shows the result', async () => {
    if (!haveTmux())
      throw new Error('tmux is not installed: apt-get install -y tmux (the interactive CLI test needs it)');
    const t = new Tmux(call(`--args '{"id":42}'`));
    try {
      let s = await t.waitFor('Resolution (choose 1-4)');
      expect(s).toMatch(/mrtr-example \(127\.0\.0\.1:\d+\) asks/);
      expect(s).toContain('How was bug 42 resolved?');
      expect(s).toMatch(/1\) Fixed\s+2\) Duplicate\s+3\) Won't fix\s+4\) Cannot reproduce/);
      t.type('2', 'Enter');
      await t.waitFor('Send Resolution = Duplicate?');
      t.type('Enter');
      await t.waitFor('Bug 42 duplicates which bug?');
      t.type('seven', 'Enter');
      await t.waitFor('✗ must be a number');
      t.type('7', 'Enter');
      await t.waitFor('Send Original bug number = 7?');
      t.type('Enter');
      await t.waitFor('Close bug 42 as a duplicate of bug 7?');
      t.type('y', 'Enter');
      s = await t.waitFor('EXIT=');
      expect(s).toContain('round 1 · answered resolution');
      expect(s).toContain('round 2 · answered original');
      expect(s).toContain('round 3 · answered confirm');
      expect(s).toContain('┆ Bug 42 resolved as Duplicate (duplicate of 7)');
      expect(s).toContain('✓ done after 3 rounds of questions (4 requests)');
      expect(s).toContain('EXIT=0');
    } finally {
      t.kill();
    }
  });

  it('a person can decline (exit 3) or press Ctrl-C to abort (exit 130)', async () => {
    if (!haveTmux())
      throw new Error('tmux is not installed: apt-get install -y tmux (the interactive CLI test needs it)');
    const d = new Tmux(call(`--args '{"id":5}'`));
    try {
      await d.waitFor('Resolution (choose 1-4)');
      d.type('1', 'Enter');
      await d.waitFor('Send Resolution = Fixed?');
      d.type('Enter');
      await d.waitFor('Close bug 5 as Fixed?');
      d.type('/decline', 'Enter');
      const s = await d.waitFor('EXIT=');
      expect(s).toContain('declined');
      expect(s).toContain('EXIT=3');
    } finally {
      d.kill();
    }
    const c = new Tmux(call(`--args '{"id":6}'`));
    try {
      await c.waitFor('Resolution (choose 1-4)');
      c.type('C-c');
      const s = await c.waitFor('EXIT=');
      expect(s).toContain('EXIT=130');
    } finally {
      c.kill();
    }
  });
});
