// The status line of a followed task: one line per change in a log (spawned CLI against a scripted server that
// answers each poll when the test says), redrawn in place on a TTY (the call UI), server text never reaching the
// terminal as control sequences.
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskProgress } from '../../src/cli/terminal/task-progress.js';
import { CallUi } from '../../src/cli/terminal/ui.js';
import { safeLine } from '../../src/client/index.js';
import { requireBuiltCli } from '../client/helpers.js';
import { type TaskServer, taskServer, taskState } from '../client/task-server.js';
import { start } from './task-mrtr.js';

let server: TaskServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('the status line in a log (not a TTY)', () => {
  it('one line per change of status or message, sanitized; the resume line once', async () => {
    requireBuiltCli();
    server = await taskServer();
    const call = start(['call', server.url, 'slow']);
    const evil = 'step\x1b[2J\x1b]52;c;cGF5bG9hZA==\x07 1\nfake line';
    (await server.next('tools/call')).reply({ resultType: 'task', ...taskState('t\x1b[31m1', 'working') });
    const poll = async (status: string, extra: Record<string, unknown> = {}) =>
      (await server?.next('tasks/get'))?.reply({
        resultType: 'complete',
        ...taskState('t\x1b[31m1', status, extra),
      });
    await poll('working', { statusMessage: evil });
    await poll('working', { statusMessage: evil });
    await poll('working', { statusMessage: 'step 2' });
    await poll('completed', { result: { content: [{ type: 'text', text: 'ok' }] } });
    const r = await call.done;
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain('\x1b');
    const lines = r.stderr.split('\n').filter((l) => l.startsWith('task '));
    expect(lines).toEqual([
      'task t1 — resume with: ./bin/mrtr task get t1 ' + server.url,
      'task t1: working',
      'task t1: working — step 1 fake line',
      'task t1: working — step 2',
      'task t1: completed',
    ]);
  });
});

describe('the status line on a TTY', () => {
  it('is the spinner’s line, redrawn in place, and goes when the task ends', () => {
    const out = new PassThrough();
    let written = '';
    out.on('data', (c: Buffer) => {
      written += c.toString();
    });
    const ui = new CallUi({ out, live: true, color: false, server: () => safeLine('s') });
    const progress = new TaskProgress({ out, live: true, say: (t) => ui.line(t), resume: ['http://h/mcp'] });
    const event = (status: string, statusMessage?: string) => {
      const e = { type: 'task', taskId: 'x', status, statusMessage } as never;
      progress.onEvent(e);
      ui.onEvent(e);
    };
    ui.onEvent({ type: 'round', round: 1, method: 'tools/call', target: 't' });
    event('working', 'a\x1b[1Ab');
    event('working', '50%');
    ui.onEvent({ type: 'round', round: 2, method: 'tasks/update', target: 't' });
    expect(written).toContain('task x — resume with: ./bin/mrtr task get x http://h/mcp\n');
    // Drawn after a carriage return and an erase, never on a new line of its own.
    const drawn = written.split('\r\x1b[K').map((piece) => piece.slice(2));
    expect(drawn).toContain('task x: working — ab');
    expect(written.replaceAll('\r\x1b[K', '')).not.toContain('\x1b');
    expect(written).not.toContain('task x: working — 50%\n');
    event('completed');
    expect(written.endsWith('\r\x1b[K')).toBe(true);
    ui.stop();
  });
});

describe('the resume line', () => {
  it('for a stdio server, says the task is found again only through a store that outlives the process', () => {
    const said: string[] = [];
    const progress = new TaskProgress({
      out: new PassThrough(),
      live: true,
      say: (t) => void said.push(String(t)),
      resume: ['--stdio', '--', 'node', 'server.js'],
    });
    progress.onEvent({ type: 'task', taskId: 'x', status: 'working' } as never);
    expect(said).toEqual([
      'task x — resume with: ./bin/mrtr task get x --stdio -- node server.js',
      '  a stdio server finds it again only if it keeps tasks in a file or Redis store',
    ]);
  });
});
