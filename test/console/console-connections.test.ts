// The console's connections panel over real HTTP and in headless Chromium: each person sees and disconnects only
// their own connected accounts (revoked at the authorization server, told as `disconnected`), an admin sees counts
// and nothing more, every change needs the session's CSRF token, and no page byte holds a token. Last, `mrtr gateway`
// with an oauth upstream serves the panel and records connection events in its trail (the built CLI: npm run build).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JsonlAuditReader } from '../../src/audit/index.js';
import { BearerAuth, DevTokens, parseDevTokens } from '../../src/auth/index.js';
import {
  type AuthorizationFlow,
  type ConnectionEvent,
  type ConnectionOwner,
  Connections,
  storeVault,
} from '../../src/connections/index.js';
import { ConnectionsPanel, OperatorConsole } from '../../src/console/index.js';
import { McpServer, text } from '../../src/server/index.js';
import { Keyring } from '../../src/state/index.js';
import { MemoryStore } from '../../src/stores/index.js';
import { launchChromium } from '../helpers/chromium.js';
import { freePort } from '../helpers/free-port.js';
import { mcp } from '../helpers/mcp-http.js';
import { getPage, hiddenFields, postForm, sessionCookie, typeDevToken } from '../helpers/page-sessions.js';
import { serveCli } from '../helpers/serve-cli.js';

const PEOPLE = {
  'alice-token': { sub: 'alice', name: 'Alice', roles: [] },
  'bob-token': { sub: 'bob', name: 'Bob', roles: ['approver'] },
  'carol-token': { sub: 'carol', name: 'Carol', roles: ['admin'] },
};
const ISSUER = 'urn:mrtr:dev-tokens';
const owner = (subject: string): ConnectionOwner => ({ issuer: ISSUER, subject });
/** Every token any grant holds: none may appear in any page. */
const SECRETS = [
  'alice-tracker-access-7f3a',
  'alice-tracker-refresh-7f3a',
  'bob-tracker-access-91c2',
  'bob-tracker-refresh-91c2',
  'bob-wiki-access-0d44',
  'bob-wiki-refresh-0d44',
];

let origin: string;
let close: () => Promise<void>;
let browser: Browser;
const revoked: string[] = [];
const events: ConnectionEvent[] = [];
let vault: ReturnType<typeof storeVault>;

/** Alice holds the tracker; Bob holds the tracker and the wiki (with a scope only his grant names). */
async function seed(): Promise<void> {
  const grant = (name: string, who: string, scopes: string[]) => ({
    accessToken: `${who}-${name}-access-${who === 'alice' ? '7f3a' : name === 'tracker' ? '91c2' : '0d44'}`,
    refreshToken: `${who}-${name}-refresh-${who === 'alice' ? '7f3a' : name === 'tracker' ? '91c2' : '0d44'}`,
    expiresAt: Date.now() + 3_600_000,
    scopes,
    issuer: `https://id.${name}.example.com`,
  });
  await vault.put(owner('alice'), 'tracker', grant('tracker', 'alice', ['tickets:read']));
  await vault.put(owner('bob'), 'tracker', grant('tracker', 'bob', ['tickets:read']));
  await vault.put(owner('bob'), 'wiki', grant('wiki', 'bob', ['pages:bob-only-scope']));
}

beforeAll(async () => {
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  const store = new MemoryStore();
  const keyring = Keyring.fromSpec(`k1:${Buffer.alloc(32, 3).toString('base64url')}`);
  vault = storeVault(store, keyring);
  // The authorization server's side is not under test here: revocation is recorded, nothing else is reached.
  const flow = { revoke: async (g) => void revoked.push(g.accessToken) } as AuthorizationFlow;
  const connections = new Connections({
    store,
    keyring,
    vault,
    connections: [
      { name: 'tracker', label: 'Tracker', clientId: 'gw', scopes: ['tickets:read'] },
      { name: 'wiki', label: 'Wiki', clientId: 'gw', scopes: ['pages:read'] },
    ],
    flowFor: () => flow,
    onEvent: (e) => void events.push(e),
  });
  const tokens = new DevTokens(parseDevTokens(PEOPLE));
  const server = new McpServer({
    name: 'console-connections',
    version: '1.0.0',
    auth: new BearerAuth({ verifier: tokens, resource: `${origin}/mcp` }),
    signIn: { devTokens: tokens },
  }).tool({ name: 'noop', description: 'Nothing' }, () => text('ok'));
  connections.attach(server);
  const operatorConsole = new OperatorConsole({ panels: [new ConnectionsPanel(connections)] }).attach(server);
  const endpoint = await server.listen({ host: '127.0.0.1', port });
  await seed();
  close = async () => {
    operatorConsole.close();
    await endpoint.close({ graceMs: 0 });
    await store.close();
  };
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await close?.();
});

