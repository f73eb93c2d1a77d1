// JWT access tokens from a real OpenID provider (oidc-provider on 127.0.0.1), checked on every request: tokens it
// mints authenticate; expired, wrong-audience, wrong-issuer, tampered, alg none, HS256-with-the-public-key,
// unknown-kid and revoked-key tokens are refused with 401 invalid_token; a flood of forged kids costs the issuer at
// most one JWKS fetch per cooldown; an unreachable issuer is 503, not 401.
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { BearerAuth, JwtVerifier, type JwtVerifierOptions } from '../../src/auth/index.js';
import { type HttpEndpoint, McpServer, text } from '../../src/server/index.js';
import { freePort } from '../helpers/free-port.js';
import { mcp } from '../helpers/mcp-http.js';
import { type RunningProvider, startOidcProvider, TEST_CLIENT } from '../helpers/oidc-provider.js';
import { KEYS } from './dev-token-server.js';

let provider: RunningProvider;
let resource: string;
const servers: HttpEndpoint[] = [];

/** An MCP server that trusts `provider` for `resource`, with a whoami tool. */
async function protectedServer(extra: Partial<JwtVerifierOptions> = {}, port?: number): Promise<string> {
  const listenPort = port ?? (await freePort());
  const url = port === undefined ? `http://127.0.0.1:${listenPort}/mcp` : resource;
  const auth = new BearerAuth({
    verifier: new JwtVerifier({ issuer: provider.issuer, audience: url, ...extra }),
    resource: url,
    scopesSupported: ['bugs:read'],
  });
  const server = new McpServer({
    name: 'jwt-test',
    version: '1.0.0',
    stateKeys: KEYS,
    auth,
    logger: { info() {}, warn() {}, error() {} } as never,
  }).tool({ name: 'whoami', description: 'who' }, (_a, { principal }) => text(JSON.stringify(principal)));
  const endpoint = await server.listen({ port: listenPort });
  servers.push(endpoint);
  return endpoint.url;
}

const whoami = (url: string, token: string) =>
  mcp(
    url,
    'tools/call',
    { name: 'whoami', arguments: {} },
    { headers: { authorization: `Bearer ${token}` } },
  );
const principalOf = (reply: Awaited<ReturnType<typeof whoami>>) =>
  JSON.parse((reply.response.result!.content as Array<{ text: string }>)[0]!.text);

async function providerKey(): Promise<{ key: KeyObject; kid: string }> {
  const jwk = provider.keys.private[0]! as JsonWebKey & { kid: string };
  return { key: createPrivateKey({ key: jwk as never, format: 'jwk' }), kid: jwk.kid };
}

/** A token signed with the provider's own key but claims of our choosing (to test each claim check alone). */
async function signed(
  claims: Record<string, unknown>,
  header: Record<string, unknown> = {},
): Promise<string> {
  const { key, kid } = await providerKey();
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({
    iss: provider.issuer,
    aud: resource,
    sub: 'alice',
    iat: now,
    exp: now + 300,
    ...claims,
  })
    .setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt', ...header })
    .sign(key);
}

