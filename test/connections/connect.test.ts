// "Connect your account" through the server's own pages: the first call asks in URL mode; only the person the
// question was minted for may use the link; the callback is taken once; the grant is refreshed before it expires,
// asked for again when the third party no longer takes it, and a refusal ends the call with its reason.
import { describe, expect, it } from 'vitest';
import { getPage, hiddenFields, postForm, sessionCookie } from '../helpers/page-sessions.js';
import { connectFromNode, connectServer } from './connect-fixture.js';

const asked = (reply: { inputRequests?: Record<string, { params: Record<string, string> }> }) =>
  reply.inputRequests?.connect_tracker?.params;

describe('connections.token(ctx, name)', () => {
  it('asks in URL mode; another person gets 403 and nothing; the owner connects; later calls need no question', async () => {
    const f = await connectServer();
    const first = await f.call('alice-token');
    expect(first.resultType).toBe('input_required');
    const q = asked(first)!;
    expect(q.mode).toBe('url');
    expect(q.message).toMatch(/^Connect your Tracker account: .*\(request 1 of this call\)\.$/);
    expect(new URL(q.url!).pathname).toMatch(/^\/mrtr\/connect\/[\w-]{22}$/);

    // Bob opens alice's link: refused, no authorization request started, nothing stored.
    const bob = await sessionCookie(f.origin, 'bob-token');
    const stolen = await connectFromNode(q.url!, bob);
    expect(stolen.status).toBe(403);
    expect(stolen.html).toContain('This link is not yours');
    expect(f.as.started).toBe(0);
    expect(f.vault.grants.size).toBe(0);
    expect(f.events.map((e) => [e.action, e.by])).toContainEqual(['wrong_person', 'bob']);

    // Not signed in: sent to sign in first.
    const anonymous = await fetch(q.url!, { redirect: 'manual' });
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get('location')).toContain('/mrtr/signin?return=');

    const alice = await sessionCookie(f.origin, 'alice-token');
    const done = await connectFromNode(q.url!, alice);
    expect(done.status).toBe(200);
    expect(done.html).toContain('Your Tracker account is connected');
    expect(done.html).not.toContain('tracker-at-');
    expect(f.events.map((e) => [e.action, e.by])).toContainEqual(['connected', 'alice']);

    const retried = await f.call('alice-token', {
      requestState: first.requestState,
      inputResponses: { connect_tracker: { action: 'accept' } },
    });
    expect(retried.content[0].text).toBe('issues read with tracker-at-1');
    // A new call: no question at all.
    const later = await f.call('alice-token');
    expect(later.content[0].text).toBe('issues read with tracker-at-1');
    // The audit trail says "used", never a token.
    const notes = JSON.stringify(f.rounds.map((r) => r.notes));
    expect(notes).toContain('"connection":{"name":"tracker","used":true}');
    expect(JSON.stringify(f.rounds)).not.toContain('tracker-at-');
    expect(JSON.stringify(f.events)).not.toContain('tracker-at-');

    // Bob's own call asks bob, with his own link.
    const bobs = await f.call('bob-token');
    expect(asked(bobs)?.url).not.toBe(q.url);
    expect(bobs.resultType).toBe('input_required');
  });

  it('refreshes before expiry; invalid_grant on refresh drops the grant and asks again', async () => {
    const f = await connectServer();
    const alice = await sessionCookie(f.origin, 'alice-token');
    const first = await f.call('alice-token');
    await connectFromNode(asked(first)!.url!, alice);
    expect((await f.call('alice-token')).content[0].text).toBe('issues read with tracker-at-1');
    // 59 minutes and 30 s on: within the 60 s skew of the hour's expiry.
    f.clock.now += 3_570_000;
    expect((await f.call('alice-token')).content[0].text).toBe('issues read with tracker-at-2');
    expect(f.as.refreshes).toBe(1);
    expect(f.events.map((e) => e.action)).toContain('refreshed');
    // Refreshed once: the next call uses the fresh grant without refreshing.
    expect((await f.call('alice-token')).content[0].text).toBe('issues read with tracker-at-2');
    expect(f.as.refreshes).toBe(1);

    f.clock.now += 3_570_000;
    f.as.refreshFails = 'invalid_grant';
    const again = await f.call('alice-token');
    expect(again.resultType).toBe('input_required');
    expect(asked(again)?.mode).toBe('url');
    expect(f.vault.grants.size).toBe(0);
    expect(f.events.map((e) => e.action)).toContain('revoked');
  });

  it('an authorization server out of reach on refresh: the token serves while it lasts, then the call ends clearly; the grant is kept', async () => {
    const f = await connectServer();
    const alice = await sessionCookie(f.origin, 'alice-token');
    await connectFromNode(asked(await f.call('alice-token'))!.url!, alice);
    f.clock.now += 3_570_000;
    f.as.refreshFails = 'unavailable';
    // Due for a refresh but not expired: an outage at the third party is not the person's, the old token still works.
    const stillGood = await f.call('alice-token');
    expect(stillGood.isError).not.toBe(true);
    expect(stillGood.content[0].text).toBe('issues read with tracker-at-1');
    f.clock.now += 60_000;
    f.as.refreshFails = 'unavailable'; // each failure is one refresh's
    const ended = await f.call('alice-token');
    expect(ended.isError, JSON.stringify(ended)).toBe(true);
    expect(ended.content[0].text).toMatch(
      /your Tracker account could not be used: refresh refused: unavailable/,
    );
    expect(f.vault.grants.size).toBe(1);
  });

  it('the authorization server denies: the page says so and the retried call ends, no loop of questions', async () => {
    const f = await connectServer();
    const alice = await sessionCookie(f.origin, 'alice-token');
    const first = await f.call('alice-token');
    f.as.deny = 'access_denied';
    const page = await connectFromNode(asked(first)!.url!, alice);
    expect(page.status).toBe(403);
    expect(page.html).toContain('The Tracker sign-in did not allow access. Nothing was connected.');
    expect(f.events.map((e) => [e.action, e.detail?.reason])).toContainEqual(['refused', 'denied']);
    const retried = await f.call('alice-token', {
      requestState: first.requestState,
      inputResponses: { connect_tracker: { action: 'accept' } },
    });
    expect(retried.resultType).toBe('complete');
    expect(retried.isError).toBe(true);
    expect(retried.content[0].text).toContain(
      'connecting your Tracker account failed: the Tracker authorization server refused (the authorization server answered access_denied)',
    );
  });

  it('an authorization server out of reach when the link is opened: said on the page, and the call ends with why (no hold, no loop)', async () => {
    const f = await connectServer();
    const alice = await sessionCookie(f.origin, 'alice-token');
    const first = await f.call('alice-token');
    f.as.startFails = true;
    const page = await connectFromNode(asked(first)!.url!, alice);
    expect(page.status).toBe(502);
    expect(page.html).toContain(
      'could not be reached or did not answer properly. Nothing was connected. Go back to your app: the call ends there',
    );
    expect(f.events.map((e) => [e.action, e.detail?.reason])).toContainEqual(['refused', 'unavailable']);
    expect(f.done).toHaveLength(1); // a 2025 client waiting on the link is told it is over
    const retried = await f.call('alice-token', {
      requestState: first.requestState,
      inputResponses: { connect_tracker: { action: 'accept' } },
    });
    expect(retried.isError).toBe(true);
    expect(retried.content[0].text).toContain(
      'connecting your Tracker account failed: the Tracker authorization server refused (the authorization server could not be reached)',
    );
    // A new call asks afresh, and connects.
    expect((await connectFromNode(asked(await f.call('alice-token'))!.url!, alice)).status).toBe(200);
    expect(f.vault.grants.size).toBe(1);
  });

  it('a decline of the question ends the call', async () => {
    const f = await connectServer();
    const first = await f.call('alice-token');
    const declined = await f.call('alice-token', {
      requestState: first.requestState,
      inputResponses: { connect_tracker: { action: 'decline' } },
    });
    expect(declined.isError).toBe(true);
    expect(declined.content[0].text).toBe(
      'declined by the user: connecting your Tracker account was declined, so nothing was done',
    );
  });

  it('the callback replayed, or sent to another person, grants nothing', async () => {
    const f = await connectServer();
    const alice = await sessionCookie(f.origin, 'alice-token');
    const bob = await sessionCookie(f.origin, 'bob-token');
    const { url } = asked(await f.call('alice-token'))!;
    await connectFromNode(url!, alice);
    expect(f.vault.puts).toBe(1);
    const replay = await getPage(f.as.lastCallback!, alice);
    expect(replay.status).toBe(400);
    expect(replay.html).toContain('was already used');
    expect(f.vault.puts).toBe(1);

    // Bob's own flow: its callback opened in alice's browser (a login CSRF) is refused and consumed.
    const bobs = asked(await f.call('bob-token'))!.url!;
    const started = await fetch(bobs, { headers: { cookie: bob }, redirect: 'manual' });
    const atAs = await fetch(started.headers.get('location')!, { redirect: 'manual' });
    const forwarded = await getPage(atAs.headers.get('location')!, alice);
    expect(forwarded.status).toBe(403);
    expect(forwarded.html).toContain('This link is not yours');
    expect(f.vault.puts).toBe(1);
    expect((await getPage(atAs.headers.get('location')!, bob)).status).toBe(400);
  });

  it('an unknown connect id is 404; a callback without state is refused', async () => {
    const f = await connectServer();
    const alice = await sessionCookie(f.origin, 'alice-token');
    expect((await getPage(`${f.origin}/mrtr/connect/${'a'.repeat(22)}`, alice)).status).toBe(404);
    expect((await getPage(`${f.origin}/mrtr/connect/callback/tracker?code=x`, alice)).status).toBe(400);
  });

  it('unknown connection names and anonymous callers are the author’s mistake, named', async () => {
    const f = await connectServer();
    await expect(f.connections.tokenFor({ issuer: 'x', subject: 'y' }, 'nope')).rejects.toThrow(
      'no connection named "nope" (declared: tracker)',
    );
    const anonymous = {
      principal: { subject: 'someone' },
      flowId: 'f',
      round: 0,
      inputResponses: {},
      audit: { note() {} },
    } as never;
    await expect(f.connections.token(anonymous, 'tracker')).rejects.toThrow(
      'connection "tracker" needs an authenticated caller (a principal with an issuer)',
    );
  });
});