const PANEL = '/mrtr/console/connections';
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page as it is (as the console's other browser test does). */
async function accessibilityProblems(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  const result = (await page.evaluate('axe.run(document, { resultTypes: ["violations"] })')) as {
    violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }>;
  };
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}
const cookies = new Map<string, string>();
async function cookie(who: string): Promise<string> {
  const known = cookies.get(who);
  if (known) return known;
  const made = await sessionCookie(origin, `${who}-token`);
  cookies.set(who, made);
  return made;
}
const panel = async (who: string) => getPage(`${origin}${PANEL}`, await cookie(who));
const noSecretIn = (html: string) => expect(SECRETS.filter((s) => html.includes(s))).toEqual([]);

describe('the connections panel', () => {
  it('without a session it sends the browser to sign in', async () => {
    const r = await fetch(`${origin}${PANEL}`, { redirect: 'manual' });
    expect(r.status).toBe(303);
    expect(r.headers.get('location')).toBe(`${origin}/mrtr/signin?return=${encodeURIComponent(PANEL)}`);
  });

  it('a person with no console role sees their own connections: what, where, since when, never a token', async () => {
    const home = await panel('alice');
    expect(home.status).toBe(200);
    expect(home.html).toContain('data-connection="tracker"');
    expect(home.html).toContain('https://id.tracker.example.com');
    expect(home.html).toContain('tickets:read');
    expect(home.html).toMatch(/<strong>Wiki<\/strong> <span class="muted">not connected/);
    // Bob's wiki grant is his: nothing of it on Alice's page, and no admin counts for her.
    expect(home.html).not.toContain('bob-only-scope');
    expect(home.html).not.toContain('https://id.wiki.example.com');
    expect(home.html).not.toContain('connection-counts');
    noSecretIn(home.html);
    const consoleHome = await getPage(`${origin}/mrtr/console`, await cookie('alice'));
    expect(consoleHome.html).toContain(`href="${PANEL}"`);
    expect(consoleHome.html).toContain('You have connected 1 of 2 accounts.');
    expect(consoleHome.html).not.toContain('hold no console role');
  });

  it('an admin sees how many people hold each connection, never whose and never a token', async () => {
    const page = await panel('carol');
    expect(page.status).toBe(200);
    const counts = /<table id="connection-counts">[\s\S]*?<\/table>/.exec(page.html)?.[0] ?? '';
    expect(counts).toContain('<tr><td>Tracker</td><td>2</td></tr>');
    expect(counts).toContain('<tr><td>Wiki</td><td>1</td></tr>');
    // Her own list is empty: nobody else's grant is drawn for her.
    expect(page.html).not.toContain('data-connection=');
    for (const other of ['alice', 'Alice', 'bob', 'Bob', 'bob-only-scope', 'id.tracker.example.com'])
      expect({ other, shown: page.html.includes(other) }).toEqual({ other, shown: false });
    noSecretIn(page.html);
    // A console role other than admin draws no counts.
    expect((await panel('bob')).html).not.toContain('connection-counts');
  });

  it('a disconnect without the session’s CSRF token, with another’s, or from another origin changes nothing', async () => {
    const alice = await cookie('alice');
    const mine = hiddenFields((await panel('alice')).html);
    const bobs = hiddenFields((await panel('bob')).html);
    const url = `${origin}${PANEL}/disconnect`;
    const attempts = [
      postForm(url, alice, { connection: 'tracker' }, origin),
      postForm(url, alice, { connection: 'tracker', csrf: 'forged' }, origin),
      postForm(url, alice, { connection: 'tracker', csrf: bobs.csrf! }, origin),
      postForm(url, alice, { ...mine, connection: 'tracker' }, 'https://evil.example'),
    ];
    const answers = await Promise.all(attempts);
    expect(answers.map((r) => r.status)).toEqual([403, 403, 403, 403]);
    for (const r of answers.slice(0, 3)) expect(r.html).toContain('Nothing was disconnected');
    // A foreign origin is refused by the listener before any page sees the form.
    expect(answers[3]!.html).toContain('Origin https://evil.example is not allowed');
    expect(await vault.get(owner('alice'), 'tracker')).toBeDefined();
    expect(revoked).toEqual([]);
    const get = await fetch(url, { headers: { cookie: alice } });
    expect({ status: get.status, allow: get.headers.get('allow') }).toEqual({ status: 405, allow: 'POST' });
    const unknown = await postForm(url, alice, { ...mine, connection: 'mail' }, origin);
    expect(unknown.status).toBe(400);
  });

  it('a form names a connection, never an owner: Alice cannot disconnect Bob’s wiki', async () => {
    const mine = hiddenFields((await panel('alice')).html);
    const r = await postForm(
      `${origin}${PANEL}/disconnect`,
      await cookie('alice'),
      { ...mine, connection: 'wiki', subject: 'bob', issuer: ISSUER },
      origin,
    );
    expect(r.status).toBe(303);
    expect(await vault.get(owner('bob'), 'wiki')).toBeDefined();
    expect(revoked).toEqual([]);
  });

  it('in Chromium Alice disconnects her tracker: revoked at its authorization server, told, Bob’s kept', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    await page.goto(`${origin}/mrtr/signin?return=/mrtr/console`);
    await typeDevToken(page, 'alice-token');
    await page.waitForURL(`${origin}/mrtr/console`);
    await page.getByRole('link', { name: 'Connections' }).first().click();
    await page.waitForURL(`${origin}${PANEL}`);
    noSecretIn(await page.content());
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.getByRole('button', { name: 'Disconnect Tracker' }).click();
    await page.waitForURL(`${origin}${PANEL}`);
    await page.getByText('not connected').nth(1).waitFor();
    expect(await page.locator('[data-connection]').count()).toBe(0);
    noSecretIn(await page.content());
    await context.close();

    expect(revoked).toEqual(['alice-tracker-access-7f3a']);
    expect(await vault.get(owner('alice'), 'tracker')).toBeUndefined();
    expect(await vault.get(owner('bob'), 'tracker')).toBeDefined();
    const told = events.filter((e) => e.action === 'disconnected');
    expect(told).toEqual([
      expect.objectContaining({ connection: 'tracker', by: 'alice', detail: { revokedAtIssuer: true } }),
    ]);
    noSecretIn(JSON.stringify(events));
    const counts = /<table id="connection-counts">[\s\S]*?<\/table>/.exec((await panel('carol')).html)?.[0];
    expect(counts).toContain('<tr><td>Tracker</td><td>1</td></tr>');
  });
});

