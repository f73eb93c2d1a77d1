// The gateway's injected approval, for a client that declares the tasks extension: the call becomes a task that
// waits for the approver on the gateway's side, calls the upstream once when approved, and never before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
