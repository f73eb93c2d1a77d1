// Four-eyes approval over HTTP: request_access asks (URL mode, to the requester's status page) until decided, the
// JSON API lists and decides (200 / 403 / 409), the grant is redeemed once by the requester's own flow.
import { describe, expect, it } from 'vitest';
import { ApprovalBook } from '../../src/controls/approval-book.js';
import { textOf, useControls } from './fixture.js';

const ASK = { resource: 'prod-db', reason: 'Incident 4711: read the slow-query log' };

describe('request_access: four-eyes approval', () => {
  it('asks in URL mode until approved, with "still waiting — approved by 0 of 1"; the approved retry completes', async () => {
    const f = await useControls();
    const first = await f.call('alice-token', 'request_access', ASK);
    expect(first.result.resultType).toBe('input_required');
    const q = first.result.inputRequests.approval;
    expect(q.params.mode).toBe('url');
    expect(q.params._meta['dev.mrtr/humanRequired']).toBe('approval');
    expect(q.params.message).toContain('Still waiting — approved by 0 of 1');
    expect(q.params.message).toContain('continue here to ask again (request 1 of this call)');
    const status = new URL(q.params.url);
    expect(status.origin).toBe(f.origin);
    expect(status.pathname).toMatch(/^\/mrtr\/approvals\/[\w-]{16}\/status$/);
    const id = status.pathname.split('/')[3]!;

    // Each retry before a decision answers input_required again, with the same status link.
    const second = await f.call('alice-token', 'request_access', ASK, {
      requestState: first.result.requestState,
      inputResponses: { approval: { action: 'accept' } },
    });
    expect(second.result.resultType).toBe('input_required');
    expect(second.result.inputRequests.approval.params.message).toContain('approved by 0 of 1');
    expect(second.result.inputRequests.approval.params.url).toBe(q.params.url);

    // The inbox API: the approver sees it; the requester and a person without the role do not.
    const listed = await f.api('bob-token', '/mrtr/approvals');
    expect(listed.status).toBe(200);
    expect(listed.json.approvals).toHaveLength(1);
    const item = listed.json.approvals[0];
    expect(item).toMatchObject({
      id,
      state: 'pending',
      requester: { subject: 'alice', name: 'Alice' },
      effect: { tool: 'request_access', resource: 'prod-db', requester: 'alice' },
      reason: ASK.reason,
      role: 'approver',
      votes: { approvals: 0, denials: 0, needed: { approve: 1, deny: 1 } },
    });
    expect(Date.parse(item.expiresAt) - Date.parse(item.createdAt)).toBe(24 * 60 * 60 * 1000);
    expect((await f.api('alice-token', '/mrtr/approvals')).json.approvals).toEqual([]);
    expect((await f.api('dave-token', '/mrtr/approvals')).json.approvals).toEqual([]);

    const approved = await f.api('bob-token', `/mrtr/approvals/${id}`, {
      decision: 'approve',
      comment: 'ok for 4711',
    });
    expect(approved.status).toBe(200);
    expect(approved.json).toMatchObject({ id, state: 'approved', votes: { approvals: 1 } });
    expect(approved.json.votes.list[0]).toMatchObject({
      by: 'bob',
      decision: 'approve',
      comment: 'ok for 4711',
    });
    expect(f.events.find((e) => e.action === 'approve')).toMatchObject({
      control: 'approval',
      id,
      by: 'bob',
    });

    const done = await f.call('alice-token', 'request_access', ASK, {
      requestState: second.result.requestState,
      inputResponses: { approval: { action: 'accept' } },
    });
    expect(done.result.resultType).toBe('complete');
    expect(done.result.isError).toBeFalsy();
    expect(textOf(done)).toBe('Access to prod-db granted (approved by bob)');
    // The record says redeemed, once: the vote kept what bob was shown.
    const record = await new ApprovalBook(f.store).get(id);
    expect(record?.state).toBe('redeemed');
    expect(record?.votes[0]?.seen).toMatch(/^[\w-]{43}$/);
  });

  it('a request pending longer than the server’s default round cap (10) still answers "still waiting"', async () => {
    const f = await useControls();
    let reply = await f.call('alice-token', 'request_access', ASK);
    for (let check = 2; check <= 15; check++) {
      reply = await f.call('alice-token', 'request_access', ASK, {
        requestState: reply.result.requestState,
        inputResponses: { approval: { action: 'accept' } },
      });
      expect(reply.result.resultType).toBe('input_required');
      expect(reply.result.inputRequests.approval.params.message).toContain(`(request ${check} of this call)`);
    }
  });

  it('403 for the requester themself and for a caller without the role; 409 once decided; 404 unknown; 401 without a token', async () => {
    const f = await useControls();
    const first = await f.call('alice-token', 'request_access', ASK);
    const id = new URL(first.result.inputRequests.approval.params.url).pathname.split('/')[3]!;
    const self = await f.api('alice-token', `/mrtr/approvals/${id}`, { decision: 'approve', comment: 'me' });
    expect(self.status).toBe(403);
    expect(self.json.error).toBe('self_approval');
    const norole = await f.api('dave-token', `/mrtr/approvals/${id}`, { decision: 'approve', comment: '' });
    expect(norole.status).toBe(403);
    expect(norole.json.error).toBe('missing_role');
    expect(
      (await f.api('bob-token', `/mrtr/approvals/${id}`, { decision: 'deny', comment: 'no ticket' })).status,
    ).toBe(200);
    const late = await f.api('carol-token', `/mrtr/approvals/${id}`, { decision: 'approve', comment: '' });
    expect(late.status).toBe(409);
    expect(late.json.error).toBe('already_denied');
    expect(
      (await f.api('bob-token', '/mrtr/approvals/AAAAAAAAAAAAAAAA', { decision: 'approve' })).status,
    ).toBe(404);
    const anonymous = await f.api(
      undefined,
      `/mrtr/approvals/${id}`,
      { decision: 'approve' },
      { authorization: 'Bearer nope' },
    );
    expect(anonymous.status).toBe(401);
    // Nothing a refused caller did reached the record.
    const record = await new ApprovalBook(f.store).get(id);
    expect(record?.votes.map((v) => v.by.subject)).toEqual(['bob']);
  });

  it('a denial ends the call with who denied and why', async () => {
    const f = await useControls();
    const first = await f.call('alice-token', 'request_access', ASK);
    const id = new URL(first.result.inputRequests.approval.params.url).pathname.split('/')[3]!;
    await f.api('carol-token', `/mrtr/approvals/${id}`, { decision: 'deny', comment: 'use the replica' });
    const ended = await f.call('alice-token', 'request_access', ASK, {
      requestState: first.result.requestState,
      inputResponses: { approval: { action: 'accept' } },
    });
    expect(ended.result.isError).toBe(true);
    expect(textOf(ended)).toBe('denied by Carol ("use the replica")');
  });

  it('replaying an approval: a second vote by the same reviewer, or the same vote again, is 409 and changes nothing', async () => {
    const f = await useControls();
    // Two approvals needed: a replayed first vote must not count twice.
    const book = new ApprovalBook(f.store);
    const r = await book.create({
      requester: { subject: 'alice', issuer: 'urn:mrtr:dev-tokens' },
      flowId: 'f1',
      effect: { tool: 'request_access', resource: 'x' },
      effectDigest: 'd',
      reason: 'r',
      role: 'approver',
      approve: 2,
      deny: 1,
      pendingTtlMs: 60_000,
      grantTtlMs: 60_000,
    });
    const vote = { decision: 'approve', comment: 'yes' };
    expect((await f.api('bob-token', `/mrtr/approvals/${r.id}`, vote)).status).toBe(200);
    const again = await f.api('bob-token', `/mrtr/approvals/${r.id}`, vote);
    expect(again.status).toBe(409);
    expect(again.json.error).toBe('already_voted');
    expect((await book.get(r.id))?.state).toBe('pending');
    const second = await f.api('carol-token', `/mrtr/approvals/${r.id}`, vote);
    expect(second.json).toMatchObject({ state: 'approved', votes: { approvals: 2 } });
  });

  it('a vote naming another effect digest is refused (409) and not recorded', async () => {
    const f = await useControls();
    const a = await f.call('alice-token', 'request_access', ASK);
    const b = await f.call('alice-token', 'request_access', { ...ASK, resource: 'billing-db' });
    const idOf = (r: typeof a) => new URL(r.result.inputRequests.approval.params.url).pathname.split('/')[3]!;
    const list = (await f.api('bob-token', '/mrtr/approvals')).json.approvals as Array<{
      id: string;
      effectDigest: string;
    }>;
    const digestA = list.find((x) => x.id === idOf(a))!.effectDigest;
    const wrong = await f.api('bob-token', `/mrtr/approvals/${idOf(b)}`, {
      decision: 'approve',
      effectDigest: digestA,
    });
    expect(wrong.status).toBe(409);
    expect(wrong.json.error).toBe('other_effect');
    expect((await new ApprovalBook(f.store).get(idOf(b)))?.votes).toEqual([]);
  });

  it('bad bodies are 400 naming the shape; other methods 405', async () => {
    const f = await useControls();
    const first = await f.call('alice-token', 'request_access', ASK);
    const id = new URL(first.result.inputRequests.approval.params.url).pathname.split('/')[3]!;
    const bad = await f.api('bob-token', `/mrtr/approvals/${id}`, { decision: 'maybe' });
    expect(bad.status).toBe(400);
    expect(bad.json.message).toContain('"decision": "approve" | "deny"');
    expect((await f.api('bob-token', `/mrtr/approvals/${id}`, '[1]')).status).toBe(400);
    expect((await f.api('bob-token', `/mrtr/approvals/${id}`, '{nope')).json.message).toBe(
      'the body is not JSON',
    );
    const put = await fetch(`${f.origin}/mrtr/approvals`, { method: 'DELETE' });
    expect(put.status).toBe(405);
  });

  it('a pending request expires after its own lifetime (409 to reviewers, a clear end to the requester)', async () => {
    const f = await useControls({ fakeClock: true });
    const first = await f.call('alice-token', 'request_access', ASK);
    const id = new URL(first.result.inputRequests.approval.params.url).pathname.split('/')[3]!;
    f.clock.now += 24 * 60 * 60 * 1000;
    const late = await f.api('bob-token', `/mrtr/approvals/${id}`, { decision: 'approve' });
    expect(late.status).toBe(409);
    expect(late.json.error).toBe('already_expired');
    expect((await f.api('bob-token', '/mrtr/approvals')).json.approvals).toEqual([]);
    const ended = await f.call('alice-token', 'request_access', ASK, {
      requestState: first.result.requestState,
      inputResponses: { approval: { action: 'accept' } },
    });
    expect(ended.result.isError).toBe(true);
    expect(textOf(ended)).toBe('the approval request expired before it was decided');
  });

  it('a grant not used within its lifetime expires; the grant lifetime is separate from the pending one', async () => {
    const f = await useControls({ fakeClock: true });
    const first = await f.call('alice-token', 'request_access', ASK);
    const id = new URL(first.result.inputRequests.approval.params.url).pathname.split('/')[3]!;
    f.clock.now += 23 * 60 * 60 * 1000; // late in the pending window: still decidable
    expect((await f.api('bob-token', `/mrtr/approvals/${id}`, { decision: 'approve' })).status).toBe(200);
    f.clock.now += 59 * 60 * 1000; // within the hour's grant, past the pending day
    const book = new ApprovalBook(f.store, () => f.clock.now);
    expect((await book.get(id))?.state).toBe('approved');
    f.clock.now += 2 * 60 * 1000;
    const ended = await f.call('alice-token', 'request_access', ASK, {
      requestState: first.result.requestState,
      inputResponses: { approval: { action: 'accept' } },
    });
    expect(textOf(ended)).toBe('the approval was granted but not used in time: call again to ask anew');
  });

  it('the grant is redeemed once, by the requester’s own flow only', async () => {
    const f = await useControls();
    const first = await f.call('alice-token', 'request_access', ASK);
    const id = new URL(first.result.inputRequests.approval.params.url).pathname.split('/')[3]!;
    await f.api('bob-token', `/mrtr/approvals/${id}`, { decision: 'approve' });
    const book = new ApprovalBook(f.store);
    const record = (await book.get(id))!;
    await expect(book.redeem(id, record.requester, 'another-flow')).rejects.toMatchObject({
      reason: 'not_requester_flow',
    });
    await expect(
      book.redeem(id, { subject: 'bob', issuer: record.requester.issuer }, record.flowId),
    ).rejects.toMatchObject({ reason: 'not_requester_flow' });
    const done = await f.call('alice-token', 'request_access', ASK, {
      requestState: first.result.requestState,
      inputResponses: { approval: { action: 'accept' } },
    });
    expect(textOf(done)).toContain('granted');
    await expect(book.redeem(id, record.requester, record.flowId)).rejects.toMatchObject({
      reason: 'not_redeemable_redeemed',
    });
  });

  it('a round run again after its instance redeemed the grant and died still completes (the same flow, once)', async () => {
    const f = await useControls();
    const first = await f.call('alice-token', 'request_access', ASK);
    const id = new URL(first.result.inputRequests.approval.params.url).pathname.split('/')[3]!;
    await f.api('bob-token', `/mrtr/approvals/${id}`, { decision: 'approve' });
    const book = new ApprovalBook(f.store);
    const record = (await book.get(id))!;
    // What the dead instance did before the step's result was kept: the grant is redeemed by this flow.
    await book.redeem(id, record.requester, record.flowId);
    const done = await f.call('alice-token', 'request_access', ASK, {
      requestState: first.result.requestState,
      inputResponses: { approval: { action: 'accept' } },
    });
    expect(textOf(done)).toContain('granted');
  });

  it('the requester declining the link withdraws the request from the inboxes', async () => {
    const f = await useControls();
    const first = await f.call('alice-token', 'request_access', ASK);
    const ended = await f.call('alice-token', 'request_access', ASK, {
      requestState: first.result.requestState,
      inputResponses: { approval: { action: 'decline' } },
    });
    expect(textOf(ended)).toBe('approval request withdrawn by the requester');
    expect((await f.api('bob-token', '/mrtr/approvals')).json.approvals).toEqual([]);
  });
});
