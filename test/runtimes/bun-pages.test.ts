// The server's own pages on Bun: the development sign-in through mcpHttp(...).fetch, offered because Bun's server
// tells the caller's address, and a sign-in sent from another origin refused.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBuiltCli } from '../client/helpers.js';
import { freePort } from '../helpers/free-port.js';
import { hiddenFields } from '../helpers/page-sessions.js';
import { type RuntimeChild, startRuntime } from './child-runtime.js';

const BUN = join(import.meta.dirname, '../../node_modules/@oven/bun-linux-x64/bin/bun');

let dir: string;
let bun: RuntimeChild;
let origin: string;
beforeAll(async () => {
  requireBuiltCli(); // Bun runs the built package
  dir = await mkdtemp(join(tmpdir(), 'mrtr-bun-pages-'));
  await writeFile(join(dir, 'tsconfig.json'), '{}');
  const port = await freePort();
  bun = await startRuntime(
    BUN,
    [`--tsconfig-override=${join(dir, 'tsconfig.json')}`, join(import.meta.dirname, 'bun-pages-entry.ts')],
    { env: { PORT: String(port) } },
  );
  origin = new URL(bun.url).origin;
}, 60_000);
afterAll(async () => {
  await bun?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** The sign-in page's CSRF cookie and field, then the form sent with `token` from `from`. */
async function signIn(token: string, from: string): Promise<Response> {
  const page = await fetch(`${origin}/mrtr/signin`);
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toContain('Development token');
  const csrfCookie = page.headers
    .getSetCookie()
    .find((c) => c.startsWith('mrtr-csrf='))!
    .split(';')[0]!;
  return fetch(`${origin}/mrtr/signin/dev`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: csrfCookie, origin: from },
    body: new URLSearchParams({ csrf: hiddenFields(html).csrf!, return: '/mrtr/session', token }),
  });
}

describe('the pages on bun', () => {
  it('a token signs its holder in; the session page names them', async () => {
    const done = await signIn('bob-token', origin);
    expect(done.status).toBe(303);
    const session = done.headers
      .getSetCookie()
      .find((c) => c.startsWith('mrtr-session='))!
      .split(';')[0]!;
    const page = await fetch(`${origin}/mrtr/session`, { headers: { cookie: session } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await page.text()).toContain('Bob');
  });

  it('a sign-in sent from another origin is refused', async () => {
    const refused = await signIn('bob-token', 'http://evil.example');
    expect(refused.status).toBe(403);
    expect(refused.headers.getSetCookie()).toEqual([]);
  });
});
