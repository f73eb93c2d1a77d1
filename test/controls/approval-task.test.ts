// A client that declares the tasks extension gets a task for a call that waits for a person: the task checks again on
// the server's side for as long as it lives — well past any client's round cap — and completes once the person acts.
// The tests act on explicit signals: the audit event of the task's n-th check, the page's answer.
import { TOTP } from 'otpauth';
import { describe, expect, it } from 'vitest';
import { enrolTotp } from '../../src/controls/index.js';
import { getPage, hiddenFields, postForm, sessionCookie } from '../helpers/page-sessions.js';
import { observedControls } from './observed.js';

// biome-ignore lint/suspicious/noExplicitAny: replies are read as loose JSON, checked by the expectations
type Loose = any;

const taskOf = (e: { notes?: Readonly<Record<string, unknown>> | undefined }) => (e.notes?.task as Loose)?.id;

async function untilEnded(s: Awaited<ReturnType<typeof observedControls>>, taskId: string): Promise<Loose> {
  for (let i = 0; i < 5000; i++) {
    const task = (await s.withTasks('tasks/get', { taskId })).result;
    if (['completed', 'failed', 'cancelled'].includes(task.status)) return task;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error('the task never ended');
}

describe('a call that waits for an approver becomes a task', () => {
  it('checks again past any round cap (12 checks), shows "0 of 1", and completes once approved', async () => {
    const s = await observedControls({ pendingWaitMs: 0, tasks: { pollIntervalMs: 1 } });
    const created = (await s.withTasks('tools/call', { name: 'deploy', arguments: {} })).result;
    expect(created).toMatchObject({
      resultType: 'task',
      status: 'working',
      statusMessage: 'waiting for approval, 0 of 1 (role approver)',
    });
    const taskId = created.taskId as string;
    // The twelfth check: further than the Python SDK's 10 rounds and the server's own default round cap.
    const twelfth = await s.nextRound((e) => taskOf(e) === taskId && e.round === 12);
    expect(twelfth.outcome).toBe('input_required');
    const waiting = (await s.withTasks('tasks/get', { taskId })).result;
    expect(waiting).toMatchObject({
      status: 'working',
      statusMessage: 'waiting for approval, 0 of 1 (role approver)',
    });
    expect(waiting.inputRequests).toBeUndefined();
    const url = new URL((twelfth.inputRequests as Loose).approval.params.url);
    const vote = await fetch(`${url.origin}/mrtr/approvals/${url.pathname.split('/')[3]}`, {
      method: 'POST',
      headers: { authorization: 'Bearer bob-token', 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve', comment: 'ok' }),
    });
    expect(vote.status).toBe(200);
    const done = await untilEnded(s, taskId);
    expect(done).toMatchObject({ status: 'completed', result: { content: [{ text: 'deployed' }] } });
    // Every check was a round of its own, for alice, in the audit trail.
    const checks = s.rounds.filter((e) => taskOf(e) === taskId && e.method === 'tools/call');
    expect(checks.length).toBeGreaterThan(12);
    expect(checks.every((e) => e.principal?.subject === 'alice')).toBe(true);
  });

  it('a denial completes the task with the tool error naming who denied', async () => {
    const s = await observedControls({ pendingWaitMs: 0, tasks: { pollIntervalMs: 1 } });
    const { taskId } = (await s.withTasks('tools/call', { name: 'deploy', arguments: {} })).result;
    const check = await s.nextRound((e) => taskOf(e) === taskId && e.outcome === 'input_required');
    const url = new URL((check.inputRequests as Loose).approval.params.url);
    await fetch(`${url.origin}/mrtr/approvals/${url.pathname.split('/')[3]}`, {
      method: 'POST',
      headers: { authorization: 'Bearer bob-token', 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'deny', comment: 'not today' }),
    });
    const done = await untilEnded(s, taskId);
    expect(done.status).toBe('completed');
    expect(done.result.isError).toBe(true);
    expect(done.result.content[0].text).toContain('denied by');
  });

  it("bob cannot read or cancel alice's waiting task", async () => {
    const s = await observedControls({ pendingWaitMs: 0, tasks: { pollIntervalMs: 1 } });
    const { taskId } = (await s.withTasks('tools/call', { name: 'deploy', arguments: {} })).result;
    expect((await s.withTasks('tasks/get', { taskId }, 'bob-token')).error.code).toBe(-32602);
    expect((await s.withTasks('tasks/cancel', { taskId }, 'bob-token')).error.code).toBe(-32602);
    expect((await s.withTasks('tasks/get', { taskId })).result.status).toBe('working');
    await s.withTasks('tasks/cancel', { taskId });
    expect((await s.withTasks('tasks/get', { taskId })).result.status).toBe('cancelled');
  });
});

describe('a step-up that waits becomes a task', () => {
  it('the link is asked by MRTR; once the client opened it and the person is still at it, the wait is a task', async () => {
    const s = await observedControls({ pendingWaitMs: 0, tasks: { pollIntervalMs: 1 } });
    const { secret } = enrolTotp(s.totpFile, 'alice');
    const first = (await s.withTasks('tools/call', { name: 'recovery', arguments: {} })).result;
    // The person needs the link first: it goes to the client as a question, not into a task.
    expect(first.resultType).toBe('input_required');
    const url = first.inputRequests.step_up.params.url as string;
    const opened = (
      await s.withTasks('tools/call', {
        name: 'recovery',
        arguments: {},
        requestState: first.requestState,
        inputResponses: { step_up: { action: 'accept' } },
      })
    ).result;
    expect(opened).toMatchObject({ resultType: 'task', status: 'working' });
    expect(opened.statusMessage).toBe('waiting for the second factor: Show the recovery codes');
    const alice = await sessionCookie(s.origin, 'alice-token');
    const { csrf } = hiddenFields((await getPage(url, alice)).html);
    const code = new TOTP({ secret, algorithm: 'SHA1', digits: 6, period: 30 }).generate();
    expect((await postForm(url, alice, { csrf: csrf!, code }, s.origin)).html).toContain('Confirmed');
    const done = await untilEnded(s, opened.taskId);
    expect(done).toMatchObject({ status: 'completed', result: { content: [{ text: 'codes' }] } });
  });
});
