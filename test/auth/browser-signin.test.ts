// Browser sign-in in headless Chromium against a real OpenID provider: the person signs in at the issuer, comes back
// with a session cookie, and a page that belongs to alice's flow serves alice and refuses bob (the phishing rule).
// Then the session's own rules from Node: CSRF on every form, forged cookies, no open redirect, dev sign-in on
// loopback only.
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BearerAuth, DevTokens, JwtVerifier, parseDevTokens } from '../../src/auth/index.js';
import { McpServer, text } from '../../src/server/index.js';
import { ARTEFACTS, launchChromium } from '../helpers/chromium.js';
import { freePort } from '../helpers/free-port.js';
import { type RunningProvider, startOidcProvider, TEST_CLIENT } from '../helpers/oidc-provider.js';
import { sessionCookie } from '../helpers/page-sessions.js';
import { KEYS } from './dev-token-server.js';

let provider: RunningProvider;
let browser: Browser;
let http: Server;
let origin: string;
let signInOf: McpServer['signIn'];

beforeAll(async () => {
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  provider = await startOidcProvider({
    resource: `${origin}/mcp`,
    redirectUris: [`${origin}/mrtr/callback`],
  });
  const server = new McpServer({
    name: 'signin-test',
    version: '1.0.0',
    stateKeys: KEYS,
    logger: { info() {}, warn() {}, error() {} } as never,
    auth: new BearerAuth({
      verifier: new JwtVerifier({ issuer: provider.issuer, audience: `${origin}/mcp` }),
      resource: `${origin}/mcp`,
    }),
    signIn: {
      oidc: { issuer: provider.issuer, clientId: TEST_CLIENT.id, clientSecret: TEST_CLIENT.secret },
      devTokens: new DevTokens(
        parseDevTokens({ 'carol-token': { sub: 'carol', name: 'Carol', roles: ['approver'] } }),
      ),
    },
  }).tool({ name: 'noop', description: 'x' }, () => text('x'));
  const transport = server.http();
  signInOf = server.signIn;
  // A page that belongs to one person's flow, as the step-up and approval pages will: /mrtr/test/flow?of=alice.
  http = createServer((req, res) => {
    if (req.url?.startsWith('/mrtr/test/flow')) {
      const of = new URL(req.url, origin).searchParams.get('of') ?? '';
      const session = signInOf!.requirePrincipal(req, res, { subject: of, issuer: provider.issuer });
      if (session)
        res.writeHead(200, { 'content-type': 'text/plain' }).end(`this page is for ${session.subject}`);
      return;
    }
    transport.listener(req, res);
  });
  await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  http?.closeAllConnections();
  await new Promise((resolve) => http?.close(resolve));
  await provider?.close();
});

describe('OIDC sign-in in a real browser', () => {
  it('signs alice in at the issuer; her flow page serves her, bob’s refuses her; sign-out ends it', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${origin}/mrtr/test/flow?of=alice`);
    // Not signed in: sent to the sign-in page, which offers the issuer.
    expect(new URL(page.url()).pathname).toBe('/mrtr/signin');
    await page.screenshot({ path: join(ARTEFACTS, 'signin-page.png') });
    await page.getByRole('link', { name: /Sign in with/ }).click();
    // oidc-provider's own login and consent pages.
    await page.locator('input[name=login]').fill('alice');
    await page.locator('input[name=password]').fill('any');
    await page.locator('button[type=submit]').click();
    await page.locator('button[type=submit]').click();
    await page.waitForURL(`${origin}/mrtr/test/flow?of=alice`);
    expect(await page.textContent('body')).toBe('this page is for alice');

    // The same person opening another person's link is refused, and told so.
    const response = await page.goto(`${origin}/mrtr/test/flow?of=bob`);
    expect(response?.status()).toBe(403);
    expect(await page.textContent('h1')).toBe('This link is not yours');
    expect(await page.textContent('main')).toContain('You are signed in as Alice Example');
    await page.screenshot({ path: join(ARTEFACTS, 'signin-not-yours.png') });

    await page.goto(`${origin}/mrtr/session`);
    expect(await page.textContent('main')).toContain('You are signed in as Alice Example');
    expect(await page.textContent('main')).toContain('roles requester');
    await page.screenshot({ path: join(ARTEFACTS, 'signin-session.png') });
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'mrtr-session')!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${origin}/mrtr/signout`);
    expect(await page.textContent('h1')).toBe('Signed out');
    await page.goto(`${origin}/mrtr/test/flow?of=alice`);
    expect(new URL(page.url()).pathname).toBe('/mrtr/signin');
    await context.close();
  });

  it('pages carry a strict Content-Security-Policy and cannot be framed', async () => {
    const response = await fetch(`${origin}/mrtr/signin`);
    expect(response.headers.get('content-security-policy')).toBe(
      "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('cache-control')).toBe('no-store');
  });
});

