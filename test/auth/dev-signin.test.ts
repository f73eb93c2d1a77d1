// Development sign-in needs the person's own development token (issue 37, item 4). The attacks, from a process on
// this machine: pick bob's name with no token or with alice's token, so alice approves her own four-eyes request;
// guess tokens without end; send a huge one. And what a person sees: a token field, a clear word when it is wrong.
import { describe, expect, it } from 'vitest';
import { DEV_SIGNIN_LIMITS, WrongTokenCount } from '../../src/auth/signin/wrong-tokens.js';
import { ApprovalBook } from '../../src/controls/approval-book.js';
import { useControls } from '../controls/fixture.js';
import { getPage, hiddenFields, postDevSignIn, postForm, sessionCookie } from '../helpers/page-sessions.js';

const ASK = { resource: 'prod-db', reason: 'Incident 4711: read the slow-query log' };
const idOf = (reply: { result: { inputRequests: { approval: { params: { url: string } } } } }) =>
  new URL(reply.result.inputRequests.approval.params.url).pathname.split('/')[3]!;
const sessionSet = (r: Response) =>
  r.headers.getSetCookie().some((c) => c.startsWith('mrtr-session=') && !c.startsWith('mrtr-session=;'));

describe('development sign-in signs in the holder of a token, and no one else', () => {
  it('the page asks for a token in a password field, posted in the body; it lists no one to pick', async () => {
    const f = await useControls();
    const page = await (await fetch(`${f.origin}/mrtr/signin`)).text();
    expect(page).toContain('<label for="token">Development token</label>');
    expect(page).toMatch(/<input id="token" name="token" type="password" required maxlength="1024"/);
    expect(page).toContain('<form class="card" method="post" action="/mrtr/signin/dev">');
    expect(page).not.toContain('type="radio"');
    expect(page).not.toContain('name="subject"');
    // The form's route takes no GET: a token can never arrive in a URL.
    const asGet = await fetch(`${f.origin}/mrtr/signin/dev?token=bob-token`, { redirect: 'manual' });
    expect(asGet.status).toBe(405);
    expect(sessionSet(asGet)).toBe(false);
  });

  it('picking bob with no token is refused, and so is any name: nothing signs a person in without a token', async () => {
    const f = await useControls();
    for (const subject of ['bob', 'carol', 'alice']) {
      const r = await postDevSignIn(f.origin, { subject });
      expect(r.status, subject).toBe(400);
      expect(sessionSet(r), subject).toBe(false);
      expect(await r.text()).toContain('Enter your development token.');
    }
  });

  it('alice’s token with bob’s name signs in alice, never bob', async () => {
    const f = await useControls();
    const r = await postDevSignIn(f.origin, { subject: 'bob', token: 'alice-token' });
    expect(r.status).toBe(303);
    const cookie = r.headers
      .getSetCookie()
      .find((c) => c.startsWith('mrtr-session='))!
      .split(';')[0]!;
    const session = await getPage(`${f.origin}/mrtr/session`, cookie);
    expect(session.html).toContain('You are signed in as <strong>Alice</strong>');
    expect(session.html).not.toContain('Bob');
  });

  it('a wrong token is a clear 401 page that does not repeat the token, and signs no one in', async () => {
    const f = await useControls();
    const r = await postDevSignIn(f.origin, { token: 'bob-tokem' });
    expect(r.status).toBe(401);
    expect(sessionSet(r)).toBe(false);
    const text = await r.text();
    expect(text).toContain("That is not one of this server's development tokens.");
    expect(text).not.toContain('bob-tokem');
  });

  it('a token longer than any development token is refused before it is looked up', async () => {
    const f = await useControls();
    const r = await postDevSignIn(f.origin, {
      token: `bob-token${'x'.repeat(DEV_SIGNIN_LIMITS.maxTokenChars)}`,
    });
    expect(r.status).toBe(400);
    expect(sessionSet(r)).toBe(false);
    expect(await r.text()).toContain('A development token is at most 1024 characters');
  });

  it('four-eyes: alice cannot sign in as bob, so she cannot approve her own request', async () => {
    const f = await useControls();
    const id = idOf(await f.call('alice-token', 'request_access', ASK));
    // Alice's process on the same machine asks to be bob, without bob's token.
    const asBob = await postDevSignIn(f.origin, { subject: 'bob', return: `/mrtr/approvals/${id}` });
    expect(asBob.status).toBe(400);
    expect(sessionSet(asBob)).toBe(false);
    // With her own token she is herself, and her vote on her own request is refused.
    const alice = await sessionCookie(f.origin, 'alice-token');
    const page = await getPage(`${f.origin}/mrtr/approvals/${id}`, alice);
    const csrf = hiddenFields((await getPage(`${f.origin}/mrtr/session`, alice)).html).csrf!;
    const vote = await postForm(
      `${f.origin}/mrtr/approvals/${id}`,
      alice,
      { ...hiddenFields(page.html), csrf, decision: 'approve' },
      f.origin,
    );
    expect(vote.status).toBe(403);
    expect((await new ApprovalBook(f.store).get(id))?.votes).toEqual([]);
  });

  it('guessing is slowed: after 10 wrong tokens a minute, even the right one waits (429, Retry-After)', async () => {
    const f = await useControls();
    for (let i = 0; i < DEV_SIGNIN_LIMITS.wrongPerWindow; i++)
      expect((await postDevSignIn(f.origin, { token: `guess-${i}` })).status).toBe(401);
    const right = await postDevSignIn(f.origin, { token: 'bob-token' });
    expect(right.status).toBe(429);
    expect(sessionSet(right)).toBe(false);
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await right.text()).toMatch(/Too many wrong development tokens. Try again in \d+ seconds./);
  });
});

describe('WrongTokenCount', () => {
  it('opens again when the window has passed, and counts from zero', () => {
    const clock = { now: 1_000_000 };
    const count = new WrongTokenCount(() => clock.now);
    for (let i = 0; i < DEV_SIGNIN_LIMITS.wrongPerWindow; i++) {
      expect(count.waitSeconds()).toBe(0);
      count.record();
    }
    expect(count.waitSeconds()).toBe(60);
    clock.now += 59_500;
    expect(count.waitSeconds()).toBe(1);
    clock.now += 500;
    expect(count.waitSeconds()).toBe(0);
    count.record();
    expect(count.waitSeconds()).toBe(0);
  });
});