describe('mrtr gateway with an oauth upstream', () => {
  it('serves the connections panel in its console, to anyone signed in, and its trail records connection events', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mrtr-console-connections-'));
    try {
      writeFileSync(
        join(dir, 'tokens.json'),
        JSON.stringify({
          'dave-token': { sub: 'dave', roles: [] },
          'erin-token': { sub: 'erin', roles: [] },
        }),
      );
      const audit = join(dir, 'audit.jsonl');
      // The upstream is never reached: nobody has connected, so nothing is asked of it.
      writeFileSync(
        join(dir, 'gateway.yaml'),
        `upstreams:
  - name: tracker
    url: http://127.0.0.1:${await freePort()}/mcp
    credentials:
      type: oauth
      issuer: http://127.0.0.1:${await freePort()}
      clientId: mrtr-gateway
      scopes: [tickets:read]
rules:
  - tools: ["tracker/*"]
    roles: ["*"]
`,
      );
      const served = await serveCli(
        [
          '--config',
          join(dir, 'gateway.yaml'),
          '--port',
          String(await freePort()),
          '--tokens',
          join(dir, 'tokens.json'),
          '--audit',
          `jsonl:${audit}`,
        ],
        'gateway',
      );
      const gw = new URL(served.url).origin;
      const page = await getPage(`${gw}${PANEL}`, await sessionCookie(gw, 'dave-token'));
      expect(page.status).toBe(200);
      expect(page.html).toMatch(/<strong>tracker<\/strong> <span class="muted">not connected/);
      // Dave is asked to connect; Erin opens his link: refused, and the trail says so (never a token: none exists).
      const asked = await mcp(
        served.url,
        'tools/call',
        { name: 'tracker__connect', arguments: {} },
        { headers: { authorization: 'Bearer dave-token' } },
      );
      const result = asked.response.result as { inputRequests: Record<string, { params: { url: string } }> };
      const link = Object.values(result.inputRequests)[0]!.params.url;
      const erin = await getPage(link, await sessionCookie(gw, 'erin-token'));
      expect(erin.status).toBe(403);
      await served.stop();
      const reader = await JsonlAuditReader.open(audit);
      const connectionEvents = (await reader.events())
        .map((e) => JSON.parse(e.text))
        .filter((r) => r.event === 'connection');
      await reader.close();
      expect(connectionEvents).toEqual([
        expect.objectContaining({
          method: 'connection/wrong_person',
          target: 'tracker',
          // Erin as her sign-in knows her: the development tokens' issuer.
          principal: { sub: 'erin', iss: ISSUER },
        }),
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
