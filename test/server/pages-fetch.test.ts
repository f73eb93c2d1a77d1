// The server's own pages through mcpHttp(...).fetch, driven with web Requests in this process: the development
// sign-in, an approval from the inbox to the requester's retry, the console, and the same refusals as over listen().
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { controlsServer } from '../../examples/human-controls.js';
import { DevTokens, parseDevTokens } from '../../src/auth/index.js';
import { ApprovalBook } from '../../src/controls/approval-book.js';
import { encodeHeaderValue } from '../../src/protocol/index.js';
import { FetchResponseWriter } from '../../src/server/http/fetch-wire.js';
import { type FetchPeer, mcpHttp } from '../../src/server/index.js';
import { generateKeySpec } from '../../src/state/index.js';
import { MemoryStore } from '../../src/stores/index.js';
import { META } from '../helpers/mcp-http.js';
import { hiddenFields } from '../helpers/page-sessions.js';

const ORIGIN = 'https://mcp.example.com';
const PEOPLE = {
  'alice-token': { sub: 'alice', name: 'Alice', roles: ['requester'] },
  'bob-token': { sub: 'bob', name: 'Bob', roles: ['approver'] },
  'dave-token': { sub: 'dave', name: 'Dave', roles: [] },
};
type Token = keyof typeof PEOPLE;
/** Deno's `info` for a caller on this machine: the development sign-in is offered to loopback peers only. */
const LOOPBACK: FetchPeer = { remoteAddr: { hostname: '127.0.0.1' } };

process.env.MRTR_STATE_KEYS ??= generateKeySpec();
const dir = mkdtempSync(join(tmpdir(), 'mrtr-pages-fetch-'));
const tokens = new DevTokens(parseDevTokens(PEOPLE));
const store = new MemoryStore();
const server = controlsServer({
  tokens,
  store,
  totpFile: join(dir, 'totp.json'),
  resource: `${ORIGIN}/mcp`,
  pendingWaitMs: 0,
});
const handler = mcpHttp(server, {
  signIn: { devTokens: tokens },
  allowedHosts: ['mcp.example.com'],
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Page {
  status: number;
  html: string;
  location: string | null;
  cookies: string[];
  headers: Headers;
}

/** A request to `path` through `handler.fetch`, as a browser on this machine sends it. */
async function open(
  path: string,
  init: { cookie?: string; form?: Record<string, string>; origin?: string | undefined } = {},
  peer: FetchPeer | null = LOOPBACK,
): Promise<Page> {
  const headers: Record<string, string> = { host: 'mcp.example.com' };
  if (init.cookie) headers.cookie = init.cookie;
  if (init.origin) headers.origin = init.origin;
  if (init.form) headers['content-type'] = 'application/x-www-form-urlencoded';
  const request = new Request(`${ORIGIN}${path}`, {
    method: init.form ? 'POST' : 'GET',
    headers,
    ...(init.form ? { body: new URLSearchParams(init.form).toString() } : {}),
  });
  const response = await handler.fetch(request, peer ?? undefined);
  const cookies = response.headers.getSetCookie().map((c) => c.split(';')[0]!);
  return {
    status: response.status,
    html: await response.text(),
    location: response.headers.get('location'),
    cookies,
    headers: response.headers,
  };
}

/** Signed in through the development sign-in form: the session cookie (`__Host-`: the origin is https). */
async function signIn(token: Token): Promise<string> {
  const page = await open('/mrtr/signin?return=/mrtr/session');
  const csrfCookie = page.cookies.find((c) => c.startsWith('__Host-mrtr-csrf='))!;
  const csrf = hiddenFields(page.html).csrf!;
  const done = await open('/mrtr/signin/dev', {
    cookie: csrfCookie,
    origin: ORIGIN,
    form: { csrf, return: '/mrtr/session', token },
  });
  expect(done.status).toBe(303);
  expect(done.location).toBe('/mrtr/session');
  return done.cookies.find((c) => c.startsWith('__Host-mrtr-session='))!;
}

// biome-ignore lint/suspicious/noExplicitAny: replies are read as loose JSON, checked by each expectation
async function callTool(token: Token, args: Record<string, unknown>, round = {}): Promise<any> {
  const body = {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'request_access', arguments: args, ...round, _meta: META },
  };
  const response = await handler.fetch(
    new Request(`${ORIGIN}/mcp`, {
      method: 'POST',
      headers: {
        host: 'mcp.example.com',
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': encodeHeaderValue('request_access'),
      },
      body: JSON.stringify(body),
    }),
  );
  return response.json();
}

const ASK = { resource: 'prod-db', reason: 'Incident 4711: read the slow-query log' };

describe('sign-in through fetch', () => {
  it('the sign-in page carries the pages’ security headers; a loopback caller gets the development form', async () => {
    const page = await open('/mrtr/signin');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.html).toContain('Development token');
    expect(page.cookies.some((c) => c.startsWith('__Host-mrtr-csrf='))).toBe(true);
  });

  it('a caller whose address the runtime did not give is not offered the development sign-in', async () => {
    const page = await open('/mrtr/signin', {}, null);
    expect(page.html).not.toContain('Development token');
    expect(page.html).toContain('No way to sign in is offered to this address.');
    const remote = await open('/mrtr/signin', {}, { remoteAddr: { hostname: '203.0.113.9' } });
    expect(remote.html).not.toContain('Development token');
  });

  it('a token signs its holder in; the session page names them; a wrong token signs nobody in', async () => {
    const cookie = await signIn('bob-token');
    const session = await open('/mrtr/session', { cookie });
    expect(session.status).toBe(200);
    expect(session.html).toContain('Bob');
    const page = await open('/mrtr/signin');
    const wrong = await open('/mrtr/signin/dev', {
      cookie: page.cookies.find((c) => c.startsWith('__Host-mrtr-csrf='))!,
      origin: ORIGIN,
      form: { csrf: hiddenFields(page.html).csrf!, return: '/mrtr/session', token: 'nobody-token' },
    });
    expect(wrong.cookies.some((c) => c.startsWith('__Host-mrtr-session='))).toBe(false);
  });

  it('a sign-in POST from another origin is refused before the form is read', async () => {
    const page = await open('/mrtr/signin');
    const refused = await open('/mrtr/signin/dev', {
      cookie: page.cookies.find((c) => c.startsWith('__Host-mrtr-csrf='))!,
      origin: 'https://evil.example',
      form: { csrf: hiddenFields(page.html).csrf!, return: '/mrtr/session', token: 'bob-token' },
    });
    expect(refused.status).toBe(403);
    expect(refused.cookies).toEqual([]);
  });
});

