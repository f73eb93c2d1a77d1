// The gateway's injected approval, for a client that declares the tasks extension: the call becomes a task that
// waits for the approver on the gateway's side, calls the upstream once when approved, and never before.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flowsOf } from '../../src/audit/internal.js';
import type { PageSession } from '../../src/auth/index.js';
import type { Html } from '../../src/auth/internal.js';
import { ApprovalsPanel, type PanelContext } from '../../src/console/index.js';
import { mcp } from '../helpers/mcp-http.js';
import { type ChangingUpstream, startChangingUpstream } from './fixtures/changing-upstream.js';
import { type GatewayUnderTest, type Loose, useGateway, type Who } from './fixtures/gateway-under-test.js';

const PATH_SCHEMA = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
const RULES = `  - name: moves need approval
    tools: ["up/move"]
    roles: [requester]
    require: [approval]
    approval: { role: approver, expiresIn: 1h }
`;
const WITH_TASKS = {
  'io.modelcontextprotocol/clientCapabilities': {
    elicitation: { form: {}, url: {} },
    extensions: { 'io.modelcontextprotocol/tasks': {} },
  },
};

let up: ChangingUpstream;
beforeAll(async () => {
  up = await startChangingUpstream({ move: { description: 'Move a file', inputSchema: PATH_SCHEMA } });
});
afterAll(() => up?.close());

const asTasksClient = (g: GatewayUnderTest, who: Who, method: string, params: Record<string, unknown>) =>
  mcp(g.url, method, params, { headers: { authorization: `Bearer ${who}-token` }, meta: WITH_TASKS }).then(
    (r) => r.response as Loose,
  );

