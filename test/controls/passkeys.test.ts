// Passkeys for step-up, in headless Chromium with a virtual authenticator (the DevTools protocol's WebAuthn domain):
// alice adds a passkey on /mrtr/passkeys, then proves a step-up with it and her retry completes. Then the attacks: an
// assertion replayed on another step-up, bob on alice's link, a ceremony without the page's CSRF token, another
// person's passkey, a second use of a challenge — each refused and told as an event, nothing marked done.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PasskeyBook } from '../../src/controls/passkey-book.js';
import { finishAuthentication } from '../../src/controls/passkey-ceremony.js';
import { MemoryStore } from '../../src/stores/index.js';
import { ARTEFACTS, launchChromium } from '../helpers/chromium.js';
import { getPage, sessionCookie, typeDevToken } from '../helpers/page-sessions.js';
import { textOf, useControls } from './fixture.js';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

async function noSeriousProblems(page: Page): Promise<void> {
  await page.evaluate(AXE);
  const r = (await page.evaluate('axe.run(document, { resultTypes: ["violations"] })')) as {
    violations: Array<{ id: string; impact: string }>;
  };
  expect(r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
}

/** Alice in Chromium, signed in, with a virtual platform authenticator that verifies her (as a fingerprint would). */
async function aliceWithAuthenticator(origin: string) {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
    },
  });
  await page.goto(`${origin}/mrtr/signin?return=/mrtr/passkeys`);
  await typeDevToken(page, 'alice-token');
  await page.waitForURL(`${origin}/mrtr/passkeys`);
  return { context, page };
}

const stepUpOf = (reply: { result: { inputRequests: Record<string, { params: { url: string } }> } }) =>
  Object.values(reply.result.inputRequests)[0]!.params.url;

