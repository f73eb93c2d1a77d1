// Signing people in to the server's pages (sign-in, the controls' pages): in Chromium through the development sign-in
// form, or from Node with the same form (for the attack tests that forge what a browser would not send). Both type the
// person's development token: the form signs in whoever the token belongs to, and no one without it.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';

/** Type `token` into the development sign-in form of the page `page` is on, and send it. */
export async function typeDevToken(page: Page, token: string): Promise<void> {
  await page.getByLabel('Development token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** A browser context signed in with the development token `token`, on a phone-sized screen. */
export async function signedInBrowser(
  browser: Browser,
  origin: string,
  token: string,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  await page.goto(`${origin}/mrtr/signin?return=/mrtr/session`);
  await typeDevToken(page, token);
  await page.waitForURL(`${origin}/mrtr/session`);
  return { context, page };
}

/** The development sign-in form posted from Node with `fields` (besides the page's CSRF token and cookie). */
export async function postDevSignIn(origin: string, fields: Record<string, string>): Promise<Response> {
  const page = await fetch(`${origin}/mrtr/signin`);
  const csrfCookie = page.headers
    .getSetCookie()
    .find((c) => c.startsWith('mrtr-csrf='))!
    .split(';')[0]!;
  const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())![1]!;
  return fetch(`${origin}/mrtr/signin/dev`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: csrfCookie, origin },
    body: new URLSearchParams({ csrf, return: '/mrtr/session', ...fields }),
  });
}

/** A session cookie for the holder of the development token `token`, from Node. */
export async function sessionCookie(origin: string, token: string): Promise<string> {
  const signedIn = await postDevSignIn(origin, { token });
  expect(signedIn.status).toBe(303);
  return signedIn.headers
    .getSetCookie()
    .find((c) => c.startsWith('mrtr-session='))!
    .split(';')[0]!;
}

/** GET a page as the holder of `cookie`: status and HTML. */
export async function getPage(
  url: string,
  cookie: string,
): Promise<{ status: number; html: string; location: string | null }> {
  const r = await fetch(url, { headers: { cookie }, redirect: 'manual' });
  return { status: r.status, html: await r.text(), location: r.headers.get('location') };
}

/** The hidden fields of the first form on a page. */
export function hiddenFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields[m[1]!] = m[2]!;
  return fields;
}

export async function postForm(
  url: string,
  cookie: string,
  fields: Record<string, string>,
  origin: string | undefined,
): Promise<{ status: number; html: string; location: string | null }> {
  const r = await fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie,
      ...(origin === undefined ? {} : { origin }),
    },
    body: new URLSearchParams(fields),
  });
  return { status: r.status, html: await r.text(), location: r.headers.get('location') };
}
