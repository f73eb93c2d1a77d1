// The auth room fails closed and plainly, each case staged: a bad jwks_uri that wedged discovery, a verifier's
// internal error shown to strangers, plain-http issuers off loopback, non-ASCII text that turned a 401 into a 500, a
// verifier that never answers, a verifier that returns no principal, the pages reachable under a foreign Host, a
// tokens file that is not a file, a short HMAC secret.

import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  AuthRefusal,
  BearerAuth,
  bearerChallenge,
  DevTokens,
  JwtVerifier,
  parseDevTokens,
  type TokenVerifier,
} from '../../src/auth/index.js';
import { McpServer, text } from '../../src/server/index.js';
import { mcp, rawPost } from '../helpers/mcp-http.js';
import { runCommand } from '../helpers/run-cli.js';
import { KEYS } from './dev-token-server.js';

const closers: Array<() => Promise<unknown> | undefined> = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const close of closers.splice(0)) await close();
});
const quiet = { info() {}, warn() {}, error() {} } as never;
const raw = (token: string) => ['Host', '127.0.0.1', 'authorization', `Bearer ${token}`];

/** An issuer on 127.0.0.1 whose metadata the test can change between requests. */
async function issuer(): Promise<{
  url: string;
  metadata: { jwks_uri: string };
  token: string;
  fetches: () => number;
}> {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwks = JSON.stringify({
    keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'ES256' }],
  });
  let fetches = 0;
  const state = { jwks_uri: 'not a url' };
  const server: Server = createServer((req, res) => {
    if (req.url === '/jwks') return void res.writeHead(200, { 'content-type': 'application/json' }).end(jwks);
    fetches++;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ issuer: url, ...state }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  const token = await new SignJWT({ scope: 'a' })
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .setIssuer(url)
    .setAudience('urn:mcp')
    .setSubject('alice')
    .setExpirationTime('1h')
    .sign(privateKey);
  return { url, metadata: state, token, fetches: () => fetches };
}

describe('discovery recovers from a bad jwks_uri', () => {
  for (const bad of [
    'not a url',
    'file:///etc/passwd',
    'ftp://127.0.0.1/jwks',
    'http://keys.example.com/jwks',
  ]) {
    it(`${bad}: 503 now, and once the issuer is fixed the metadata is fetched again and tokens pass`, async () => {
      const as = await issuer();
      as.metadata.jwks_uri = bad;
      const verifier = new JwtVerifier({ issuer: as.url, audience: 'urn:mcp', discoveryRetryMs: 0 });
      await expect(Promise.resolve().then(() => verifier.verify(as.token))).rejects.toMatchObject({
        status: 503,
        reason: 'issuer_metadata_unavailable',
      });
      as.metadata.jwks_uri = `${as.url}/jwks`;
      expect((await verifier.verify(as.token)).subject).toBe('alice');
      expect(as.fetches()).toBe(2);
    });
  }
});

describe('a verifier that fails, hangs or answers nonsense', () => {
  const server = (verifier: TokenVerifier) =>
    new McpServer({
      name: 'x',
      version: '1',
      stateKeys: KEYS,
      logger: quiet,
      auth: new BearerAuth({ verifier, resource: 'http://127.0.0.1:1/mcp' }),
    }).tool({ name: 't', description: 't' }, () => text('ran'));

  it('an error it throws is 503 with a fixed message: its text (internal hosts) never reaches the caller', async () => {
    for (const thrown of [new Error('connect ECONNREFUSED 10.0.0.7:5432'), 'boom', null]) {
      const endpoint = await server({
        authorizationServers: [],
        verify: () => {
          throw thrown;
        },
      }).listen({ port: 0 });
      closers.push(() => endpoint.close());
      const reply = await mcp(
        endpoint.url,
        'tools/call',
        { name: 't', arguments: {} },
        { headers: { authorization: 'Bearer x' } },
      );
      expect(reply.status).toBe(503);
      expect(reply.response.error?.message).toBe('the access token could not be checked');
      expect(JSON.stringify(reply.headers) + JSON.stringify(reply.response)).not.toMatch(/ECONNREFUSED|boom/);
    }
  });

  it('a principal without a string subject is refused (503), never handed to a handler', async () => {
    for (const bad of [
      { subject: 5 },
      { issuer: 'i', roles: [], scopes: [] },
      { subject: 'a', issuer: 'i', roles: 'admin', scopes: [] },
    ]) {
      const auth = new BearerAuth({
        verifier: { authorizationServers: [], verify: () => bad as never },
        resource: 'http://h/mcp',
      });
      expect(() => auth.authenticate(raw('x'), '/mcp')).toThrow(
        expect.objectContaining({ status: 503, reason: 'verifier_bad_principal' }),
      );
    }
  });

  it('one that never answers is 503 after verifyTimeoutMs', async () => {
    vi.useFakeTimers();
    const auth = new BearerAuth({
      verifier: { authorizationServers: [], verify: () => new Promise(() => {}) },
      resource: 'http://h/mcp',
      verifyTimeoutMs: 2_000,
    });
    const pending = auth.authenticate(raw('x'), '/mcp') as Promise<unknown>;
    const settled = pending.catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(await settled).toMatchObject({ status: 503, reason: 'verifier_timeout' });
  });
});