async function until(g: GatewayUnderTest, taskId: string, done: (t: Loose) => boolean): Promise<Loose> {
  for (let i = 0; i < 5000; i++) {
    const task = (await asTasksClient(g, 'alice', 'tasks/get', { taskId })).result;
    if (done(task)) return task;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error('the task never got there');
}

describe("the gateway's approval as a task", () => {
  it('waits for the approver on the gateway side, then calls the upstream exactly once', async () => {
    const g = await useGateway({ upstreamUrl: up.url, rules: RULES, tasks: { pollIntervalMs: 1 } });
    const before = up.calls.length;
    const created = (
      await asTasksClient(g, 'alice', 'tools/call', { name: 'up__move', arguments: { path: '/srv/a' } })
    ).result;
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    expect(created.statusMessage).toMatch(/^waiting for approval, 0 of 1/);
    // Several checks go by with nothing decided: the upstream is not called.
    const check = await new Promise<Loose>((resolve) => {
      const seen = () => {
        const found = g.events.filter(
          (e) => (e.notes?.task as Loose)?.id === created.taskId && e.inputRequests,
        );
        if (found.length >= 3) return resolve(found.at(-1));
        setImmediate(seen);
      };
      seen();
    });
    expect(up.calls.length).toBe(before);
    const id = new URL(check.inputRequests.approval.params.url).pathname.split('/')[3];
    const vote = await fetch(`${g.origin}/mrtr/approvals/${id}`, {
      method: 'POST',
      headers: { authorization: 'Bearer bob-token', 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(vote.status).toBe(200);
    const done = await until(g, created.taskId, (t) => t.status === 'completed');
    expect(done.result.isError).not.toBe(true);
    expect(up.calls.length).toBe(before + 1);
    // The task is alice's: bob, the approver, cannot read it.
    expect((await asTasksClient(g, 'bob', 'tasks/get', { taskId: created.taskId })).error.code).toBe(-32602);
  });
});

/** bob's JSON inbox: what waits for him and what was decided lately. */
async function inboxOf(g: GatewayUnderTest): Promise<Loose> {
  const reply = await fetch(`${g.origin}/mrtr/approvals`, { headers: { authorization: 'Bearer bob-token' } });
  expect(reply.status).toBe(200);
  return reply.json();
}

/** The console's approvals page as bob sees it (the panel drawn straight, without a browser). */
async function consoleOf(g: GatewayUnderTest): Promise<string> {
  const bob = { subject: 'bob', issuer: 'x', roles: ['approver'], via: 'dev', sid: 's', expiresAt: 0 };
  let body = '';
  const ctx = {
    session: bob as PageSession,
    roles: new Set(['approver']),
    csrf: 'c',
    url: new URL('http://x/mrtr/console/approvals'),
    origin: 'http://x',
    checkForm: () => false,
    postedForm: async () => undefined,
    notAllowed: () => {},
    page: (_status: number, _title: string, b: Html) => {
      body = b.markup;
    },
    seeOther: () => {},
    json: () => {},
  } as PanelContext;
  await new ApprovalsPanel(g.gateway.controls, () => g.clock.now).handle(
    { method: 'GET' } as IncomingMessage,
    {} as ServerResponse,
    ctx,
    '',
  );
  return body;
}

const vote = (g: GatewayUnderTest, id: string) =>
  fetch(`${g.origin}/mrtr/approvals/${id}`, {
    method: 'POST',
    headers: { authorization: 'Bearer bob-token', 'content-type': 'application/json' },
    body: JSON.stringify({ decision: 'approve' }),
  });

describe('approval requests nobody should decide any more', () => {
  it('a cancelled task withdraws its request (inbox, console, vote) and its flow reads cancelled', async () => {
    const g = await useGateway({ upstreamUrl: up.url, rules: RULES, tasks: { pollIntervalMs: 1 } });
    const created = (
      await asTasksClient(g, 'alice', 'tools/call', { name: 'up__move', arguments: { path: '/srv/c' } })
    ).result;
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    const [asked] = (await inboxOf(g)).approvals;
    expect(asked).toMatchObject({ state: 'pending', status: 'Waiting for a decision' });
    // The controls tell of the withdrawal: the signal this test waits for.
    const withdrawn = new Promise<Loose>((resolve) =>
      g.gateway.controls.subscribe((e) => e.action === 'withdrawn' && resolve(e)),
    );
    await asTasksClient(g, 'alice', 'tasks/cancel', { taskId: created.taskId });
    await until(g, created.taskId, (t) => t.status === 'cancelled');
    expect(await withdrawn).toMatchObject({ control: 'approval', id: asked.id });
    const why = 'Withdrawn by the server: the task that asked was cancelled';
    const { approvals, decided } = await inboxOf(g);
    expect(approvals).toEqual([]);
    expect(decided).toEqual([expect.objectContaining({ id: asked.id, state: 'withdrawn', status: why })]);
    // The console says the same words; the request is not decidable.
    const page = await consoleOf(g);
    expect(page).toContain('Nothing waits for your decision.');
    expect(page).toContain(`<td>withdrawn<div class="muted">${why}</div></td>`);
    const refused = await vote(g, asked.id);
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ error: 'already_withdrawn' });
    expect(g.controlEvents).toContainEqual(
      expect.objectContaining({ control: 'approval', action: 'withdrawn', id: asked.id }),
    );
    // The audit trail: the task's flow ends cancelled, not input_required.
    const records = g.events.map((e) => ({
      ...e,
      flowId: e.flowId ?? null,
      time: new Date(e.startedAt).toISOString(),
      instance: 'i',
      seq: 0,
      principal: e.principal ? { sub: e.principal.subject } : null,
    }));
    const flows = flowsOf(records as Loose);
    expect(flows.map((f) => [f.target, f.outcome, f.reason])).toEqual([
      ['up__move', 'cancelled', 'the task was cancelled by its caller'],
    ]);
  });

  it('a replaced policy withdraws the requests asked under the old one, and says why', async () => {
    const g = await useGateway({ upstreamUrl: up.url, rules: RULES });
    const first = (await g.call('alice', 'up__move', { path: '/srv/r' })).response.result as Loose;
    expect(first.resultType).toBe('input_required');
    const [asked] = (await inboxOf(g)).approvals;
    expect(asked.state).toBe('pending');
    const old = g.gateway.policy.digest;
    g.reload(`${RULES}  - name: readers
    tools: ["up/move"]
    roles: [approver]
`);
    expect(await g.gateway.withdrawal).toBe(1);
    const why = `Withdrawn by the server: the gateway policy it was asked under (version ${old.slice(0, 12)}) was replaced by version ${g.gateway.policy.digest.slice(0, 12)}`;
    expect((await inboxOf(g)).approvals).toEqual([]);
    expect((await inboxOf(g)).decided).toEqual([
      expect.objectContaining({ id: asked.id, state: 'withdrawn', status: why }),
    ]);
    expect(await consoleOf(g)).toContain(`<td>withdrawn<div class="muted">${why}</div></td>`);
    expect((await vote(g, asked.id)).status).toBe(409);
    // The same rules again replace nothing: no request is withdrawn.
    const second = (await g.call('alice', 'up__move', { path: '/srv/s' })).response.result as Loose;
    expect(second.resultType).toBe('input_required');
    g.reload(`${RULES}  - name: readers
    tools: ["up/move"]
    roles: [approver]
`);
    expect(await g.gateway.withdrawal).toBe(0);
    expect((await inboxOf(g)).approvals).toHaveLength(1);
  });
});
