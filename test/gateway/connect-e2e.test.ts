// "Connect your account" with every part real: a third party's authorization server (oidc-provider), an upstream MCP
// server that takes only its JWTs, two gateway instances sharing a Redis store and one keyring, the real Connections
// with its vault and OAuth flow, and headless Chromium for the person. Alice is asked on instance A, connects in her
// browser, and her retried call runs on instance B. Bob is asked separately. Her token never reaches the client or
// the logs.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BearerAuth, DevTokens, JwtVerifier, parseDevTokens } from '../../src/auth/index.js';
import { Connections, storeVault } from '../../src/connections/index.js';
import { connectionConfigs, Gateway, PinBook, parseGatewayConfig } from '../../src/gateway/index.js';
import type { HttpEndpoint } from '../../src/server/index.js';
import { McpServer, text } from '../../src/server/index.js';
import { Keyring } from '../../src/state/index.js';
import { RedisStore } from '../../src/stores/index.js';
import { launchChromium } from '../helpers/chromium.js';
import { freePort } from '../helpers/free-port.js';
import { mcp } from '../helpers/mcp-http.js';
import { signedInBrowser } from '../helpers/page-sessions.js';
import { TestRedis } from '../helpers/redis-server.js';
import { startThirdPartyAs, type ThirdPartyAs } from '../helpers/third-party-as.js';

// biome-ignore lint/suspicious/noExplicitAny: replies are read as loose JSON, checked by the expectations
type Loose = any;

const KEYS = `k1:${Buffer.alloc(32, 7).toString('base64url')}`;
const PEOPLE = {
  'alice-token': { sub: 'alice', roles: ['staff'] },
  'bob-token': { sub: 'bob', roles: ['staff'] },
};

let redis: TestRedis;
let as: ThirdPartyAs;
let upstream: HttpEndpoint;
let browser: Browser;
const gateways: Array<{ url: string; origin: string; close(): Promise<void> }> = [];
/** Every line any part logged: a token must never be among them. */
const logged: string[] = [];
/** The bearer tokens the upstream received, by the subject it saw. */
const upstreamSaw = new Map<string, string>();
const logger = {
  info: (...a: unknown[]) => logged.push(JSON.stringify(a)),
  warn: (...a: unknown[]) => logged.push(JSON.stringify(a)),
  error: (...a: unknown[]) => logged.push(JSON.stringify(a)),
};

beforeAll(async () => {
  redis = await TestRedis.start();
  const [upstreamPort, portA, portB] = [await freePort(), await freePort(), await freePort()];
  const resource = `http://127.0.0.1:${upstreamPort}/mcp`;
  as = await startThirdPartyAs({
    resource,
    redirectUris: [portA, portB].map((p) => `http://127.0.0.1:${p}/mrtr/connect/callback/tracker`),
  });
  const verifier = new JwtVerifier({ issuer: as.issuer, audience: resource });
  upstream = await new McpServer({
    name: 'tracker',
    version: '1.0.0',
    auth: new BearerAuth({ verifier, resource }),
    logger,
  })
    .tool({ name: 'whoami', description: 'Who the tracker sees' }, (_a, ctx) =>
      text(`tracker sees ${ctx.principal?.subject}`),
    )
    .listen({ host: '127.0.0.1', port: upstreamPort });
  upstream.server.prependListener('request', (req) => {
    const token = req.headers.authorization?.replace(/^Bearer /, '');
    if (token) void as.verify(token).then((who) => upstreamSaw.set(who.subject, token));
  });

  const config = parseGatewayConfig(
    `upstreams:
  - name: tracker
    url: ${resource}
    credentials:
      type: oauth
      issuer: ${as.issuer}
      clientId: ${as.client.id}
      clientSecret: { env: TRACKER_SECRET }
      scopes: [tickets:read, tickets:write]
rules:
  - tools: ["tracker/*"]
    roles: [staff]
`,
    'e2e.yaml',
  );
  const keyring = Keyring.fromSpec(KEYS);
  const tokens = new DevTokens(parseDevTokens(PEOPLE));
  for (const port of [portA, portB]) {
    // Each instance its own connection to the shared Redis, as two processes would have.
    const store = await RedisStore.connect(redis.url);
    const connections = new Connections({
      store,
      vault: storeVault(store, keyring),
      keyring,
      connections: connectionConfigs(config, { TRACKER_SECRET: as.client.secret }),
      pendingWaitMs: 0,
    });
    const gateway = new Gateway({
      config,
      server: {
        auth: new BearerAuth({ verifier: tokens, resource: `http://127.0.0.1:${port}/mcp` }),
        signIn: { devTokens: tokens },
        stateKeys: keyring,
        logger,
      },
      store,
      controls: { pendingWaitMs: 0 },
      pins: PinBook.inMemory(),
      connections,
    });
    connections.attach(gateway.server);
    await gateway.started;
    const endpoint = await gateway.server.listen({ host: '127.0.0.1', port });
    gateways.push({
      url: endpoint.url,
      origin: `http://127.0.0.1:${port}`,
      close: async () => {
        await endpoint.close({ graceMs: 0 });
        await gateway.close();
        await store.close();
      },
    });
  }
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  for (const g of gateways) await g.close();
  await upstream?.close({ graceMs: 0 });
  await as?.close();
  await redis?.stop();
});

