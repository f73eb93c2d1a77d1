// Cloud administration end to end: resize_vm asks which VM among the caller's own, and why when it is in
// production; checked in the cloud database. Then the attacks.
import { type InputQuestion, scriptedResolver } from 'mrtr/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attackSuite } from './attacks.js';
import { accept, startWorkflows, type WorkflowsServer } from './workflows-server.js';

let s: WorkflowsServer;
beforeAll(async () => {
  s = await startWorkflows();
});
afterAll(() => s.stop());

interface Vm {
  id: string;
  owner: string;
  environment: string;
  size: string;
}
const vms = (where: string, ...params: unknown[]) =>
  s.query<Vm>(
    'cloud.db',
    `SELECT id, owner, environment, size FROM vms WHERE ${where} ORDER BY id`,
    ...params,
  );
const vm = (id: string) => vms('id = ?', id)[0]!;
const changes = () => s.query<{ n: number }>('cloud.db', 'SELECT count(*) AS n FROM vm_changes')[0]!.n;
const choicesOf = (q: InputQuestion) =>
  (q.request.params as { requestedSchema: { properties: { choice: { enum: string[] } } } }).requestedSchema
    .properties.choice.enum;

describe('resize_vm', () => {
  it("offers exactly the caller's own VMs, asks why for production, re-asks a too short reason, resizes once", async () => {
    const target = vms("owner = 'alice' AND environment = 'production' AND size != 'large'")[0]!;
    const seen: InputQuestion[] = [];
    let short = true;
    const client = s.client('alice', [
      scriptedResolver({
        vm: (q) => (seen.push(q), accept({ choice: target.id })),
        justification: (q) => {
          seen.push(q);
          const text = short ? 'load' : 'checkout latency doubled since Monday';
          short = false;
          return accept({ text });
        },
      }),
    ]);
    const outcome = await client.callTool('resize_vm', { size: 'large' });
    expect(outcome).toMatchObject({ status: 'complete', rounds: 4 });
    expect(choicesOf(seen[0]!)).toEqual(vms("owner = 'alice'").map((v) => v.id));
    expect(choicesOf(seen[0]!).length).toBeGreaterThan(3);
    expect(seen[1]!.message).toContain('is in production: why resize it to large?');
    expect(seen[2]!.message).toContain('Your previous answer was not valid');
    expect(vm(target.id).size).toBe('large');
    const [log] = s.query<{ action: string; detail: string; by: string }>(
      'cloud.db',
      'SELECT action, detail, by FROM vm_changes WHERE vm_id = ?',
      target.id,
    );
    expect(log).toMatchObject({ action: 'resize', by: 'alice' });
    expect(JSON.parse(log!.detail)).toEqual({
      from: target.size,
      to: 'large',
      justification: 'checkout latency doubled since Monday',
    });
  });

  it('needs no justification outside production', async () => {
    const target = vms("owner = 'bob' AND environment != 'production' AND size != 'small'")[0]!;
    const client = s.client('bob', [scriptedResolver({ vm: accept({ choice: target.id }) })]);
    const outcome = await client.callTool('resize_vm', { size: 'small' });
    expect(outcome).toMatchObject({ status: 'complete', rounds: 2 });
    expect(vm(target.id).size).toBe('small');
  });

  it("refuses another person's VM as if it did not exist; an admin may resize it", async () => {
    const bobs = vms("owner = 'bob' AND environment = 'development' AND size != 'medium'")[0]!;
    const before = changes();
    const outcome = await s.client('alice', []).callTool('resize_vm', { vmId: bobs.id, size: 'medium' });
    expect(outcome.status).toBe('complete');
    if (outcome.status === 'complete') {
      expect(outcome.result.isError).toBe(true);
      expect(outcome.result.content).toEqual([{ type: 'text', text: `You have no VM ${bobs.id}` }]);
    }
    expect(changes()).toBe(before);
    const byAdmin = await s.client('carol', []).callTool('resize_vm', { vmId: bobs.id, size: 'medium' });
    expect(byAdmin).toMatchObject({ status: 'complete', rounds: 1 });
    expect(vm(bobs.id).size).toBe('medium');
  });

  it('says so when the VM already has that size, and changes nothing', async () => {
    const target = vms("owner = 'carol'")[0]!;
    const before = changes();
    const outcome = await s.client('carol', []).callTool('resize_vm', { vmId: target.id, size: target.size });
    expect(outcome.status).toBe('complete');
    if (outcome.status === 'complete')
      expect(outcome.result.content).toEqual([
        { type: 'text', text: `${target.id} is already ${target.size}` },
      ]);
    expect(changes()).toBe(before);
  });
});

describe('resize_vm under attack', () => {
  attackSuite(
    () => s,
    () => {
      const [mine, other] = vms("owner = 'alice' AND environment = 'production' AND size != 'xlarge'");
      return {
        tool: 'resize_vm',
        owner: 'alice',
        intruder: 'bob',
        args: { size: 'xlarge' },
        changedArgs: { size: 'small' },
        first: { vm: accept({ choice: mine!.id }) },
        other: { vm: accept({ choice: other!.id }) },
        later: { justification: accept({ text: 'a reason long enough' }) },
        rest: () => ({ justification: accept({ text: 'a reason long enough' }) }),
        effects: changes,
      };
    },
  );
});