describe('configuration that would trust the network', () => {
  it('a plain-http issuer or JWKS off loopback is refused unless explicitly allowed', async () => {
    expect(() => new JwtVerifier({ issuer: 'http://id.example.com', audience: 'a' })).toThrow(
      'issuer http://id.example.com must be https (plain http only on loopback)',
    );
    expect(
      () =>
        new JwtVerifier({
          issuer: 'https://id.example.com',
          audience: 'a',
          jwksUri: 'http://keys.example.com/k',
        }),
    ).toThrow('jwksUri http://keys.example.com/k must be https');
    expect(
      () => new JwtVerifier({ issuer: 'http://id.example.com', audience: 'a', allowInsecureHttp: true }),
    ).not.toThrow();
    const out = await runCommand(
      process.execPath,
      ['dist/cli/main.js', 'serve', '--port', '3998', '--issuer', 'http://id.example.com'],
      {
        encoding: 'utf8',
        timeout: 25_000,
      },
    );
    expect(out.status).toBe(2);
    expect(out.stderr).toContain('must be https (plain http only on loopback)');
  });

  it('an HMAC secret shorter than 32 bytes is refused at construction', () => {
    expect(() => new JwtVerifier({ issuer: 'https://i', audience: 'a', secret: 'short' })).toThrow(
      'the shared secret is 5 bytes; HS256 needs at least 32 random bytes',
    );
    expect(() => new JwtVerifier({ issuer: 'https://i', audience: 'a', secret: new Uint8Array(0) })).toThrow(
      '0 bytes',
    );
  });

  it('a tokens file that is not a regular file is refused at once (no hang on /dev/zero)', () => {
    expect(() => DevTokens.fromFile('/dev/zero')).toThrow('tokens file /dev/zero is not a regular file');
    expect(() => DevTokens.fromFile('/tmp')).toThrow('is not a regular file');
  });
});

describe('challenges and pages', () => {
  it('non-ASCII text in a refusal is dropped from the header, so the 401 stays a 401', () => {
    const refusal = new AuthRefusal(
      'invalid_token',
      'x',
      'Unauthorized: the issuer’s key for café was not found',
    );
    const header = bearerChallenge({ resourceMetadata: undefined, scope: undefined, refusal });
    expect(header).toBe(
      `Bearer error="invalid_token", error_description="the issuer's key for caf was not found"`,
    );
    expect(() => new Headers({ 'www-authenticate': header })).not.toThrow();
  });

  it('the /mrtr/ pages obey the Host rules too (DNS rebinding cannot read the sign-in page)', async () => {
    const tokens = new DevTokens(parseDevTokens({ 'a-token': { sub: 'alice' } }));
    const endpoint = await new McpServer({
      name: 'x',
      version: '1',
      stateKeys: KEYS,
      logger: quiet,
      auth: new BearerAuth({ verifier: tokens, resource: 'http://127.0.0.1:1/mcp' }),
      signIn: { devTokens: tokens },
    })
      .tool({ name: 't', description: 't' }, () => text('t'))
      .listen({ port: 0 });
    closers.push(() => endpoint.close());
    const page = new URL('/mrtr/signin', endpoint.url).href;
    const foreign = await rawPost(page, '', { host: 'evil.example:80' }, 'GET');
    expect(foreign.status).toBe(403);
    expect(foreign.text).not.toContain('Development token');
    const own = await rawPost(page, '', {}, 'GET');
    expect(own.status).toBe(200);
    expect(own.text).toContain('Development token');
  });
});
