// Signing people in to the server's pages (sign-in, the controls' pages): in Chromium through the development sign-in form, or from Node with
// the same form (for the attack tests that forge what a browser would not send).
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';

/** A browser context signed in as `name` (the label on the development sign-in form), on a phone-sized screen. */
export async function signedInBrowser(
  browser: Browser,
  origin: string,
  name: string,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  await page.goto(`${origin}/mrtr/signin?return=/mrtr/session`);
  await page.getByLabel(new RegExp(`^\\s*${name}\\b`)).check();
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${origin}/mrtr/session`);
  return { context, page };
}

/** A session cookie for `subject`, from Node. */
export async function sessionCookie(origin: string, subject: string): Promise<string> {
  const page = await fetch(`${origin}/mrtr/signin`);
  const csrfCookie = page.headers
    .getSetCookie()
    .find((c) => c.startsWith('mrtr-csrf='))!
    .split(';')[0]!;
  const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())![1]!;
  const signedIn = await fetch(`${origin}/mrtr/signin/dev`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: csrfCookie, origin },
    body: new URLSearchParams({ subject, csrf, return: '/mrtr/session' }),
  });
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
