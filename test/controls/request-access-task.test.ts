// request_access (four-eyes approval) through mrtr's own client, which declares the tasks extension: the call becomes
// a task that waits on the server's side through more checks than any client's round cap (the client's own cap is
// 10), and completes once bob approves. The test acts on explicit signals: the audit of the task's twelfth check.
import { describe, expect, it, onTestFinished } from 'vitest';
import { McpClient, scriptedResolver } from '../../src/client/index.js';
import { useControls } from './fixture.js';

// biome-ignore lint/suspicious/noExplicitAny: replies are read as loose JSON, checked by the expectations
type Loose = any;

describe('request_access through a client that follows tasks', () => {
  it('completes after an approval that outlasted any round cap, the client seeing "waiting for approval"', async () => {
    const f = await useControls({ tasks: { pollIntervalMs: 1 } });
    const statuses: string[] = [];
    const client = new McpClient({
      server: `${f.origin}/mcp`,
      token: 'alice-token',
      // Declares URL elicitation (the approval asks for it); in a task the approval never reaches the client.
      resolvers: [scriptedResolver({}, { person: true })],
    });
    onTestFinished(() => client.close());
    const call = client.callTool(
      'request_access',
      { resource: 'prod-db', reason: 'Incident 4711' },
      {
        maxRounds: 10,
        onEvent: (e: Loose) => {
          if (e.type === 'task' && e.statusMessage && !statuses.includes(e.statusMessage))
            statuses.push(e.statusMessage);
        },
      },
    );
    // Wait for more checks than the client's cap of 10 rounds, then approve.
    await waitForChecks(f, 12);
    const pending: Loose[] = (await f.api('bob-token', '/mrtr/approvals')).json.approvals;
    expect(pending).toHaveLength(1);
    const approved = await f.api('bob-token', `/mrtr/approvals/${pending[0].id}`, { decision: 'approve' });
    expect(approved.status).toBe(200);
    const outcome = await call;
    expect(outcome.status).toBe('complete');
    if (outcome.status !== 'complete') return;
    expect(outcome.result.isError).toBeFalsy();
    expect(JSON.stringify(outcome.result.content)).toContain('prod-db');
    expect(statuses).toContain('waiting for approval, 0 of 1 (role approver)');
  });
});

/** Until the task has checked the approval `n` times: each check is a round of the task in the audit events. */
async function waitForChecks(f: Awaited<ReturnType<typeof useControls>>, n: number): Promise<void> {
  for (let i = 0; i < 200_000; i++) {
    const checks = f.rounds.filter((e) => (e.notes?.task as Loose)?.id && e.outcome === 'input_required');
    if (checks.length >= n) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`fewer than ${n} checks`);
}
