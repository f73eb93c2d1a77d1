// Token exchange (RFC 8693) against a real OpenID provider: the caller's own token is traded for one whose subject
// is the caller and whose audience is the upstream (the upstream's own verifier accepts it; the caller's token it
// refuses); exchanged tokens are kept until shortly before they expire, bounded, one exchange for concurrent asks;
// a refused exchange is a fixed sentence plus the OAuth error code, never the issuer's words or a token.
import { decodeJwt } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { AuthRefusal, BearerAuth, JwtVerifier } from '../../src/auth/index.js';
import {
  type EgressCaller,
  type EgressConfig,
  EgressRefused,
  egressFor,
  rememberingVerifier,
} from '../../src/gateway/egress/index.js';
import { type HttpEndpoint, McpServer, text } from '../../src/server/index.js';
import { KEYS } from '../auth/dev-token-server.js';
import { freePort } from '../helpers/free-port.js';
import { mcp } from '../helpers/mcp-http.js';
import { type RunningProvider, startOidcProvider, TEST_CLIENT } from '../helpers/oidc-provider.js';

const UPSTREAM = 'https://files.example/mcp';
const env = { GW_SECRET: TEST_CLIENT.secret };
let provider: RunningProvider;
let gatewayPort: number;
let gatewayUrl: string;

beforeAll(async () => {
  gatewayPort = await freePort();
  gatewayUrl = `http://127.0.0.1:${gatewayPort}/mcp`;
  provider = await startOidcProvider({
    resource: gatewayUrl,
    tokenExchange: { audiences: [UPSTREAM] },
  });
});
afterAll(() => provider.close());
afterEach(() => {
  vi.useRealTimers();
});

const config = (extra: Partial<Extract<EgressConfig, { type: 'token-exchange' }>> = {}): EgressConfig => ({
  type: 'token-exchange',
  issuer: provider.issuer,
  clientId: TEST_CLIENT.id,
  clientSecretEnv: 'GW_SECRET',
  audience: UPSTREAM,
  ...extra,
});

/** A caller as the gateway knows it: a user with a token the provider minted for the gateway. */
async function caller(user: string): Promise<Required<EgressCaller>> {
  return {
    subject: user,
    issuer: provider.issuer,
    subjectToken: await provider.accessToken({ user, audience: gatewayUrl }),
  };
}

const refusalOf = (work: Promise<unknown>) =>
  work.then(
    () => {
      throw new Error('expected a refusal');
    },
    (error: unknown) => {
      expect(error).toBeInstanceOf(EgressRefused);
      return error as EgressRefused;
    },
  );