const call = (on: number, who: 'alice' | 'bob', round: Loose = {}, tool = 'tracker__whoami') =>
  mcp(
    gateways[on]!.url,
    'tools/call',
    { name: tool, arguments: {}, ...round },
    { headers: { authorization: `Bearer ${who}-token` } },
  ).then((r) => {
    seen.push(JSON.stringify(r.response));
    return (r.response.result ?? { error: r.response.error }) as Loose;
  });
/** Everything the MCP client was sent. */
const seen: string[] = [];
const textOf = (result: Loose) => (result.content ?? []).map((c: Loose) => c.text).join('\n');

describe('connect your account, every part real', () => {
  it('alice connects once on instance A; her retry and her later calls run on B with her own token', async () => {
    // Nobody has connected yet, so the gateway knows none of the tracker's tools: it offers one to connect.
    const first = await call(0, 'alice', {}, 'tracker__connect');
    expect(first.resultType, JSON.stringify(first)).toBe('input_required');
    const [key, question] = Object.entries(first.inputRequests)[0] as [string, Loose];
    expect(question.params.mode).toBe('url');
    expect(question.params.message).toMatch(/Connect your tracker account/);
    const link = question.params.url as string;
    expect(link.startsWith(`${gateways[0]!.origin}/mrtr/connect/`)).toBe(true);

    // In her browser, signed in at the gateway: the link sends her to the tracker's authorization server, and it
    // sends her back to the gateway's own callback.
    const { context, page } = await signedInBrowser(browser, gateways[0]!.origin, 'alice-token');
    page.setDefaultTimeout(30_000);
    // The provider's pages import a web font: the machine has no network, and waiting for it only slows the test.
    await page.route(
      (u) => u.hostname !== '127.0.0.1',
      (route) => route.abort(),
    );
    await page.goto(link);
    expect(new URL(page.url()).origin).toBe(as.issuer);
    await page.locator('input[name=login]').fill('alice');
    await page.locator('input[name=password]').fill('any');
    await page.locator('button[type=submit]').click();
    await page.getByRole('heading', { name: 'Authorize' }).waitFor();
    await page.locator('button[type=submit]').click();
    await page.waitForURL(/\/mrtr\/connect\/callback\/tracker\?/);
    const back = new URL(page.url());
    expect(back.origin).toBe(gateways[0]!.origin);
    expect(back.searchParams.get('iss')).toBe(as.issuer);
    await page.getByText('Connected').first().waitFor();
    await context.close();

    // The retry goes to instance B, which did not run the connect flow: the vault is shared.
    const retried = await call(
      1,
      'alice',
      { requestState: first.requestState, inputResponses: { [key]: { action: 'accept' } } },
      'tracker__connect',
    );
    expect(retried.resultType, JSON.stringify(retried)).toBe('complete');
    expect(retried.isError).not.toBe(true);
    const later = await call(1, 'alice');
    expect(textOf(later)).toBe('tracker sees alice');
    const onA = await call(0, 'alice');
    expect(textOf(onA)).toBe('tracker sees alice');

    // Her own token went upstream; the client and the logs never saw it.
    const token = upstreamSaw.get('alice');
    expect(token).toBeDefined();
    for (const text of [...seen, ...logged]) expect(text).not.toContain(token);
  }, 120_000);

  it('bob is asked to connect his own account: he never gets alice’s', async () => {
    const bob = await call(1, 'bob');
    expect(bob.resultType).toBe('input_required');
    const [, question] = Object.entries(bob.inputRequests)[0] as [string, Loose];
    expect(question.params.mode).toBe('url');
    expect(upstreamSaw.has('bob')).toBe(false);
    // Alice's link is not bob's: opened by bob, it grants nothing.
    const aliceFirst = await call(0, 'alice');
    expect(textOf(aliceFirst)).toBe('tracker sees alice'); // alice is connected: no question for her
    const { context } = await signedInBrowser(browser, gateways[0]!.origin, 'bob-token');
    const cookie = (await context.cookies(gateways[0]!.origin)).map((c) => `${c.name}=${c.value}`).join('; ');
    const bobLink = question.params.url as string;
    const aliceOpensBobs = await signedInBrowser(browser, gateways[0]!.origin, 'alice-token');
    const aliceCookie = (await aliceOpensBobs.context.cookies(gateways[0]!.origin))
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');
    const refused = await fetch(bobLink, { headers: { cookie: aliceCookie }, redirect: 'manual' });
    expect(refused.status).toBe(403);
    const mine = await fetch(bobLink, { headers: { cookie }, redirect: 'manual' });
    expect(mine.status).toBe(303);
    await context.close();
    await aliceOpensBobs.context.close();
  }, 120_000);
});
