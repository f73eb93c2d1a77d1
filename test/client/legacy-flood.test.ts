// A hostile 2025 server floods a call with server-to-client requests: `mrtr call` holds it to MRTR's bounds (32
// questions a round, the round cap), refuses the excess with a JSON-RPC error, cancels the call and says why; in a
// terminal, concurrent questions are asked one at a time.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, ROOT, requireBuiltCli } from './helpers.js';
import { haveTmux, Tmux } from './tmux.js';

const FIXTURE = join(ROOT, 'test/fixtures/flooding-legacy-server.mjs');
let dir: string;
beforeAll(() => {
  requireBuiltCli();
  dir = mkdtempSync(join(tmpdir(), 'mrtr-flood-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  code: number;
  stderr: string;
  /** What the server received from the client, one message per line. */
  seen: Array<Record<string, unknown>>;
}

let runs = 0;
function call(tool: string, args: object, ...flags: string[]): Promise<Run> {
  const log = join(dir, `seen-${++runs}.jsonl`);
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [
        CLI,
        'call',
        '--stdio',
        tool,
        '--args',
        JSON.stringify(args),
        ...flags,
        '--',
        process.execPath,
        FIXTURE,
        log,
      ],
      { timeout: 20_000 },
      (error, _stdout, stderr) => {
        const seen = readFileSync(log, 'utf8')
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => JSON.parse(l) as Record<string, unknown>);
        resolve({ code: child.exitCode ?? (error ? 1 : 0), stderr, seen });
      },
    );
    child.stdin?.end();
  });
}

const replies = (run: Run) => run.seen.filter((m) => m.method === undefined && m.id !== undefined);
const errorOf = (m: Record<string, unknown>) => (m.error as { message?: string } | undefined)?.message;
/** Replies whose error message is exactly `text`. */
const refusals = (run: Run, text: string) => replies(run).filter((m) => errorOf(m) === text);
const cancelled = (run: Run) => run.seen.some((m) => m.method === 'notifications/cancelled');

describe('a 2025 server that floods one call with requests', () => {
  it('more than 32 at once: the 33rd gets an error, the call is cancelled and ends as a protocol error (exit 5)', async () => {
    const run = await call('flood', { count: 2000 });
    expect(run.code).toBe(5);
    expect(run.stderr).toContain('the server asked more than 32 questions in one round');
    expect(refusals(run, 'the server asked more than 32 questions in one round')).toHaveLength(1);
    // Only the round's first 32 reached a resolver; each later request got an error saying the call has ended.
    const later = replies(run).filter((m) => (m.id as number) > 33);
    for (const m of later)
      expect(errorOf(m)).toBe('the call has ended: the server asked more than 32 questions in one round');
    expect(cancelled(run)).toBe(true);
  });

  it('one after another without end: the round cap ends the call (exit 4), as under MRTR', async () => {
    const run = await call('one_by_one', { count: 2000 }, '--max-rounds', '3');
    expect(run.code).toBe(4);
    expect(run.stderr).toContain('stopped at the round cap (3 retries)');
    expect(
      refusals(run, 'the server still asked for input after 3 rounds of questions (the round cap)'),
    ).toHaveLength(1);
    expect(replies(run)).toHaveLength(4);
    expect(cancelled(run)).toBe(true);
  });

  it('--max-rounds 0 refuses the first question', async () => {
    const run = await call('one_by_one', { count: 5 }, '--max-rounds', '0');
    expect(run.code).toBe(4);
    expect(replies(run)).toHaveLength(1);
    expect(
      refusals(run, 'the server still asked for input after 0 rounds of questions (the round cap)'),
    ).toHaveLength(1);
  });
});

describe('concurrent questions from a 2025 server in a terminal (tmux)', () => {
  const command = (count: number) =>
    `${process.execPath} ${CLI} call --stdio pair --args '{"count":${count}}' -- ${process.execPath} ${FIXTURE}; echo EXIT=$?; sleep 30`;

  it('asks them one at a time, and the call does not end while one is on screen', async () => {
    if (!haveTmux())
      throw new Error('tmux is not installed: apt-get install -y tmux (the interactive CLI test needs it)');
    const t = new Tmux(command(2));
    let s = await t.waitFor('Answer 1');
    expect(s).toContain('Question 1 of the pair');
    // The second question waits its turn: not drawn, and nothing claims the call ended.
    expect(s).not.toContain('Question 2 of the pair');
    expect(s).not.toMatch(/aborted|EXIT=/);
    t.type('ada', 'Enter');
    await t.waitFor('Send Answer 1 = ada?');
    t.type('Enter');
    s = await t.waitFor('Answer 2');
    expect(s).toContain('Question 2 of the pair');
    expect(s).not.toMatch(/aborted|EXIT=/);
    t.type('bob', 'Enter');
    await t.waitFor('Send Answer 2 = bob?');
    t.type('Enter');
    s = await t.waitFor('EXIT=');
    expect(s).toContain('answers: ada, bob');
    expect(s).toContain('EXIT=0');
  });

  it('40 at once: at most one is drawn, and the 33rd ends the call with nothing left on screen', async () => {
    if (!haveTmux())
      throw new Error('tmux is not installed: apt-get install -y tmux (the interactive CLI test needs it)');
    const t = new Tmux(command(40));
    const s = await t.waitFor('EXIT=');
    // The first question may have been drawn before the 33rd arrived (then withdrawn); no second one ever is.
    expect((s.match(/of the pair/g) ?? []).length).toBeLessThanOrEqual(1);
    expect(s).toContain('the server asked more than 32 questions in one round');
    expect(s).not.toContain('aborted');
    expect(s).toContain('EXIT=5');
  });
});