describe('token exchange', () => {
  it("trades the caller's token for one the upstream accepts, whose subject is the caller", async () => {
    const egress = egressFor(config(), { env });
    expect(egress.perCaller).toBe(true);
    const alice = await caller('alice');
    const token = await egress.tokenFor(alice);
    expect(token).toBeTypeOf('string');
    expect(token).not.toBe(alice.subjectToken);
    expect(decodeJwt(token!)).toMatchObject({
      iss: provider.issuer,
      sub: 'alice',
      aud: UPSTREAM,
      client_id: TEST_CLIENT.id,
    });
    // What the upstream itself would check: its own audience, the issuer's keys.
    const upstream = new JwtVerifier({ issuer: provider.issuer, audience: UPSTREAM });
    expect(await upstream.verify(token!)).toMatchObject({ subject: 'alice', issuer: provider.issuer });
    // The caller's own token is the gateway's, not the upstream's: passed through, it would be refused.
    await expect(upstream.verify(alice.subjectToken)).rejects.toBeInstanceOf(AuthRefusal);
  });

  it('asks by RFC 8707 resource as well as by audience', async () => {
    const egress = egressFor(config({ audience: undefined, resource: UPSTREAM, scope: 'bugs:read' }), {
      env,
    });
    const token = await egress.tokenFor(await caller('bob'));
    expect(decodeJwt(token!)).toMatchObject({ sub: 'bob', aud: UPSTREAM, scope: 'bugs:read' });
  });

  it('exchanges once per caller token: later and concurrent asks share it', async () => {
    const egress = egressFor(config(), { env });
    const alice = await caller('alice');
    const before = provider.exchanges();
    const first = await egress.tokenFor(alice);
    expect(await egress.tokenFor(alice)).toBe(first);
    expect(provider.exchanges()).toBe(before + 1);
    const bob = await caller('bob');
    const together = await Promise.all([egress.tokenFor(bob), egress.tokenFor(bob), egress.tokenFor(bob)]);
    expect(new Set(together).size).toBe(1);
    expect(decodeJwt(together[0]!).sub).toBe('bob');
    expect(provider.exchanges()).toBe(before + 2);
  });

  it('another token of the same caller is exchanged anew', async () => {
    const egress = egressFor(config(), { env });
    const before = provider.exchanges();
    const one = await egress.tokenFor(await caller('alice'));
    const two = await egress.tokenFor(await caller('alice'));
    expect(two).not.toBe(one);
    expect(provider.exchanges()).toBe(before + 2);
  });

  it('keeps a token until 30 s before it expires', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const start = Date.now();
    const egress = egressFor(config(), { env });
    const alice = await caller('alice');
    const before = provider.exchanges();
    const first = await egress.tokenFor(alice);
    const { iat, exp } = decodeJwt(first!);
    const dropAt = start + (exp! - iat!) * 1000 - 30_000;
    vi.setSystemTime(dropAt - 1_000);
    expect(await egress.tokenFor(alice)).toBe(first);
    expect(provider.exchanges()).toBe(before + 1);
    vi.setSystemTime(dropAt + 1_000);
    const renewed = await egress.tokenFor(alice);
    expect(renewed).not.toBe(first);
    expect(decodeJwt(renewed!).sub).toBe('alice');
    expect(provider.exchanges()).toBe(before + 2);
  });

  it('keeps at most cacheSize tokens, dropping the least recently used', async () => {
    const egress = egressFor(config(), { env, cacheSize: 1 });
    const [alice, bob] = [await caller('alice'), await caller('bob')];
    const before = provider.exchanges();
    await egress.tokenFor(alice);
    await egress.tokenFor(bob);
    await egress.tokenFor(bob);
    await egress.tokenFor(alice);
    expect(provider.exchanges()).toBe(before + 3);
  });

  it("a caller's abort ends its own wait, not the exchange others share", async () => {
    const egress = egressFor(config(), { env });
    const carol = await caller('carol');
    const before = provider.exchanges();
    const gone = new AbortController();
    gone.abort(new Error('already gone'));
    await expect(egress.tokenFor(carol, gone.signal)).rejects.toThrow('already gone');
    expect(provider.exchanges()).toBe(before);
    const leaving = new AbortController();
    const left = egress.tokenFor(carol, leaving.signal);
    const stays = egress.tokenFor(carol);
    leaving.abort(new Error('caller left'));
    await expect(left).rejects.toThrow('caller left');
    expect(decodeJwt((await stays)!).sub).toBe('carol');
    expect(provider.exchanges()).toBe(before + 1);
  });
});

