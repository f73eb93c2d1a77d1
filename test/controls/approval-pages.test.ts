// The approval pages in headless Chromium: alice asks, bob approves in his inbox, carol denies another request;
// screenshots of each page (phone-sized) go to test-artifacts/. Then the attacks, from Node with real sessions:
// self-approval, another effect, CSRF, no role, expired, another person's link (phishing), a replayed vote.
import { join } from 'node:path';
import { TOTP } from 'otpauth';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApprovalBook } from '../../src/controls/approval-book.js';
import { enrolTotp } from '../../src/controls/index.js';
import { ARTEFACTS, launchChromium } from '../helpers/chromium.js';
import { getPage, hiddenFields, postForm, sessionCookie, signedInBrowser } from '../helpers/page-sessions.js';
import { textOf, useControls } from './fixture.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

const ASK = { resource: 'prod-db', reason: 'Incident 4711: read the slow-query log' };
const idOf = (reply: { result: { inputRequests: { approval: { params: { url: string } } } } }) =>
  new URL(reply.result.inputRequests.approval.params.url).pathname.split('/')[3]!;

describe('approval pages in a real browser', () => {
  it('bob approves from his inbox; alice’s status page follows it; her retry completes', async () => {
    const f = await useControls();
    const first = await f.call('alice-token', 'request_access', ASK);
    const statusUrl = first.result.inputRequests.approval.params.url as string;

    const alice = await signedInBrowser(browser, f.origin, 'alice-token');
    await alice.page.goto(statusUrl);
    await expect(alice.page.getByRole('heading', { level: 1 })).toBeTruthy();
    expect(await alice.page.locator('h1').textContent()).toBe('Waiting for a decision');
    expect(await alice.page.getByRole('status').textContent()).toContain('Approved by 0 of 1');
    await alice.page.screenshot({ path: join(ARTEFACTS, 'approval-status-pending.png'), fullPage: true });

    const bob = await signedInBrowser(browser, f.origin, 'bob-token');
    await bob.page.goto(`${f.origin}/mrtr/approvals`);
    expect(await bob.page.locator('h1').textContent()).toBe('Approvals');
    await bob.page.screenshot({ path: join(ARTEFACTS, 'approvals-inbox.png'), fullPage: true });
    await bob.page.getByRole('link', { name: /Alice: Incident 4711/ }).click();
    expect(await bob.page.locator('h1').textContent()).toBe('Review a request');
    // Who asks, what exactly, why, how long.
    const card = await bob.page.locator('section.card').textContent();
    expect(card).toContain('Alice (alice) asks for approval');
    expect(card).toContain('Resource'); // a label, not the effect's key
    expect(card).toContain('prod-db');
    expect(card).toContain(ASK.reason);
    expect(card).toMatch(/Open for decision until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
    expect(card).toContain('the grant is valid for 60 minutes');
    await bob.page.screenshot({ path: join(ARTEFACTS, 'approval-review.png'), fullPage: true });
    await bob.page.getByLabel(/Comment/).fill('ok for incident 4711');
    await bob.page.getByRole('button', { name: 'Approve' }).click();
    await bob.page.waitForLoadState();
    expect(await bob.page.locator('h1').textContent()).toContain('Approved');
    expect(await bob.page.getByRole('status').textContent()).toContain('Approved by 1 of 1');
    expect(await bob.page.locator('form[action^="/mrtr/approvals/"]').count()).toBe(0);
    await bob.page.screenshot({ path: join(ARTEFACTS, 'approval-approved.png'), fullPage: true });

    await alice.page.reload();
    expect(await alice.page.locator('h1').textContent()).toContain('Approved');
    expect(await alice.page.locator('body').textContent()).toContain('ok for incident 4711');

    const done = await f.call('alice-token', 'request_access', ASK, {
      requestState: first.result.requestState,
      inputResponses: { approval: { action: 'accept' } },
    });
    expect(textOf(done)).toBe('Access to prod-db granted (approved by bob)');
    // The vote recorded the digest of the page bob saw.
    const record = await new ApprovalBook(f.store).get(idOf(first));
    expect(record?.votes[0]).toMatchObject({ comment: 'ok for incident 4711' });
    expect(record?.votes[0]?.seen).toMatch(/^[\w-]{43}$/);
    await alice.context.close();
    await bob.context.close();
  });

  it('carol denies with a comment; alice’s retry ends with the denial', async () => {
    const f = await useControls();
    const first = await f.call('alice-token', 'request_access', ASK);
    const carol = await signedInBrowser(browser, f.origin, 'carol-token');
    await carol.page.goto(`${f.origin}/mrtr/approvals/${idOf(first)}`);
    await carol.page.getByLabel(/Comment/).fill('use the read replica');
    await carol.page.getByRole('button', { name: 'Deny' }).click();
    await carol.page.waitForLoadState();
    expect(await carol.page.locator('h1').textContent()).toBe('Denied');
    await carol.page.screenshot({ path: join(ARTEFACTS, 'approval-denied.png'), fullPage: true });
    const ended = await f.call('alice-token', 'request_access', ASK, {
      requestState: first.result.requestState,
      inputResponses: { approval: { action: 'accept' } },
    });
    expect(textOf(ended)).toBe('denied by Carol ("use the read replica")');
    await carol.context.close();
  });

  it('the requester’s link opened by another signed-in person shows nothing of the request (phishing rule)', async () => {
    const f = await useControls();
    const first = await f.call('alice-token', 'request_access', ASK);
    const dave = await signedInBrowser(browser, f.origin, 'dave-token');
    const response = await dave.page.goto(first.result.inputRequests.approval.params.url);
    expect(response?.status()).toBe(403);
    expect(await dave.page.locator('h1').textContent()).toBe('This link is not yours');
    expect(await dave.page.locator('body').textContent()).not.toContain('prod-db');
    await dave.page.screenshot({ path: join(ARTEFACTS, 'approval-not-yours.png'), fullPage: true });
    await dave.context.close();
  });

  it('the requester opening the review page is sent to the status page, and sees no approve button', async () => {
    const f = await useControls();
    const first = await f.call('alice-token', 'request_access', ASK);
    const alice = await signedInBrowser(browser, f.origin, 'alice-token');
    await alice.page.goto(`${f.origin}/mrtr/approvals/${idOf(first)}`);
    expect(new URL(alice.page.url()).pathname).toBe(`/mrtr/approvals/${idOf(first)}/status`);
    expect(await alice.page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    await alice.context.close();
  });

  it('pages carry a strict CSP, no framing, no caching', async () => {
    const f = await useControls();
    const cookie = await sessionCookie(f.origin, 'bob-token');
    const r = await fetch(`${f.origin}/mrtr/approvals`, { headers: { cookie } });
    expect(r.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(r.headers.get('content-security-policy')).toContain("form-action 'self'");
    expect(r.headers.get('x-frame-options')).toBe('DENY');
    expect(r.headers.get('cache-control')).toBe('no-store');
  });
});

describe('the step-up page in a real browser', () => {
  it('alice types the code from her authenticator and confirms; her retry continues', async () => {
    const f = await useControls();
    const { secret } = enrolTotp(f.totpFile, 'alice');
    const first = await f.call('alice-token', 'show_recovery_codes', {});
    const alice = await signedInBrowser(browser, f.origin, 'alice-token');
    await alice.page.goto(first.result.inputRequests.step_up.params.url);
    expect(await alice.page.locator('h1').textContent()).toBe('Confirm it is you');
    await alice.page.screenshot({ path: join(ARTEFACTS, 'step-up.png'), fullPage: true });
    const code = new TOTP({ secret, algorithm: 'SHA1', digits: 6, period: 30 }).generate();
    await alice.page.getByLabel('Code from your authenticator app').fill(code);
    await alice.page.getByRole('button', { name: 'Confirm' }).click();
    await alice.page.waitForLoadState();
    expect(await alice.page.locator('h1').textContent()).toBe('Confirmed');
    await alice.page.screenshot({ path: join(ARTEFACTS, 'step-up-confirmed.png'), fullPage: true });
    const done = await f.call(
      'alice-token',
      'show_recovery_codes',
      {},
      {
        requestState: first.result.requestState,
        inputResponses: { step_up: { action: 'accept' } },
      },
    );
    expect(textOf(done)).toContain('Recovery codes for alice');
    await alice.context.close();
  });
});

describe('attacks on the approval pages', () => {
  it('self-approval: the requester’s forged vote is 403 and not recorded', async () => {
    const f = await useControls();
    const first = await f.call('alice-token', 'request_access', ASK);
    const id = idOf(first);
    const bob = await sessionCookie(f.origin, 'bob-token');
    const fields = hiddenFields((await getPage(`${f.origin}/mrtr/approvals/${id}`, bob)).html);
    const alice = await sessionCookie(f.origin, 'alice-token');
    const aliceCsrf = hiddenFields((await getPage(`${f.origin}/mrtr/session`, alice)).html).csrf!;
    const forged = await postForm(
      `${f.origin}/mrtr/approvals/${id}`,
      alice,
      { ...fields, csrf: aliceCsrf, decision: 'approve', comment: '' },
      f.origin,
    );
    expect(forged.status).toBe(403);
    expect(forged.html).toContain('You cannot approve your own request');
    expect((await new ApprovalBook(f.store).get(id))?.votes).toEqual([]);
  });

  it('a reviewer without the role sees 403 and cannot vote', async () => {
    const f = await useControls();
    const id = idOf(await f.call('alice-token', 'request_access', ASK));
    const dave = await sessionCookie(f.origin, 'dave-token');
    const page = await getPage(`${f.origin}/mrtr/approvals/${id}`, dave);
    expect(page.status).toBe(403);
    expect(page.html).toContain('reviewing this needs the role approver');
    const csrf = hiddenFields((await getPage(`${f.origin}/mrtr/session`, dave)).html).csrf!;
    const vote = await postForm(
      `${f.origin}/mrtr/approvals/${id}`,
      dave,
      { csrf, decision: 'approve' },
      f.origin,
    );
    expect(vote.status).toBe(403);
    expect((await new ApprovalBook(f.store).get(id))?.votes).toEqual([]);
  });

  it('CSRF: a vote without the session’s token, or from another origin, is refused', async () => {
    const f = await useControls();
    const id = idOf(await f.call('alice-token', 'request_access', ASK));
    const bob = await sessionCookie(f.origin, 'bob-token');
    const fields = hiddenFields((await getPage(`${f.origin}/mrtr/approvals/${id}`, bob)).html);
    const url = `${f.origin}/mrtr/approvals/${id}`;
    const noToken = await postForm(url, bob, { ...fields, csrf: '', decision: 'approve' }, f.origin);
    expect(noToken.status).toBe(403);
    const otherSite = await postForm(url, bob, { ...fields, decision: 'approve' }, 'http://evil.example');
    expect(otherSite.status).toBe(403);
    const noOrigin = await postForm(url, bob, { ...fields, decision: 'approve' }, undefined);
    expect(noOrigin.status).toBe(403);
    // Carol's token in bob's session: a token is per session.
    const carol = await sessionCookie(f.origin, 'carol-token');
    const carolCsrf = hiddenFields((await getPage(url, carol)).html).csrf!;
    expect(
      (await postForm(url, bob, { ...fields, csrf: carolCsrf, decision: 'approve' }, f.origin)).status,
    ).toBe(403);
    expect((await new ApprovalBook(f.store).get(id))?.votes).toEqual([]);
  });

  it('approving another effect: a form from request A posted to request B is refused (409)', async () => {
    const f = await useControls();
    const a = idOf(await f.call('alice-token', 'request_access', ASK));
    const b = idOf(await f.call('alice-token', 'request_access', { ...ASK, resource: 'billing-db' }));
    const bob = await sessionCookie(f.origin, 'bob-token');
    const fieldsOfA = hiddenFields((await getPage(`${f.origin}/mrtr/approvals/${a}`, bob)).html);
    const swapped = await postForm(
      `${f.origin}/mrtr/approvals/${b}`,
      bob,
      { ...fieldsOfA, decision: 'approve' },
      f.origin,
    );
    expect(swapped.status).toBe(409);
    expect(swapped.html).toContain('this vote was for another effect');
    // The effect digest right but the page not the one shown (a doctored form): refused too.
    const fieldsOfB = hiddenFields((await getPage(`${f.origin}/mrtr/approvals/${b}`, bob)).html);
    const doctored = await postForm(
      `${f.origin}/mrtr/approvals/${b}`,
      bob,
      { ...fieldsOfB, seen: fieldsOfA.seen!, decision: 'approve' },
      f.origin,
    );
    expect(doctored.status).toBe(409);
    expect(doctored.html).toContain('the request changed since you opened it');
    expect((await new ApprovalBook(f.store).get(b))?.votes).toEqual([]);
  });

  it('replaying an approval: the same form posted again is 409 and counts once', async () => {
    const f = await useControls();
    const book = new ApprovalBook(f.store);
    const r = await book.create({
      requester: { subject: 'alice', issuer: 'urn:mrtr:dev-tokens', name: 'Alice' },
      flowId: 'f1',
      effect: { tool: 'request_access', resource: 'x' },
      effectDigest: 'd',
      reason: 'needs two',
      role: 'approver',
      approve: 2,
      deny: 1,
      pendingTtlMs: 60_000,
      grantTtlMs: 60_000,
    });
    const bob = await sessionCookie(f.origin, 'bob-token');
    const url = `${f.origin}/mrtr/approvals/${r.id}`;
    const fields = hiddenFields((await getPage(url, bob)).html);
    const once = await postForm(url, bob, { ...fields, decision: 'approve', comment: 'yes' }, f.origin);
    expect(once.status).toBe(303);
    const replay = await postForm(url, bob, { ...fields, decision: 'approve', comment: 'yes' }, f.origin);
    expect(replay.status).toBe(409);
    expect(replay.html).toContain('you have already decided on this request');
    const record = await book.get(r.id);
    expect(record?.votes).toHaveLength(1);
    expect(record?.state).toBe('pending');
  });

  it('an expired request shows no form and refuses a vote (409)', async () => {
    const f = await useControls({ fakeClock: true });
    const id = idOf(await f.call('alice-token', 'request_access', ASK));
    const bob = await sessionCookie(f.origin, 'bob-token');
    const url = `${f.origin}/mrtr/approvals/${id}`;
    const fields = hiddenFields((await getPage(url, bob)).html);
    f.clock.now += 25 * 60 * 60 * 1000;
    const page = await getPage(url, bob);
    expect(page.html).toContain('<h1>Expired</h1>');
    expect(page.html).not.toContain('name="decision"');
    const vote = await postForm(url, bob, { ...fields, decision: 'approve' }, f.origin);
    expect(vote.status).toBe(409);
    expect(vote.html).toContain('this request is already expired');
  });

  it('not signed in: the pages send the person to sign in and come back', async () => {
    const f = await useControls();
    const r = await fetch(`${f.origin}/mrtr/approvals`, { redirect: 'manual' });
    expect(r.status).toBe(303);
    expect(r.headers.get('location')).toBe(`${f.origin}/mrtr/signin?return=%2Fmrtr%2Fapprovals`);
  });
});
