// Per-user credentials through the gateway, as an operator runs it: `mrtr gateway --issuer --audience` as a process,
// a real OpenID provider minting the callers' tokens for the gateway, and an upstream that accepts only tokens for
// its own audience. The gateway trades each caller's token at the issuer (RFC 8693) for one the upstream accepts, so
// the upstream sees the person — and never the caller's own token, which is the gateway's and must not be passed on.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BearerAuth, JwtVerifier } from '../../src/auth/index.js';
import { rememberingVerifier } from '../../src/gateway/egress/index.js';
import { type HttpEndpoint, McpServer, text } from '../../src/server/index.js';
import { freePort } from '../helpers/free-port.js';
import { mcp } from '../helpers/mcp-http.js';
import { type RunningProvider, startOidcProvider, TEST_CLIENT } from '../helpers/oidc-provider.js';
import { type ServedCli, serveCli } from '../helpers/serve-cli.js';

const KEYS = `k1:${Buffer.alloc(32, 7).toString('base64url')}`;

// biome-ignore lint/suspicious/noExplicitAny: replies are read as loose JSON, checked by the expectations
type Loose = any;

let dir: string;
let provider: RunningProvider;
let upstream: HttpEndpoint;
let gateway: ServedCli;
let gatewayAudience: string;
let upstreamAudience: string;
/** Every Authorization header the upstream received, in order. */
const upstreamSaw: Array<string | undefined> = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mrtr-gw-exchange-'));
  const [gatewayPort, upstreamPort] = [await freePort(), await freePort()];
  gatewayAudience = `http://127.0.0.1:${gatewayPort}/mcp`;
  upstreamAudience = `http://127.0.0.1:${upstreamPort}/mcp`;
  provider = await startOidcProvider({
    resource: gatewayAudience,
    // The issuer's own policy: carol may use the gateway but may not be represented at other services.
    tokenExchange: { audiences: [upstreamAudience], refuseSubjects: ['carol'] },
  });

  // The upstream: an MCP server of its own audience, which tells who called and what its token was for.
  const seen = rememberingVerifier(new JwtVerifier({ issuer: provider.issuer, audience: upstreamAudience }));
  upstream = await new McpServer({
    name: 'identity-upstream',
    version: '1.0.0',
    auth: new BearerAuth({ verifier: seen.verifier, resource: upstreamAudience }),
    logger: { info() {}, warn() {}, error() {} },
  })
    .tool(
      { name: 'whoami', description: 'Who the upstream sees, and for whom their token was' },
      (_a, ctx) => {
        const token = seen.tokenOf(ctx.principal);
        const claims = token === undefined ? {} : decodeJwt(token);
        return text(JSON.stringify({ subject: ctx.principal?.subject, audience: claims.aud }));
      },
    )
    .listen({ port: upstreamPort });
  upstream.server.prependListener('request', (req) => upstreamSaw.push(req.headers.authorization));

  writeFileSync(
    join(dir, 'gateway.yaml'),
    `upstreams:
  - name: up
    url: ${upstreamAudience}
    credentials:
      type: token-exchange
      issuer: ${provider.issuer}
      clientId: ${TEST_CLIENT.id}
      clientSecretEnv: GW_CLIENT_SECRET
      audience: ${upstreamAudience}
rules:
  - tools: ["up/*"]
    roles: ["*"]
`,
  );
  gateway = await serveCli(
    [
      '--config',
      join(dir, 'gateway.yaml'),
      '--port',
      String(gatewayPort),
      '--issuer',
      provider.issuer,
      '--audience',
      gatewayAudience,
      '--state-keys',
      KEYS,
    ],
    'gateway',
    { env: { GW_CLIENT_SECRET: TEST_CLIENT.secret } },
  );
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close({ graceMs: 0 });
  await provider?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A token the provider minted for `user`, meant for the gateway. */
const tokenFor = (user: string) => provider.accessToken({ user, audience: gatewayAudience });

const whoami = async (token: string) =>
  (
    await mcp(
      gateway.url,
      'tools/call',
      { name: 'up__whoami', arguments: {} },
      { headers: { authorization: `Bearer ${token}` } },
    )
  ).response.result as Loose;

describe('mrtr gateway with token-exchange credentials (issuer mode)', () => {
  it("lists the upstream's tools to a caller with a token for the gateway", async () => {
    const listed = await mcp(
      gateway.url,
      'tools/list',
      {},
      { headers: { authorization: `Bearer ${await tokenFor('alice')}` } },
    );
    expect((listed.response.result as Loose).tools.map((t: Loose) => t.name)).toEqual(['up__whoami']);
  });

  it('the upstream sees each caller as themselves, with a token for its own audience', async () => {
    const alice = await whoami(await tokenFor('alice'));
    expect(alice.isError).toBeUndefined();
    expect(JSON.parse(alice.content[0].text)).toEqual({ subject: 'alice', audience: upstreamAudience });
    const bob = await whoami(await tokenFor('bob'));
    expect(JSON.parse(bob.content[0].text)).toEqual({ subject: 'bob', audience: upstreamAudience });
  });

  it("never sends a caller's own token upstream", async () => {
    const tokens = [await tokenFor('alice'), await tokenFor('bob')];
    const before = upstreamSaw.length;
    for (const token of tokens) expect((await whoami(token)).isError).toBeUndefined();
    const sent = upstreamSaw.slice(before);
    expect(sent.length).toBeGreaterThanOrEqual(2);
    // Over the whole run, not only these calls: no header the upstream got is, or carries, a caller's token.
    for (const header of upstreamSaw) {
      expect(header).toMatch(/^Bearer /);
      for (const own of tokens) expect(header).not.toContain(own);
      expect(decodeJwt(header!.slice('Bearer '.length))).toMatchObject({
        iss: provider.issuer,
        aud: upstreamAudience,
        client_id: TEST_CLIENT.id,
      });
    }
    expect(new Set(sent.map((h) => decodeJwt(h!.slice(7)).sub))).toEqual(new Set(['alice', 'bob']));
  });

  it('a caller the issuer will not exchange for gets a tool error saying so; the gateway serves on', async () => {
    const exchangesBefore = provider.exchanges();
    const sentBefore = upstreamSaw.length;
    const carol = await whoami(await tokenFor('carol'));
    expect(carol.isError).toBe(true);
    expect(carol.content[0].text).toBe(
      "upstream up failed: the upstream's credentials could not be obtained for you (the issuer answered access_denied)",
    );
    expect(provider.exchanges()).toBeGreaterThan(exchangesBefore);
    // The upstream heard nothing on carol's behalf, and the gateway is still up for everyone else.
    expect(upstreamSaw.slice(sentBefore)).toEqual([]);
    const alice = await whoami(await tokenFor('alice'));
    expect(JSON.parse(alice.content[0].text).subject).toBe('alice');
  });

  it('a token for another audience is refused at the gateway, before any exchange', async () => {
    const exchangesBefore = provider.exchanges();
    const stray = await provider.accessToken({ user: 'alice', audience: upstreamAudience });
    const reply = await mcp(
      gateway.url,
      'tools/call',
      { name: 'up__whoami', arguments: {} },
      { headers: { authorization: `Bearer ${stray}` } },
    );
    expect(reply.status).toBe(401);
    expect(provider.exchanges()).toBe(exchangesBefore);
  });

  it("keeps callers' tokens out of its log", async () => {
    const token = await tokenFor('alice');
    await whoami(token);
    expect(gateway.stderr()).not.toContain(token);
    expect(gateway.stderr()).not.toContain(TEST_CLIENT.secret);
  });
});
