// grant_role end to end over HTTP: alice consents to the exact grant, enters her TOTP code on the server's step-up
// page (signed in from Node with the development sign-in form, as a browser would), bob approves over the JSON API;
// the grant is written once in iam.db. Then the refusals: an agent never answers the consent, a replayed approval
// vote and a replayed final round change nothing, a requester cannot approve their own grant.

import { agentPolicyResolver, type InputQuestion, type InputResolver } from 'mrtr/client';
import { enrolTotp } from 'mrtr/controls';
import type { InputResponse } from 'mrtr/protocol';
import { TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getPage, hiddenFields, postForm, sessionCookie } from '../helpers/page-sessions.js';
import { startWorkflows, TOKENS, type Who, type WorkflowsServer } from './workflows-server.js';

let s: WorkflowsServer;
let origin: string;
const secrets: Partial<Record<Who, string>> = {};
beforeAll(async () => {
  s = await startWorkflows();
  origin = new URL(s.url).origin;
  // A TOTP code is single-use per person and time step: each test below steps up as a different person.
  for (const who of ['alice', 'bob', 'carol'] as const)
    secrets[who] = enrolTotp(`${s.dataDir}/totp.json`, who).secret;
});
afterAll(() => s.stop());

const grants = (subject: string) =>
  s.query<{ role: string; granted_by: string; approved_by: string; flow_id: string }>(
    'iam.db',
    'SELECT role, granted_by, approved_by, flow_id FROM role_grants WHERE subject = ?',
    subject,
  );
const rolesOf = (subject: string) =>
  s
    .query<{ role: string }>(
      'iam.db',
      'SELECT role FROM role_assignments WHERE subject = ? ORDER BY role',
      subject,
    )
    .map((r) => r.role);

/** Bob (or `who`) decides an approval over the JSON API. */
const decide = (id: string, who: Who, decision = 'approve') =>
  fetch(`${origin}/mrtr/approvals/${id}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKENS[who]}`, 'content-type': 'application/json' },
    body: JSON.stringify({ decision, comment: `by ${who}` }),
  }).then(async (r) => ({ status: r.status, json: (await r.json()) as { error?: string; state?: string } }));

/** The caller at the keyboard: yes to the consent, the code typed on the step-up page, and the approver asked. */
function person(who: Who, approve: (id: string) => Promise<void>, seen: InputQuestion[] = []): InputResolver {
  const answers: Record<string, (q: InputQuestion) => Promise<InputResponse>> = {
    consent: async () => ({ action: 'accept', content: { confirm: true } }),
    step_up: async (q) => {
      const url = (q.request.params as { url: string }).url;
      const cookie = await sessionCookie(origin, TOKENS[who]);
      const { csrf } = hiddenFields((await getPage(url, cookie)).html);
      const code = new TOTP({ secret: secrets[who]!, algorithm: 'SHA1', digits: 6, period: 30 }).generate();
      const posted = await postForm(url, cookie, { csrf: csrf!, code }, origin);
      expect(posted.html).toContain('Confirmed');
      return { action: 'accept' };
    },
    approval: async (q) => {
      await approve(approvalId(q));
      return { action: 'accept' };
    },
  };
  return {
    name: `${who} at the keyboard`,
    kinds: ['elicitation.form', 'elicitation.url'],
    person: true,
    accepts: (q) => Object.hasOwn(answers, q.key),
    resolve: (q) => {
      seen.push(q);
      return answers[q.key]!(q);
    },
  };
}
const approvalId = (q: InputQuestion) =>
  new URL((q.request.params as { url: string }).url).pathname.split('/')[3] as string;