describe('passkeys for step-up', () => {
  it('alice adds a passkey, proves a step-up with it, and her retry completes; a replayed assertion proves nothing', async () => {
    const f = await useControls({ host: 'localhost' });
    const alice = await aliceWithAuthenticator(f.origin);
    expect(await alice.page.locator('#passkeys').textContent()).toContain('no passkey yet');
    await alice.page.getByLabel(/Name it/).fill('Work laptop');
    await alice.page.getByRole('button', { name: 'Add a passkey' }).click();
    await alice.page.locator('#passkeys li').first().waitFor();
    expect(await alice.page.locator('#passkeys').textContent()).toContain('Work laptop');
    await noSeriousProblems(alice.page);
    await alice.page.screenshot({ path: join(ARTEFACTS, 'passkeys-enrol.png'), fullPage: true });
    // Removing one is a form of this session's page: a forged one removes nothing.
    const aliceCookie = (await alice.context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const forged = await fetch(`${f.origin}/mrtr/passkeys/remove`, {
      method: 'POST',
      headers: { cookie: aliceCookie, origin: f.origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: 'forged', id: 'any' }),
    });
    expect(forged.status).toBe(403);
    expect(await alice.page.locator('#passkeys li').count()).toBe(1);
    expect(f.events.map((e) => e.action)).toContain('passkey_added');

    const first = await f.call('alice-token', 'show_recovery_codes', {});
    const link = stepUpOf(first);
    expect(new URL(link).origin).toBe(f.origin);
    await alice.page.goto(link);
    // A person with a passkey and no authenticator app is offered the passkey alone.
    expect(await alice.page.getByRole('button', { name: 'Use a passkey' }).count()).toBe(1);
    expect(await alice.page.locator('#code').count()).toBe(0);
    await noSeriousProblems(alice.page);
    await alice.page.screenshot({ path: join(ARTEFACTS, 'step-up-passkey.png'), fullPage: true });
    let assertion: string | undefined;
    alice.page.on('request', (r) => {
      if (r.method() === 'POST' && r.url().endsWith('/passkey')) assertion = r.postData() ?? undefined;
    });
    await alice.page.getByRole('button', { name: 'Use a passkey' }).click();
    await alice.page.getByRole('heading', { name: 'Confirmed' }).waitFor();
    const done = f.events.find((e) => e.control === 'step_up' && e.action === 'done');
    expect(done).toMatchObject({ by: 'alice', detail: { method: 'passkey' } });
    const retry = await f.call(
      'alice-token',
      'show_recovery_codes',
      {},
      {
        requestState: first.result.requestState,
        inputResponses: { [Object.keys(first.result.inputRequests)[0]!]: { action: 'accept' } },
      },
    );
    expect(textOf(retry)).toContain('Recovery codes for alice');

    // The same assertion sent for a new step-up: its challenge was used, and it was another step-up's.
    const second = await f.call('alice-token', 'show_recovery_codes', {});
    const next = stepUpOf(second);
    const cookie = (await alice.context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const csrf = /data-csrf="([^"]+)"/.exec((await getPage(next, cookie)).html)![1]!;
    const replay = await fetch(`${next}/passkey`, {
      method: 'POST',
      headers: { cookie, origin: f.origin, 'content-type': 'application/json', 'x-mrtr-csrf': csrf },
      body: assertion!,
    });
    expect(replay.status).toBe(403);
    expect((await replay.json()).error).toBe('unknown_challenge');
    expect((await getPage(next, cookie)).html).toContain('Use a passkey');
    expect(f.events.filter((e) => e.action === 'passkey_refused').map((e) => e.detail?.reason)).toEqual([
      'unknown_challenge',
    ]);
    await alice.context.close();
  });

  it('another person, or a request without the page’s token, gets nothing; TOTP stays the fallback', async () => {
    const f = await useControls({ host: 'localhost' });
    const first = await f.call('alice-token', 'show_recovery_codes', {});
    const link = stepUpOf(first);
    const bob = await sessionCookie(f.origin, 'bob-token');
    const page = await getPage(link, bob);
    expect(page.status).toBe(403);
    expect(page.html).toContain('This link is not yours');
    const options = await fetch(`${link}/passkey/options`, {
      method: 'POST',
      headers: { cookie: bob, origin: f.origin, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(options.status).toBe(403);
    const alice = await sessionCookie(f.origin, 'alice-token');
    const tries: Array<Record<string, string>> = [
      { cookie: alice, origin: f.origin },
      { cookie: alice, origin: 'http://evil.example', 'x-mrtr-csrf': 'x' },
    ];
    for (const headers of tries) {
      const r = await fetch(`${link}/passkey/options`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(r.status).toBe(403);
    }
    // No passkey and no authenticator app: the page says how to get a second factor.
    const none = await getPage(link, alice);
    expect(none.status).toBe(409);
    expect(none.html).toContain('/mrtr/passkeys');
    const register = await fetch(`${f.origin}/mrtr/passkeys/options`, {
      method: 'POST',
      headers: { cookie: alice, origin: f.origin },
    });
    expect(register.status).toBe(403);
    expect((await fetch(`${f.origin}/mrtr/passkeys/options`, { method: 'POST' })).status).toBe(401);
    expect((await fetch(`${f.origin}/mrtr/passkeys`, { redirect: 'manual' })).status).toBe(303);
  });
});

describe('the ceremonies refuse', () => {
  const rp = { origin: 'http://localhost:1', id: 'localhost', name: 'mrtr' };
  const alice = { person: { subject: 'alice', issuer: 'iss' }, sid: 's1' };

  it('a passkey that is not the principal’s, a challenge of another session or step-up, a challenge used twice', async () => {
    const book = new PasskeyBook(new MemoryStore());
    await book.update({ subject: 'bob', issuer: 'iss' }, () => [
      { id: 'bob-key', publicKey: 'AA', counter: 0, transports: [], label: 'b', createdAt: 0 },
    ]);
    const handle = () =>
      book.challenge({
        kind: 'step_up',
        challenge: 'c',
        subject: 'alice',
        issuer: 'iss',
        sid: 's1',
        stepUpId: 'u1',
      });
    const response = { id: 'bob-key' } as never;
    expect(await finishAuthentication(book, rp, alice, 'u1', await handle(), response)).toBe(
      'not_your_passkey',
    );
    expect(
      await finishAuthentication(book, rp, { ...alice, sid: 's2' }, 'u1', await handle(), response),
    ).toBe('wrong_session');
    expect(await finishAuthentication(book, rp, alice, 'u2', await handle(), response)).toBe('wrong_step_up');
    const once = await handle();
    await finishAuthentication(book, rp, alice, 'u1', once, response);
    expect(await finishAuthentication(book, rp, alice, 'u1', once, response)).toBe('unknown_challenge');
    expect(await finishAuthentication(book, rp, alice, 'u1', 'not a handle', response)).toBe(
      'unknown_challenge',
    );
  });
});
