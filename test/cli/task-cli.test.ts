// `mrtr call` on a task and `mrtr task get|cancel`, as a user types them, against the real server:
// `mrtr serve --fixture conformance` (its tools slow_compute, confirm_delete, multi_input, failing_job,
// protocol_error_job run as tasks for a client that declares the extension).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBuiltCli } from '../client/helpers.js';
import { type ServedCli, serveCli } from '../helpers/serve-cli.js';
import { announcedTask, mrtr, start } from './task-mrtr.js';

let served: ServedCli;
let url: string;
beforeAll(async () => {
  requireBuiltCli();
  served = await serveCli(['--fixture', 'conformance', '--port', '0']);
  url = served.url;
});
afterAll(() => served?.stop());

describe('mrtr call on a task', () => {
  it('announces the task once with how to resume it, prints its status per change, then the result', async () => {
    const r = await mrtr('call', url, 'slow_compute', '--args', '{"seconds":0,"label":"sum"}');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('sum done after 0 s\n');
    const id = announcedTask(r.stderr);
    expect(r.stderr.split(`task ${id} — resume with: ./bin/mrtr task get ${id} ${url}\n`)).toHaveLength(2);
    expect(r.stderr).toContain(`task ${id}: completed`);
  });

  it('answers the task’s question from --answers; --json reports the call as a call', async () => {
    const r = await mrtr(
      'call',
      url,
      'confirm_delete',
      '--args',
      '{"filename":"a.txt"}',
      '--answers',
      '{"confirm":{"confirm":true}}',
      '--json',
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      status: 'complete',
      rounds: 2,
      result: { content: [{ type: 'text', text: 'a.txt deleted' }] },
    });
    expect(r.stderr).toMatch(/task \S+: input_required/);
  });

  it('two questions at once are both answered in one tasks/update', async () => {
    const r = await mrtr(
      'call',
      url,
      'multi_input',
      '--answers',
      '{"first":{"name":"x"},"second":{"name":"y"}}',
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('first: x, second: y\n');
  });

  it('a task ending with a tool error exits 1; one failed with a JSON-RPC error exits 1 naming it', async () => {
    const tool = await mrtr('call', url, 'failing_job');
    expect(tool.code).toBe(1);
    expect(tool.stderr).toContain('the tool reported an error');
    const failed = await mrtr('call', url, 'protocol_error_job');
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('mrtr call: server error -32603: protocol_error_job failed');
  });

  it('Ctrl-C in mrtr call cancels the task (tasks/cancel), says so and exits 130', async () => {
    const call = start(['call', url, 'slow_compute', '--args', '{"seconds":300}']);
    await call.saidOnStderr('resume with');
    const id = announcedTask(call.stderr());
    await call.saidOnStderr(`task ${id}: working`);
    call.interrupt();
    const ended = await call.done;
    expect(ended.code).toBe(130);
    expect(ended.stderr).toContain('mrtr call: interrupted: the task was cancelled');
    const state = await mrtr('task', 'get', id, url, '--no-wait', '--json');
    expect(state.code).toBe(0);
    expect(JSON.parse(state.stdout)).toMatchObject({ taskId: id, status: 'cancelled' });
  });

  it('Ctrl-C in mrtr task get only stops watching: the task goes on', async () => {
    const first = await mrtr('call', url, 'slow_compute', '--args', '{"seconds":300}', '--timeout', '1');
    const id = announcedTask(first.stderr);
    const watch = start(['task', 'get', id, url]);
    await watch.saidOnStderr(`task ${id}: working`);
    watch.interrupt();
    const ended = await watch.done;
    expect(ended.code).toBe(130);
    expect(ended.stderr).toContain(
      `stopped watching task ${id}; it keeps running on the server (./bin/mrtr task cancel ${id} ${url} ends it)`,
    );
    const state = await mrtr('task', 'get', id, url, '--no-wait', '--json');
    expect(JSON.parse(state.stdout)).toMatchObject({ taskId: id, status: 'working' });
    await mrtr('task', 'cancel', id, url);
  });
});

// Ten mrtr processes in one test: each start costs 2–3 s on a loaded CI machine.
const LONG = 90_000;