describe('grant_role', () => {
  it('consent, step-up on the server page, bob approves over the JSON API: granted once, in iam.db', async () => {
    const seen: InputQuestion[] = [];
    const ids: string[] = [];
    const alice = s.client('alice', [
      person(
        'alice',
        async (id) => {
          ids.push(id);
          expect((await decide(id, 'bob')).status).toBe(200);
        },
        seen,
      ),
    ]);
    const before = rolesOf('carol');
    const outcome = await alice.callTool('grant_role', { subject: 'carol', role: 'on-call' });
    expect(outcome).toMatchObject({ status: 'complete', rounds: 4 });
    if (outcome.status === 'complete')
      expect(outcome.result.content).toEqual([
        { type: 'text', text: 'Granted on-call to carol (approved by bob)' },
      ]);
    expect(seen.map((q) => [q.key, q.personRequired])).toEqual([
      ['consent', 'consent'],
      ['step_up', 'second_factor'],
      ['approval', 'approval'],
    ]);
    expect(seen[0]!.message).toContain(`currentRoles: ${before.join(', ') || 'none'}`);
    expect(seen[0]!.message).toContain('grantedBy: alice');
    expect(rolesOf('carol')).toEqual([...before, 'on-call'].sort());
    expect(grants('carol')).toEqual([
      expect.objectContaining({ role: 'on-call', granted_by: 'alice', approved_by: 'bob' }),
    ]);
    // A replayed approval: bob's vote sent again is 409 and the record stays redeemed by this one flow.
    const replayed = await decide(ids[0]!, 'bob');
    expect(replayed.status).toBe(409);
    expect(grants('carol')).toHaveLength(1);
    // A new grant for the same person shows the changed facts and cannot reuse the old approval.
    const again = await s
      .client('alice', [person('alice', async () => {})])
      .callTool('grant_role', { subject: 'carol', role: 'on-call' });
    expect(again.status === 'complete' && again.result.content).toEqual([
      { type: 'text', text: 'carol already has the role on-call' },
    ]);
  });

  it('a replayed final round gets the same answer from the replay guard; the grant is not made twice', async () => {
    // Someone from the seeded directory without the role (the grant's subject is not the approver).
    const [{ subject }] = s.query<{ subject: string }>(
      'iam.db',
      "SELECT subject FROM people WHERE subject LIKE 'user%' AND subject NOT IN (SELECT subject FROM role_assignments WHERE role = 'auditor') ORDER BY subject LIMIT 1",
    ) as [{ subject: string }];
    const args = { subject, role: 'auditor' };
    const r0 = await s.call('carol', { name: 'grant_role', arguments: args });
    const r1 = await s.call('carol', {
      name: 'grant_role',
      arguments: args,
      requestState: r0.response.result?.requestState,
      inputResponses: { consent: { action: 'accept', content: { confirm: true } } },
    });
    const stepUrl = (r1.response.result as { inputRequests: { step_up: { params: { url: string } } } })
      .inputRequests.step_up.params.url;
    const cookie = await sessionCookie(origin, TOKENS.carol);
    const { csrf } = hiddenFields((await getPage(stepUrl, cookie)).html);
    const code = new TOTP({ secret: secrets.carol!, algorithm: 'SHA1', digits: 6, period: 30 }).generate();
    expect((await postForm(stepUrl, cookie, { csrf: csrf!, code }, origin)).html).toContain('Confirmed');
    const r2 = await s.call('carol', {
      name: 'grant_role',
      arguments: args,
      requestState: r1.response.result?.requestState,
      inputResponses: { step_up: { action: 'accept' } },
    });
    const q = (r2.response.result as { inputRequests: { approval: { params: { url: string } } } })
      .inputRequests.approval;
    const id = new URL(q.params.url).pathname.split('/')[3]!;
    expect((await decide(id, 'bob')).status).toBe(200);
    const last = {
      name: 'grant_role',
      arguments: args,
      requestState: r2.response.result?.requestState,
      inputResponses: { approval: { action: 'accept' } },
    };
    const done = await s.call('carol', last);
    const replay = await s.call('carol', last);
    expect(JSON.stringify(done.response.result)).toContain(`Granted auditor to ${subject} (approved by bob)`);
    expect(replay.response.result).toEqual(done.response.result);
    expect(grants(subject)).toHaveLength(1);
  });

  it('an agent policy resolver never answers the consent: the call needs a person and nothing is granted', async () => {
    const agent = agentPolicyResolver({
      kinds: ['elicitation.form', 'elicitation.url'],
      rules: [{ answer: { action: 'accept', content: { confirm: true } } }],
    });
    const outcome = await s
      .client('alice', [agent])
      .callTool('grant_role', { subject: 'alice', role: 'support' });
    expect(outcome.status).toBe('needs_person');
    if (outcome.status === 'needs_person') expect(outcome.pending.map((p) => p.key)).toEqual(['consent']);
    expect(grants('alice')).toEqual([]);
  });

  it('self-approval is 403, a caller without the approver role is 403; another approver (carol) completes it', async () => {
    const refusals: Array<{ status: number; error?: string }> = [];
    const bob = s.client('bob', [
      person('bob', async (id) => {
        const self = await decide(id, 'bob');
        const norole = await decide(id, 'alice');
        refusals.push(
          { status: self.status, error: self.json.error },
          { status: norole.status, error: norole.json.error },
        );
        expect((await decide(id, 'carol')).status).toBe(200);
      }),
    ]);
    const outcome = await bob.callTool('grant_role', { subject: 'alice', role: 'deployer' });
    expect(refusals).toEqual([
      { status: 403, error: 'self_approval' },
      { status: 403, error: 'missing_role' },
    ]);
    expect(outcome.status === 'complete' && outcome.result.content).toEqual([
      { type: 'text', text: 'Granted deployer to alice (approved by carol)' },
    ]);
    expect(grants('alice')).toEqual([expect.objectContaining({ granted_by: 'bob', approved_by: 'carol' })]);
  });

  it('an unknown person is named, and nothing is asked', async () => {
    const unknown = await s
      .client('alice', [])
      .callTool('grant_role', { subject: 'mallory', role: 'db-admin' });
    expect(unknown).toMatchObject({ status: 'complete', rounds: 1 });
    expect(unknown.status === 'complete' && unknown.result.content).toEqual([
      { type: 'text', text: 'No person mallory in the directory' },
    ]);
  });
});