function expectInvalidToken(reply: Awaited<ReturnType<typeof whoami>>, description: RegExp): void {
  expect(reply.status).toBe(401);
  const challenge = String(reply.headers['www-authenticate']);
  expect(challenge).toMatch(/^Bearer error="invalid_token", error_description="/);
  expect(challenge).toMatch(description);
  expect(challenge).toContain('resource_metadata="');
  expect(reply.response.result).toBeUndefined();
}

beforeAll(async () => {
  const port = await freePort();
  resource = `http://127.0.0.1:${port}/mcp`;
  provider = await startOidcProvider({ resource });
  await protectedServer({}, port);
});
afterEach(() => {
  vi.useRealTimers();
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await provider.close();
});

describe('tokens the provider mints', () => {
  it("a user's token authenticates, and the principal carries sub, iss, client id, roles and scopes", async () => {
    const token = await provider.accessToken({ user: 'alice', scope: 'bugs:read bugs:write' });
    const reply = await whoami(resource, token);
    expect(reply.status).toBe(200);
    expect(principalOf(reply)).toMatchObject({
      subject: 'alice',
      issuer: provider.issuer,
      clientId: TEST_CLIENT.id,
      roles: ['requester'],
      scopes: ['bugs:read', 'bugs:write'],
    });
  });

  it('a token from the real token endpoint (client_credentials with the resource indicator) authenticates', async () => {
    const response = await fetch(`${provider.issuer}/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${TEST_CLIENT.id}:${TEST_CLIENT.secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope: 'bugs:read' }),
    });
    expect(response.status).toBe(200);
    const { access_token } = (await response.json()) as { access_token: string };
    const reply = await whoami(resource, access_token);
    expect(principalOf(reply)).toMatchObject({
      subject: TEST_CLIENT.id,
      clientId: TEST_CLIENT.id,
      scopes: ['bugs:read'],
    });
  });

  it('a token for another resource (RFC 8707 audience) is refused', async () => {
    const token = await provider.accessToken({ user: 'alice', audience: 'http://127.0.0.1:1/other' });
    expectInvalidToken(await whoami(resource, token), /not issued for this server \(aud\)/);
  });
});

describe('tokens that are refused', () => {
  it('expired (past exp and the 5 s tolerance)', async () => {
    const token = await provider.accessToken({ user: 'alice' });
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 306_000 });
    expectInvalidToken(await whoami(resource, token), /expired/);
  });

  it('within the clock tolerance of exp is still accepted', async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = await signed({ exp: now - 2 });
    expect((await whoami(resource, token)).status).toBe(200);
  });

  it('not valid yet (nbf in the future)', async () => {
    const token = await signed({ nbf: Math.floor(Date.now() / 1000) + 120 });
    expectInvalidToken(await whoami(resource, token), /not valid yet/);
  });

  it('another issuer (iss), even with the right key', async () => {
    expectInvalidToken(await whoami(resource, await signed({ iss: 'http://127.0.0.1:1' })), /\(iss\)/);
  });

  it('no subject', async () => {
    expectInvalidToken(await whoami(resource, await signed({ sub: undefined })), /sub/);
  });

  it('tampered: one claim changed after signing', async () => {
    const token = await provider.accessToken({ user: 'alice' });
    const [h, p, s] = token.split('.');
    const claims = JSON.parse(Buffer.from(p!, 'base64url').toString());
    claims.sub = 'admin';
    const forged = `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}`;
    expectInvalidToken(await whoami(resource, forged), /signature is not valid/);
  });

  it('alg none (an unsigned token)', async () => {
    const now = Math.floor(Date.now() / 1000);
    const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const unsigned = `${part({ alg: 'none', typ: 'JWT' })}.${part({ iss: provider.issuer, aud: resource, sub: 'alice', exp: now + 60 })}.`;
    expectInvalidToken(await whoami(resource, unsigned), /algorithm/);
  });

  it('HS256 keyed with the issuer’s public key (algorithm confusion)', async () => {
    const { kid } = await providerKey();
    const publicPem = createPublicKey(
      createPrivateKey({ key: provider.keys.private[0] as never, format: 'jwk' }),
    ).export({ type: 'spki', format: 'pem' });
    const now = Math.floor(Date.now() / 1000);
    const forged = await new SignJWT({ iss: provider.issuer, aud: resource, sub: 'alice', exp: now + 60 })
      .setProtectedHeader({ alg: 'HS256', kid })
      .sign(new TextEncoder().encode(String(publicPem)));
    expectInvalidToken(await whoami(resource, forged), /algorithm this server refuses/);
  });

  it('signed by a key the issuer never published (unknown kid)', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const now = Math.floor(Date.now() / 1000);
    const forged = await new SignJWT({ iss: provider.issuer, aud: resource, sub: 'alice', exp: now + 60 })
      .setProtectedHeader({ alg: 'RS256', kid: 'forged-kid' })
      .sign(privateKey);
    expectInvalidToken(await whoami(resource, forged), /key the issuer does not publish/);
  });

  it('the JWT verifier refuses to be configured for HS* without a secret, or with none', () => {
    expect(
      () => new JwtVerifier({ issuer: provider.issuer, audience: resource, algorithms: ['HS256'] }),
    ).toThrow(/needs an explicitly configured secret/);
    expect(
      () => new JwtVerifier({ issuer: provider.issuer, audience: resource, algorithms: ['none'] }),
    ).toThrow(/"none" algorithm is never accepted/);
    expect(
      () =>
        new JwtVerifier({
          issuer: provider.issuer,
          audience: resource,
          secret: 'x'.repeat(32),
          algorithms: ['RS256'],
        }),
    ).toThrow(/only HS256/);
  });
});

describe('keys', () => {
  it('a flood of forged kids makes the server fetch the JWKS at most once per cooldown', async () => {
    const url = await protectedServer();
    await whoami(url, await provider.accessToken({ user: 'alice', audience: url }));
    const before = provider.jwksFetches();
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const now = Math.floor(Date.now() / 1000);
    const replies = await Promise.all(
      Array.from({ length: 50 }, async (_, i) =>
        whoami(
          url,
          await new SignJWT({ iss: provider.issuer, aud: url, sub: 'mallory', exp: now + 60 })
            .setProtectedHeader({ alg: 'ES256', kid: `forged-${i}` })
            .sign(privateKey),
        ),
      ),
    );
    expect(replies.every((r) => r.status === 401)).toBe(true);
    expect(provider.jwksFetches() - before).toBeLessThanOrEqual(1);
  });

  it('a key the issuer stops publishing (revoked) is refused once the cached JWKS is older than its max age', async () => {
    // The provider rotates: it restarts on the same address with a new key only.
    const rotatedPort = await freePort();
    const rotatingResource = `http://127.0.0.1:${rotatedPort}/mcp`;
    const first = await startOidcProvider({ resource: rotatingResource });
    const issuerPort = Number(new URL(first.issuer).port);
    const verifier = new JwtVerifier({
      issuer: first.issuer,
      audience: rotatingResource,
      jwksCacheMaxAgeMs: 60_000,
      verifiedTokenCacheMs: 0,
    });
    try {
      const oldToken = await first.accessToken({ user: 'alice' });
      expect((await verifier.verify(oldToken)).subject).toBe('alice');
      await first.close();
      const second = await startOidcProvider({ resource: rotatingResource, port: issuerPort });
      try {
        // Until the cached JWKS is older than its max age, the removed key still verifies: that is the window.
        expect((await verifier.verify(oldToken)).subject).toBe('alice');
        vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 61_000 });
        // Then the JWKS is fetched again: a token under the removed key fails; one under the new key works.
        await expect(verifier.verify(oldToken)).rejects.toMatchObject({ status: 401 });
        vi.useRealTimers();
        const fresh = await second.accessToken({ user: 'alice' });
        expect((await verifier.verify(fresh)).subject).toBe('alice');
      } finally {
        await second.close();
      }
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('an issuer that cannot be reached', () => {
  it('is 503 with Retry-After (the token is not the problem), and the metadata is not asked again at once', async () => {
    const deadPort = await freePort();
    const verifier = new JwtVerifier({ issuer: `http://127.0.0.1:${deadPort}`, audience: resource });
    const first = verifier.verify('a.b.c');
    await expect(first).rejects.toMatchObject({ status: 503, reason: 'issuer_metadata_unavailable' });
    await expect(verifier.verify('a.b.c')).rejects.toMatchObject({ status: 503 });
    // Over HTTP: 503 with Retry-After.
    const port = await freePort();
    const server = new McpServer({
      name: 'dead-issuer',
      version: '1',
      stateKeys: KEYS,
      logger: { info() {}, warn() {}, error() {} } as never,
      auth: new BearerAuth({ verifier, resource: `http://127.0.0.1:${port}/mcp` }),
    }).tool({ name: 'x', description: 'x' }, () => text('x'));
    const endpoint = await server.listen({ port });
    servers.push(endpoint);
    const reply = await whoami(endpoint.url, 'a.b.c');
    expect(reply.status).toBe(503);
    expect(reply.headers['retry-after']).toBe('5');
  });
});