describe('mrtr task get and cancel', () => {
  it('--timeout stops the waiting, not the task: it says so, and the task is still there to resume', async () => {
    const r = await mrtr(
      'call',
      url,
      'slow_compute',
      '--args',
      '{"seconds":60,"label":"long"}',
      '--timeout',
      '1',
    );
    expect(r.code).toBe(7);
    const id = announcedTask(r.stderr);
    expect(r.stderr).toContain(
      `the task keeps running on the server: resume it with ./bin/mrtr task get ${id} ${url}`,
    );
    const look = await mrtr('task', 'get', id, url, '--no-wait');
    expect(look.code).toBe(0);
    expect(look.stdout).toContain(`task ${id}: working`);
    await mrtr('task', 'cancel', id, url);
  });

  it(
    'a task left waiting for an answer is resumed with mrtr task get and its answer',
    async () => {
      const first = await mrtr('call', url, 'confirm_delete', '--args', '{"filename":"b.txt"}');
      expect(first.code).toBe(6);
      const id = announcedTask(first.stderr);
      // Not "run it again": that would start a second task. The advice names the waiting one.
      expect(first.stderr).toContain(
        `mrtr call: the task waits on the server for the answer: give it with ./bin/mrtr task get ${id} ${url} --answers '{"confirm": …}'`,
      );
      const stillWaiting = await mrtr('task', 'get', id, url);
      expect(stillWaiting.code).toBe(6);
      expect(stillWaiting.stderr).toContain(`give it with ./bin/mrtr task get ${id} ${url} --answers`);
      const look = await mrtr('task', 'get', id, url, '--no-wait');
      expect(look.code).toBe(0);
      expect(look.stdout).toContain(`task ${id}: input_required`);
      expect(look.stdout).toContain('asks confirm — Delete b.txt?');
      const resumed = await mrtr('task', 'get', id, url, '--answers', '{"confirm":{"confirm":true}}');
      expect(resumed.code).toBe(0);
      expect(resumed.stdout).toBe('b.txt deleted\n');
      expect(resumed.stderr).not.toContain('resume with');
      const again = await mrtr('task', 'get', id, url, '--json');
      expect(JSON.parse(again.stdout)).toMatchObject({ status: 'complete', rounds: 0 });
    },
    LONG,
  );

  it(
    'mrtr task cancel sends tasks/cancel and says what became of the task',
    async () => {
      const first = await mrtr('call', url, 'confirm_delete', '--args', '{"filename":"c.txt"}');
      const id = announcedTask(first.stderr);
      const cancel = await mrtr('task', 'cancel', id, url);
      expect(cancel).toMatchObject({ code: 0, stdout: `task ${id} cancelled\n` });
      const followed = await mrtr('task', 'get', id, url);
      expect(followed.code).toBe(1);
      expect(followed.stderr).toContain(`mrtr task get: task ${id} was cancelled`);
      const twice = await mrtr('task', 'cancel', id, url);
      expect(twice).toMatchObject({ code: 0, stdout: `task ${id} was already cancelled: nothing to do\n` });
      const twiceJson = await mrtr('task', 'cancel', id, url, '--json');
      expect(twiceJson.code).toBe(0);
      expect(JSON.parse(twiceJson.stdout)).toEqual({
        taskId: id,
        before: 'cancelled',
        status: 'cancelled',
        cancelled: true,
      });
      const waiting = await mrtr('call', url, 'confirm_delete', '--args', '{"filename":"e.txt"}');
      const waitingId = announcedTask(waiting.stderr);
      const cancelJson = await mrtr('task', 'cancel', waitingId, url, '--json');
      expect(JSON.parse(cancelJson.stdout)).toEqual({
        taskId: waitingId,
        before: 'input_required',
        status: 'cancelled',
        cancelled: true,
      });
      // A task that completed before the cancel is not reported as cancelled.
      const done = await mrtr('call', url, 'confirm_delete', '--args', '{"filename":"d.txt"}');
      const doneId = announcedTask(done.stderr);
      await mrtr('task', 'get', doneId, url, '--answers', '{"confirm":{"confirm":true}}');
      const late = await mrtr('task', 'cancel', doneId, url);
      expect(late).toMatchObject({
        code: 0,
        stdout: `task ${doneId} had already ended (completed): nothing to cancel\n`,
      });
    },
    LONG,
  );

  it('an id the server does not know: one line naming it, exit 1 (get, get --no-wait, cancel)', async () => {
    for (const args of [
      ['get', 'no-such-task', url],
      ['get', 'no-such-task', url, '--no-wait'],
      ['cancel', 'no-such-task', url],
    ]) {
      const r = await mrtr('task', ...args);
      expect(r.code, args.join(' ')).toBe(1);
      const lines = r.stderr.trimEnd().split('\n');
      expect(lines, args.join(' ')).toHaveLength(1);
      expect(lines[0]).toMatch(/^mrtr task (get|cancel): task no-such-task is not known to /);
      // With --json, stdout says the same for a script (it was empty for get --no-wait and cancel).
      const json = await mrtr('task', ...args, '--json');
      expect(json.code, `${args.join(' ')} --json`).toBe(1);
      expect(JSON.parse(json.stdout), `${args.join(' ')} --json`).toMatchObject({
        status: 'server_error',
        error: { code: -32602 },
        exitCode: 1,
      });
    }
  });

  it('mrtr task with no subcommand or an unknown one: usage, exit 2; --help lists the commands', async () => {
    const none = await mrtr('task');
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('mrtr task: needs a subcommand: get or cancel');
    const unknown = await mrtr('task', 'list');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("mrtr task: unknown subcommand 'list'");
    const missing = await mrtr('task', 'get', 'only-an-id');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('needs <id> and <url>');
    const help = await mrtr('task', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('mrtr task cancel <id> <url>');
    const top = await mrtr('--help');
    expect(top.stdout).toContain('task get <id> <url>');
  });
});

describe('mrtr serve --task-ttl-ms --max-tasks', () => {
  it('keeps tasks as long as --task-ttl-ms says, and one person gets at most --max-tasks unfinished ones', async () => {
    const limited = await serveCli([
      '--fixture',
      'conformance',
      '--port',
      '0',
      '--max-tasks',
      '1',
      '--task-ttl-ms',
      '60000',
    ]);
    try {
      const first = await mrtr('call', limited.url, 'confirm_delete', '--args', '{"filename":"a.txt"}');
      const id = announcedTask(first.stderr);
      const state = await mrtr('task', 'get', id, limited.url, '--no-wait', '--json');
      expect(JSON.parse(state.stdout)).toMatchObject({ taskId: id, status: 'input_required', ttlMs: 60_000 });
      // The one place is taken by the waiting task: the next call runs as plain rounds, not as a task.
      const second = await mrtr('call', limited.url, 'slow_compute', '--args', '{"seconds":0,"label":"sum"}');
      expect(second).toMatchObject({ code: 0, stdout: 'sum done after 0 s\n' });
      expect(second.stderr).not.toContain('resume with');
      // Once the first task ends, its place is free again.
      await mrtr('task', 'cancel', id, limited.url);
      const third = await mrtr('call', limited.url, 'slow_compute', '--args', '{"seconds":0,"label":"sum"}');
      expect(third.code).toBe(0);
      expect(third.stderr).toContain('resume with');
    } finally {
      await limited.stop();
    }
  });

  it('a bad --task-ttl-ms or --max-tasks is a usage error naming it, exit 2', async () => {
    for (const [flag, value, said] of [
      ['--task-ttl-ms', '1h', "--task-ttl-ms must be an integer from 1 to 4294967295 (ms), got '1h'"],
      ['--task-ttl-ms', '0', "--task-ttl-ms must be an integer from 1 to 4294967295 (ms), got '0'"],
      ['--max-tasks', '0', "--max-tasks must be an integer from 1 to 10000, got '0'"],
      ['--max-tasks', '10001', "--max-tasks must be an integer from 1 to 10000, got '10001'"],
    ] as const) {
      const r = await mrtr('serve', '--fixture', 'conformance', '--port', '0', flag, value);
      expect(r.code, `${flag} ${value}`).toBe(2);
      expect(r.stderr).toBe(`mrtr serve: ${said}\n`);
    }
  });
});
