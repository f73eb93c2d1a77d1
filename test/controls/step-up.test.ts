// Step-up through the server's own page: a URL-mode question (humanRequired second_factor) to /mrtr/step-up/<id>;
// only the flow's principal may use it; a TOTP code is checked there, single-use per time step; wrong codes lock
// the factor out, for longer each time; everything is reported as an event.
import { TOTP } from 'otpauth';
import { describe, expect, it } from 'vitest';
import { enrolTotp } from '../../src/controls/index.js';
import { getPage, hiddenFields, postForm, sessionCookie } from '../helpers/page-sessions.js';
import { textOf, useControls } from './fixture.js';

const codeAt = (secret: string, at: number) =>
  new TOTP({ secret, algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: at });

async function asked(f: Awaited<ReturnType<typeof useControls>>) {
  const first = await f.call('alice-token', 'show_recovery_codes', {});
  const q = first.result.inputRequests.step_up;
  return { first, q, url: q.params.url as string };
}

describe('step-up (show_recovery_codes)', () => {
  it('asks in URL mode; alice enters her code on the page; the retried call continues', async () => {
    const f = await useControls({ fakeClock: true });
    const { secret, uri } = enrolTotp(f.totpFile, 'alice');
    expect(uri).toMatch(/^otpauth:\/\/totp\/mrtr:alice\?/);
    const { first, q, url } = await asked(f);
    expect(q.params.mode).toBe('url');
    expect(q.params._meta['dev.mrtr/humanRequired']).toBe('second_factor');
    expect(q.params.message).toContain('Show the recovery codes of your account');
    // Its number says what it counts, in words a person reads (it said "(check 1)").
    expect(q.params.message).toMatch(/continue here \(request 1 of this call\)\.$/);
    expect(q.params.message).not.toMatch(/check/i);
    expect(new URL(url).pathname).toMatch(/^\/mrtr\/step-up\/[\w-]{22}$/);
    // Not yet: the retry asks again.
    const early = await f.call(
      'alice-token',
      'show_recovery_codes',
      {},
      {
        requestState: first.result.requestState,
        inputResponses: { step_up: { action: 'accept' } },
      },
    );
    expect(early.result.resultType).toBe('input_required');
    expect(early.result.inputRequests.step_up.params.message).toMatch(/\(request 2 of this call\)\.$/);

    const alice = await sessionCookie(f.origin, 'alice-token');
    const page = await getPage(url, alice);
    expect(page.status).toBe(200);
    expect(page.html).toContain('autocomplete="one-time-code"');
    const { csrf } = hiddenFields(page.html);
    const ok = await postForm(url, alice, { csrf: csrf!, code: codeAt(secret, f.clock.now) }, f.origin);
    expect(ok.status).toBe(200);
    expect(ok.html).toContain('<h1>Confirmed</h1>');
    expect(f.events.map((e) => [e.control, e.action, e.by])).toContainEqual(['step_up', 'done', 'alice']);

    const done = await f.call(
      'alice-token',
      'show_recovery_codes',
      {},
      {
        requestState: early.result.requestState,
        inputResponses: { step_up: { action: 'accept' } },
      },
    );
    expect(textOf(done)).toBe('Recovery codes for alice: 1111-2222, 3333-4444');
  });

  it('the link opened by another signed-in person is refused and checks no code (phishing rule)', async () => {
    const f = await useControls({ fakeClock: true });
    const { secret } = enrolTotp(f.totpFile, 'alice');
    enrolTotp(f.totpFile, 'bob');
    const { url } = await asked(f);
    const bob = await sessionCookie(f.origin, 'bob-token');
    const page = await getPage(url, bob);
    expect(page.status).toBe(403);
    expect(page.html).toContain('This link is not yours');
    const csrf = hiddenFields((await getPage(`${f.origin}/mrtr/session`, bob)).html).csrf!;
    const post = await postForm(url, bob, { csrf, code: codeAt(secret, f.clock.now) }, f.origin);
    expect(post.status).toBe(403);
    expect(f.events.some((e) => e.action === 'done')).toBe(false);
    expect(f.events.some((e) => e.action === 'wrong_person' && e.by === 'bob')).toBe(true);
  });

  it('a code is single-use: the same code again (another flow, same time step) is refused', async () => {
    const f = await useControls({ fakeClock: true });
    const { secret } = enrolTotp(f.totpFile, 'alice');
    const alice = await sessionCookie(f.origin, 'alice-token');
    const code = codeAt(secret, f.clock.now);
    const one = await asked(f);
    const csrf = hiddenFields((await getPage(one.url, alice)).html).csrf!;
    expect((await postForm(one.url, alice, { csrf, code }, f.origin)).html).toContain('Confirmed');
    const two = await asked(f);
    expect(two.url).not.toBe(one.url);
    const again = await postForm(two.url, alice, { csrf, code }, f.origin);
    expect(again.status).toBe(400);
    expect(again.html).toContain('That code was already used');
    // The next time step's code works.
    f.clock.now += 30_000;
    expect(
      (await postForm(two.url, alice, { csrf, code: codeAt(secret, f.clock.now) }, f.origin)).html,
    ).toContain('Confirmed');
  });

  it('five wrong codes lock the factor (429, Retry-After); the next lockout lasts twice as long', async () => {
    const f = await useControls({ fakeClock: true });
    const { secret } = enrolTotp(f.totpFile, 'alice');
    const alice = await sessionCookie(f.origin, 'alice-token');
    const { url } = await asked(f);
    const csrf = hiddenFields((await getPage(url, alice)).html).csrf!;
    // A code valid in no step of the window around now.
    const notValid = () => {
      const near = [-30_000, 0, 30_000].map((d) => codeAt(secret, f.clock.now + d));
      return ['000000', '111111', '222222', '333333'].find((c) => !near.includes(c))!;
    };
    const wrong = () => postForm(url, alice, { csrf, code: notValid() }, f.origin);
    for (let i = 0; i < 4; i++) expect((await wrong()).html).toContain('That code is not right');
    const locked = await wrong();
    expect(locked.status).toBe(429);
    expect(locked.html).toContain('locked for 60 seconds');
    // Even the right code is refused while locked.
    const right = await postForm(url, alice, { csrf, code: codeAt(secret, f.clock.now) }, f.origin);
    expect(right.status).toBe(429);
    f.clock.now += 61_000;
    for (let i = 0; i < 4; i++) expect((await wrong()).status).toBe(400);
    const again = await wrong();
    expect(again.html).toContain('locked for 120 seconds');
    expect(f.events.filter((e) => e.action === 'code_refused')).toHaveLength(11);
  });

  it('CSRF: a code posted without the session’s token or from another origin is not checked', async () => {
    const f = await useControls({ fakeClock: true });
    const { secret } = enrolTotp(f.totpFile, 'alice');
    const alice = await sessionCookie(f.origin, 'alice-token');
    const { url } = await asked(f);
    const code = codeAt(secret, f.clock.now);
    expect((await postForm(url, alice, { csrf: 'x', code }, f.origin)).status).toBe(403);
    const csrf = hiddenFields((await getPage(url, alice)).html).csrf!;
    expect((await postForm(url, alice, { csrf, code }, 'http://evil.example')).status).toBe(403);
    // The code is still unused: the real page's post succeeds.
    expect((await postForm(url, alice, { csrf, code }, f.origin)).html).toContain('Confirmed');
  });

  it('a person with no enrolled factor is told how to enrol', async () => {
    const f = await useControls({ fakeClock: true });
    const { url } = await asked(f);
    const page = await getPage(url, await sessionCookie(f.origin, 'alice-token'));
    expect(page.status).toBe(409);
    expect(page.html).toContain('mrtr users totp alice');
  });
});
