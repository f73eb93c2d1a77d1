// Cloud administration end to end: resize_vm asks which VM among the caller's own, and why when it is in
// production; delete_vm asks consent to the exact VM as it is now and refuses one that changed since; checked in the
// cloud database. Then the attacks.
import { randomUUID } from 'node:crypto';
import { agentPolicyResolver, type InputQuestion, scriptedResolver } from 'mrtr/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attackSuite, nestedObject, TOO_DEEP } from './attacks.js';
import { accept, startWorkflows, type WorkflowsServer } from './workflows-server.js';

let s: WorkflowsServer;
beforeAll(async () => {
  s = await startWorkflows();
});
afterAll(() => s.stop());

interface Vm {
  id: string;
  name: string;
  owner: string;
  environment: string;
  size: string;
  state: string;
}
const vms = (where: string, ...params: unknown[]) =>
  s.query<Vm>(
    'cloud.db',
    `SELECT id, name, owner, environment, size, state FROM vms WHERE ${where} ORDER BY id`,
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
        vm: (q) => {
          seen.push(q);
          return accept({ choice: target.id });
        },
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
    expect(choicesOf(seen[0]!)).toEqual(vms("owner = 'alice' AND state != 'deleted'").map((v) => v.id));
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

  it('keeps its VM question when another flow resizes one of the VMs between rounds: the answer applies', async () => {
    const [target, other] = vms("owner = 'bob' AND environment != 'production' AND size != 'medium'");
    const client = s.client('bob', [
      scriptedResolver({
        vm: () => {
          // Meanwhile someone resizes another of bob's machines.
          s.write(
            'cloud.db',
            'UPDATE vms SET size = ? WHERE id = ?',
            other!.size === 'small' ? 'xlarge' : 'small',
            other!.id,
          );
          return accept({ choice: target!.id });
        },
      }),
    ]);
    const outcome = await client.callTool('resize_vm', { size: 'medium' });
    // Asked once, answered once: the round after the answer completes.
    expect(outcome).toMatchObject({ status: 'complete', rounds: 2 });
    expect(vm(target!.id).size).toBe('medium');
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
  it('resizes nothing for a one-round call whose extra argument nests 1,000 levels deep; the refusal is audited', async () => {
    // As reported: resize_vm resized a VM and wrote its change row, and the trail had no event of it.
    const target = vms("owner = 'bob' AND environment != 'production' AND size != 'large'")[0]!;
    const before = changes();
    const id = randomUUID();
    const r = await s.call(
      'carol',
      { name: 'resize_vm', arguments: { vmId: target.id, size: 'large', extra: nestedObject(1000) } },
      id,
    );
    expect(r.response.error).toEqual(TOO_DEEP.error);
    expect(vm(target.id).size).toBe(target.size);
    expect(changes()).toBe(before);
    const events = (await s.audit()).filter((e) => e.requestId === id);
    expect(events.map((e) => [e.outcome, e.reason, e.arguments])).toEqual([
      ['refused', 'code -32602', TOO_DEEP.recorded],
    ]);
  });

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

describe('delete_vm', () => {
  const yes = accept({ confirm: true });
  // The answers a person gives: only a resolver that says so may answer a consent.
  const PERSON = { person: true };
  const deletions = (id: string) =>
    s.query<{ action: string; by: string; detail: string }>(
      'cloud.db',
      "SELECT action, by, detail FROM vm_changes WHERE vm_id = ? AND action = 'delete'",
      id,
    );

  it('asks consent to the VM as it is now (id, name, size, state, owner), marked for a person; yes deletes it once', async () => {
    const target = vms("owner = 'bob' AND state = 'running'")[0]!;
    const seen: InputQuestion[] = [];
    const client = s.client('bob', [
      scriptedResolver(
        {
          consent: (q) => {
            seen.push(q);
            return yes;
          },
        },
        PERSON,
      ),
    ]);
    const outcome = await client.callTool('delete_vm', { vmId: target.id });
    expect(outcome).toMatchObject({ status: 'complete', rounds: 2 });
    if (outcome.status === 'complete')
      expect(outcome.result.content).toEqual([
        { type: 'text', text: `${target.id} (${target.name}) deleted` },
      ]);
    expect(seen[0]!.personRequired).toBe('consent');
    expect(seen[0]!.message).toBe(
      `Delete ${target.id} (${target.name})? This cannot be undone.\n  tool: delete_vm\n  vm: ${target.id}\n` +
        `  name: ${target.name}\n  size: ${target.size}\n  state: running\n  owner: bob`,
    );
    expect(vm(target.id).state).toBe('deleted');
    const log = deletions(target.id);
    expect(log).toHaveLength(1);
    expect(log[0]!.by).toBe('bob');
    expect(JSON.parse(log[0]!.detail)).toMatchObject({ vm: target.id, state: 'running', owner: 'bob' });
    // Gone for everyone: not offered, not found.
    const again = await s.client('bob', [scriptedResolver({ consent: yes }, PERSON)]).callTool('delete_vm', {
      vmId: target.id,
    });
    expect(again.status === 'complete' && again.result.content).toEqual([
      { type: 'text', text: `You have no VM ${target.id}` },
    ]);
    expect(deletions(target.id)).toHaveLength(1);
  });

  it('a missing id is asked as a choice among the caller’s VMs, then the consent', async () => {
    const target = vms("owner = 'carol' AND state != 'deleted'")[0]!;
    const client = s.client('carol', [
      scriptedResolver({ vm: accept({ choice: target.id }), consent: yes }, PERSON),
    ]);
    const outcome = await client.callTool('delete_vm', {});
    expect(outcome).toMatchObject({ status: 'complete', rounds: 3 });
    expect(vm(target.id).state).toBe('deleted');
  });

  it('an agent policy resolver never answers the consent, whatever its rules: the call needs a person, nothing is deleted', async () => {
    const target = vms("owner = 'bob' AND state != 'deleted'")[0]!;
    const agent = agentPolicyResolver({
      rules: [{ answer: { action: 'accept', content: { confirm: true } } }],
    });
    const outcome = await s.client('bob', [agent]).callTool('delete_vm', { vmId: target.id });
    expect(outcome.status).toBe('needs_person');
    if (outcome.status === 'needs_person') expect(outcome.pending.map((p) => p.key)).toEqual(['consent']);
    expect(vm(target.id).state).toBe(target.state);
    expect(deletions(target.id)).toHaveLength(0);
  });

  it('a VM that changed between the consent question and the yes is refused and not deleted', async () => {
    const target = vms("owner = 'bob' AND state != 'deleted' AND size != 'xlarge'")[0]!;
    const client = s.client('bob', [
      scriptedResolver(
        {
          consent: () => {
            // Meanwhile someone resizes it: the person's yes was to the old machine.
            s.write('cloud.db', "UPDATE vms SET size = 'xlarge' WHERE id = ?", target.id);
            return yes;
          },
        },
        PERSON,
      ),
    ]);
    const outcome = await client.callTool('delete_vm', { vmId: target.id });
    expect(outcome.status).toBe('complete');
    if (outcome.status === 'complete') {
      expect(outcome.result.isError).toBe(true);
      expect(JSON.stringify(outcome.result.content)).toContain(
        'refused: the effect changed after you consented',
      );
    }
    expect(vm(target.id)).toMatchObject({ size: 'xlarge', state: target.state });
    expect(deletions(target.id)).toHaveLength(0);
    const refused = (await s.audit()).filter(
      (e) => e.target === 'delete_vm' && JSON.stringify(e.notes).includes('effect_changed'),
    );
    expect(refused.length).toBeGreaterThan(0);
  });

  it("another person's VM is not found; no is a refusal that deletes nothing", async () => {
    const carols = vms("owner = 'carol' AND state != 'deleted'")[0]!;
    const foreign = await s
      .client('bob', [scriptedResolver({ consent: yes }, PERSON)])
      .callTool('delete_vm', {
        vmId: carols.id,
      });
    expect(foreign.status === 'complete' && foreign.result.content).toEqual([
      { type: 'text', text: `You have no VM ${carols.id}` },
    ]);
    const no = await s
      .client('carol', [scriptedResolver({ consent: accept({ confirm: false }) }, PERSON)])
      .callTool('delete_vm', { vmId: carols.id });
    expect(no.status === 'complete' && no.result.isError).toBe(true);
    expect(vm(carols.id).state).toBe(carols.state);
  });
});

describe('delete_vm under attack', () => {
  attackSuite(
    () => s,
    () => {
      const [mine, other] = vms("owner = 'alice' AND environment != 'production' AND state != 'deleted'");
      return {
        tool: 'delete_vm',
        owner: 'alice',
        intruder: 'bob',
        args: {},
        changedArgs: { vmId: mine!.id },
        first: { vm: accept({ choice: mine!.id }) },
        other: { vm: accept({ choice: other!.id }) },
        later: { consent: accept({ confirm: true }) },
        rest: () => ({ consent: accept({ confirm: true }) }),
        effects: () =>
          s.query<{ n: number }>(
            'cloud.db',
            "SELECT count(*) AS n FROM vm_changes WHERE action = 'delete'",
          )[0]!.n,
      };
    },
  );
});

describe('resize_vm run again after its change', () => {
  it('answers with the resize the flow made, not "already", when its final round runs a second time', async () => {
    const target = vms("owner = 'alice' AND environment = 'production' AND size != 'xlarge'")[0]!;
    const args = { vmId: target.id, size: 'xlarge' };
    const changesOf = () =>
      s.query<{ n: number }>(
        'cloud.db',
        'SELECT count(*) AS n FROM vm_changes WHERE vm_id = ?',
        target.id,
      )[0]!.n;
    const before = changesOf();
    const r0 = await s.call('alice', { name: 'resize_vm', arguments: args });
    const requestState = r0.response.result?.requestState as string;
    const final = {
      name: 'resize_vm',
      arguments: args,
      requestState,
      inputResponses: { justification: accept({ text: 'nightly batch outgrew it' }) },
    };
    const first = await s.call('alice', final);
    const said = `${target.id} resized from ${target.size} to xlarge`;
    expect(first.response.result?.content).toEqual([{ type: 'text', text: said }]);
    // As after a crash between the change and the recorded answer: the replay store no longer knows the round, so
    // the same final round runs the handler again — and the VM already has the new size.
    s.write('replay.db', 'DELETE FROM mrtr_store');
    const again = await s.call('alice', final);
    expect(again.response.result?.content).toEqual([{ type: 'text', text: said }]);
    expect(changesOf()).toBe(before + 1);
  });
});