describe('an approval through fetch', () => {
  it('bob approves in his inbox; alice’s status page follows; her retry completes', async () => {
    const first = await callTool('alice-token', ASK);
    const link = new URL(first.result.inputRequests.approval.params.url as string);
    expect(link.origin).toBe(ORIGIN);
    const id = link.pathname.split('/')[3]!;

    const bob = await signIn('bob-token');
    const inbox = await open('/mrtr/approvals', { cookie: bob });
    expect(inbox.status).toBe(200);
    expect(inbox.html).toContain('Incident 4711');
    const review = await open(`/mrtr/approvals/${id}`, { cookie: bob });
    expect(review.status).toBe(200);
    expect(review.html).toContain('asks for approval');
    expect(review.html).toContain('prod-db');
    const fields = hiddenFields(review.html);
    const voted = await open(`/mrtr/approvals/${id}`, {
      cookie: bob,
      origin: ORIGIN,
      form: { ...fields, decision: 'approve', comment: 'ok for 4711' },
    });
    expect(voted.status).toBe(303);
    expect((await new ApprovalBook(store).get(id))?.votes).toHaveLength(1);

    const alice = await signIn('alice-token');
    const status = await open(link.pathname, { cookie: alice });
    expect(status.status).toBe(200);
    expect(status.html).toContain('Approved');
    const done = await callTool('alice-token', ASK, {
      requestState: first.result.requestState,
      inputResponses: { approval: { action: 'accept' } },
    });
    expect(done.result.content[0].text).toBe('Access to prod-db granted (approved by bob)');
  });

  it('the requester’s link opened by another person is refused and shows nothing of the request', async () => {
    const first = await callTool('alice-token', ASK);
    const link = new URL(first.result.inputRequests.approval.params.url as string);
    const dave = await signIn('dave-token');
    const page = await open(link.pathname, { cookie: dave });
    expect(page.status).toBe(403);
    expect(page.html).toContain('This link is not yours');
    expect(page.html).not.toContain('prod-db');
  });

  it('a vote from another origin, or without one, is refused and not recorded', async () => {
    const first = await callTool('alice-token', ASK);
    const id = new URL(first.result.inputRequests.approval.params.url as string).pathname.split('/')[3]!;
    const bob = await signIn('bob-token');
    const fields = hiddenFields((await open(`/mrtr/approvals/${id}`, { cookie: bob })).html);
    const form = { ...fields, decision: 'approve' };
    const otherSite = await open(`/mrtr/approvals/${id}`, {
      cookie: bob,
      origin: 'https://evil.example',
      form,
    });
    expect(otherSite.status).toBe(403);
    const noOrigin = await open(`/mrtr/approvals/${id}`, { cookie: bob, form });
    expect(noOrigin.status).toBe(403);
    expect((await new ApprovalBook(store).get(id))?.votes).toEqual([]);
  });

  it('a page without a session is sent to sign in', async () => {
    const page = await open('/mrtr/approvals');
    expect(page.status).toBe(303);
    expect(page.location).toBe(`${ORIGIN}/mrtr/signin?return=${encodeURIComponent('/mrtr/approvals')}`);
  });
});

describe('the console through fetch', () => {
  it('an approver sees the approvals queue; a person without a console role is refused', async () => {
    await callTool('alice-token', { ...ASK, reason: 'Incident 4712: console check' });
    const bob = await signIn('bob-token');
    const queue = await open('/mrtr/console/approvals', { cookie: bob });
    expect(queue.status).toBe(200);
    expect(queue.html).toContain('Incident 4712');
    expect(queue.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const dave = await signIn('dave-token');
    const refused = await open('/mrtr/console/approvals', { cookie: dave });
    expect(refused.status).toBe(403);
    expect(refused.html).not.toContain('Incident 4712');
  });
});

describe('a page that fails after its head was sent', () => {
  it('is cut: the body errors instead of ending as if complete (node destroys the socket)', async () => {
    const res = new FetchResponseWriter();
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.destroy();
    expect(res.destroyed).toBe(true);
    const response = await res.response;
    await expect(response.text()).rejects.toThrow();
  });

  it('sends each cookie of a list as its own set-cookie header', async () => {
    const res = new FetchResponseWriter();
    res.writeHead(303, { location: '/mrtr/session', 'set-cookie': ['a=1; Path=/', 'b=2; Path=/'] });
    res.end();
    expect((await res.response).headers.getSetCookie()).toEqual(['a=1; Path=/', 'b=2; Path=/']);
  });
});