describe('a refused exchange', () => {
  it('says the credentials could not be obtained, with the OAuth error code and nothing of the body', async () => {
    const egress = egressFor(config(), { env });
    const bogus = { subject: 'alice', issuer: provider.issuer, subjectToken: 'not-a-token-of-this-issuer' };
    const before = provider.exchanges();
    const refused = await refusalOf(egress.tokenFor(bogus));
    expect(refused).toMatchObject({
      code: 'ERR_GATEWAY_EGRESS',
      reason: 'exchange_refused',
      oauthError: 'invalid_grant',
      message: "the upstream's credentials could not be obtained for you (the issuer answered invalid_grant)",
    });
    // The issuer's description is for the operator (in the cause), never the caller; no token anywhere.
    expect((refused.cause as Error).message).toMatch(/HTTP 400 invalid_grant/);
    expect(JSON.stringify({ m: refused.message, c: (refused.cause as Error).message })).not.toContain(
      bogus.subjectToken,
    );
    // Refusals are not kept: the next ask tries again.
    await refusalOf(egress.tokenFor(bogus));
    expect(provider.exchanges()).toBe(before + 2);
  });

  it('refuses a token meant for someone else (here: an upstream token presented as a caller token)', async () => {
    const egress = egressFor(config(), { env });
    const exchanged = await egress.tokenFor(await caller('alice'));
    const refused = await refusalOf(
      egress.tokenFor({ subject: 'alice', issuer: provider.issuer, subjectToken: exchanged! }),
    );
    expect(refused.oauthError).toBe('invalid_grant');
  });

  it('a wrong gateway client secret is invalid_client', async () => {
    const egress = egressFor(config(), { env: { GW_SECRET: 'not-the-secret' } });
    const refused = await refusalOf(egress.tokenFor(await caller('alice')));
    expect(refused).toMatchObject({ reason: 'exchange_refused', oauthError: 'invalid_client' });
  });

  it('an audience the issuer does not know is invalid_target', async () => {
    const egress = egressFor(config({ audience: 'https://unknown.example/mcp' }), { env });
    const refused = await refusalOf(egress.tokenFor(await caller('alice')));
    expect(refused).toMatchObject({ reason: 'exchange_refused', oauthError: 'invalid_target' });
  });

  it('an issuer that does not answer is issuer_unavailable, the operator told where', async () => {
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const egress = egressFor(config({ issuer: nowhere }), { env });
    const refused = await refusalOf(egress.tokenFor(await caller('alice')));
    expect(refused).toMatchObject({
      reason: 'issuer_unavailable',
      message: "the upstream's credentials could not be obtained for you",
    });
    expect((refused.cause as Error).message).toContain(`no metadata for issuer ${nowhere}`);
  });
});

describe('through the gateway seam', () => {
  let endpoint: HttpEndpoint;

  beforeAll(async () => {
    const remembering = rememberingVerifier(
      new JwtVerifier({ issuer: provider.issuer, audience: gatewayUrl }),
    );
    const egress = egressFor(config(), { env });
    endpoint = await new McpServer({
      name: 'gateway-seam',
      version: '1.0.0',
      stateKeys: KEYS,
      auth: new BearerAuth({ verifier: remembering.verifier, resource: gatewayUrl }),
      logger: { info() {}, warn() {}, error() {} } as never,
    })
      .tool(
        { name: 'upstream_identity', description: 'what the upstream would see' },
        async (_a, { principal }) => {
          const own = remembering.tokenOf(principal);
          const token = await egress.tokenFor({
            subject: principal!.subject,
            issuer: principal!.issuer,
            ...(own === undefined ? {} : { subjectToken: own }),
          });
          const { sub, aud } = decodeJwt(token!);
          return text(JSON.stringify({ sub, aud, passthrough: token === own }));
        },
      )
      .listen({ port: gatewayPort });
  });
  afterAll(() => endpoint.close());

  it("a handler exchanges its caller's token for the upstream's, never passing the caller's on", async () => {
    const alice = await caller('alice');
    const reply = await mcp(
      endpoint.url,
      'tools/call',
      { name: 'upstream_identity', arguments: {} },
      { headers: { authorization: `Bearer ${alice.subjectToken}` } },
    );
    const shown = (reply.response.result!.content as Array<{ text: string }>)[0]!.text;
    expect(JSON.parse(shown)).toEqual({ sub: 'alice', aud: UPSTREAM, passthrough: false });
    expect(JSON.stringify(reply.messages)).not.toContain(alice.subjectToken);
  });
});