describe('the connections page', () => {
  it('lists the owner’s connections without a token; disconnect revokes and removes, from this page only', async () => {
    const f = await connectServer();
    const alice = await sessionCookie(f.origin, 'alice-token');
    await connectFromNode(asked(await f.call('alice-token'))!.url!, alice);
    const page = await getPage(`${f.origin}/mrtr/connections`, alice);
    expect(page.status).toBe(200);
    expect(page.html).toContain('<strong>Tracker</strong> connected');
    expect(page.html).not.toContain('tracker-at-');
    expect(page.html).not.toContain('tracker-rt-');
    // Bob's page shows his own: none.
    const bob = await sessionCookie(f.origin, 'bob-token');
    expect((await getPage(`${f.origin}/mrtr/connections`, bob)).html).toContain('not connected');

    const fields = hiddenFields(page.html);
    expect(
      (await postForm(`${f.origin}/mrtr/connections`, alice, fields, 'http://evil.example')).status,
    ).toBe(403);
    expect(
      (await postForm(`${f.origin}/mrtr/connections`, alice, { ...fields, csrf: 'x' }, f.origin)).status,
    ).toBe(403);
    expect(f.vault.grants.size).toBe(1);
    const gone = await postForm(`${f.origin}/mrtr/connections`, alice, fields, f.origin);
    expect(gone.status).toBe(303);
    expect(f.vault.grants.size).toBe(0);
    expect(f.as.revoked).toEqual(['tracker-at-1']);
    expect(f.events.map((e) => [e.action, e.by])).toContainEqual(['disconnected', 'alice']);
    expect((await getPage(`${f.origin}/mrtr/connections`, alice)).html).toContain('not connected');
    // Disconnected: the next call asks again.
    expect((await f.call('alice-token')).resultType).toBe('input_required');
  });
});