/** Sign carol in through the development form from Node with her token, as a browser on this machine would. */
const devSession = (token = 'carol-token'): Promise<string> => sessionCookie(origin, token);

describe('the session’s rules', () => {
  it('development sign-in works from this machine and names the person', async () => {
    const cookie = await devSession();
    const page = await fetch(`${origin}/mrtr/session`, { headers: { cookie } });
    expect(await page.text()).toContain('You are signed in as <strong>Carol</strong>');
  });

  it('refuses a development sign-in without the sign-in page’s CSRF token (login CSRF)', async () => {
    const forged = await fetch(`${origin}/mrtr/signin/dev`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: 'mrtr-csrf=abc', origin },
      body: new URLSearchParams({ token: 'carol-token', csrf: 'xyz' }),
    });
    expect(forged.status).toBe(403);
    expect(forged.headers.getSetCookie()).toEqual([]);
  });

  it('refuses a sign-out from another origin or without the session’s CSRF token', async () => {
    const cookie = await devSession();
    for (const [headers, body] of [
      [{ origin: 'http://evil.example' }, { csrf: 'anything' }],
      [{ origin }, { csrf: 'wrong' }],
      [{ origin }, {}],
    ] as const) {
      const reply = await fetch(`${origin}/mrtr/signout`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, ...headers },
        body: new URLSearchParams(body),
      });
      expect(reply.status).toBe(403);
    }
    const still = await fetch(`${origin}/mrtr/session`, { headers: { cookie }, redirect: 'manual' });
    expect(still.status).toBe(200);
  });

  it('a session cookie that was edited, or signed by another key, is no session', async () => {
    const cookie = await devSession();
    const [name, value] = cookie.split('=');
    const [kid, payload, mac] = value!.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    const edited = `${name}=${kid}.${Buffer.from(JSON.stringify({ ...claims, sub: 'alice' })).toString('base64url')}.${mac}`;
    for (const forged of [edited, `${name}=other.${payload}.${mac}`, `${name}=garbage`]) {
      const reply = await fetch(`${origin}/mrtr/session`, {
        headers: { cookie: forged },
        redirect: 'manual',
      });
      expect(reply.status).toBe(303);
      expect(reply.headers.get('location')).toContain('/mrtr/signin');
    }
  });

  it('returns only to its own pages: no open redirect', async () => {
    for (const target of [
      'https://evil.example/',
      '//evil.example/x',
      '/\\evil.example',
      '/mrtr/../../x y',
    ]) {
      const page = await fetch(`${origin}/mrtr/signin?return=${encodeURIComponent(target)}`);
      const text = await page.text();
      expect(text).toContain('name="return" value="/mrtr/session"');
      expect(text).not.toContain('evil.example');
    }
  });

  it('answers only its methods', async () => {
    const reply = await fetch(`${origin}/mrtr/session`, { method: 'DELETE' });
    expect(reply.status).toBe(405);
  });
});
