// The authorization flow's safety rules, one test each: a callback that is not this request's (state, iss, redirect
// URI, replayed code, another verifier) is refused before or at the token endpoint; an authorization server that
// denies says so plainly; only https or loopback, bounded documents and time, S256 or nothing; no secret in messages.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConnectionConfig,
  ConnectionRefused,
  ConnectionsUsageError,
  oauthFlow,
  type PendingAuthorization,
} from '../../src/connections/index.js';
import { launchChromium } from '../helpers/chromium.js';
import { freePort } from '../helpers/free-port.js';
import {
  authorizeInBrowser,
  startThirdPartyAs,
  THIRD_PARTY_SCOPES,
  type ThirdPartyAs,
} from '../helpers/third-party-as.js';

const RESOURCE = 'http://127.0.0.1:9/mcp';
let as: ThirdPartyAs;
let browser: Browser;
let callback: string;

beforeAll(async () => {
  callback = `http://127.0.0.1:${await freePort()}/mrtr/connect/callback/tracker`;
  as = await startThirdPartyAs({ resource: RESOURCE, redirectUris: [callback] });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await as?.close();
});

const config = (over: Partial<ConnectionConfig> = {}): ConnectionConfig => ({
  name: 'tracker',
  issuer: as.issuer,
  resource: RESOURCE,
  clientId: as.client.id,
  clientSecret: as.client.secret,
  scopes: [...THIRD_PARTY_SCOPES],
  ...over,
});

/** A fetch that counts what reaches the token endpoint: a refused callback must send its code nowhere. */
function countingFetch() {
  const seen = { token: 0 };
  const counted: typeof fetch = (input, init) => {
    if (String(input instanceof Request ? input.url : input).endsWith('/token')) seen.token++;
    return fetch(input, init);
  };
  return { seen, fetch: counted };
}

const refusal = (work: Promise<unknown>) =>
  work.then(
    () => expect.fail('should refuse'),
    (e: unknown) => e as Error,
  );

async function throughBrowser(flow: ReturnType<typeof oauthFlow>, user: string, deny = false) {
  const { url, pending } = await flow.start(callback);
  const context = await browser.newContext();
  try {
    return { pending, back: await authorizeInBrowser(await context.newPage(), url, user, { deny }) };
  } finally {
    await context.close();
  }
}

/** A callback as the provider would send it, with `over` changed (null removes a parameter). */
function forged(pending: PendingAuthorization, over: Record<string, string | null> = {}, at = callback): URL {
  const url = new URL(at);
  const params: Record<string, string | null> = {
    code: 'a-code',
    state: pending.state,
    iss: as.issuer,
    ...over,
  };
  for (const [k, v] of Object.entries(params)) if (v !== null) url.searchParams.set(k, v);
  return url;
}

describe('a callback that is not this request’s is refused before its code goes anywhere', () => {
  for (const [rule, change] of [
    ['another state', (p: PendingAuthorization) => forged(p, { state: 'not-the-state' })],
    ['no state', (p: PendingAuthorization) => forged(p, { state: null })],
    [
      'no iss from a server that says it sends one (RFC 9207)',
      (p: PendingAuthorization) => forged(p, { iss: null }),
    ],
    ['another iss', (p: PendingAuthorization) => forged(p, { iss: 'http://127.0.0.1:1' })],
    [
      'an iss normalised differently (no folding)',
      (p: PendingAuthorization) => forged(p, { iss: `${as.issuer}/` }),
    ],
    [
      'another redirect path',
      (p: PendingAuthorization) => forged(p, {}, callback.replace('/callback', '/other')),
    ],
    ['another redirect port', (p: PendingAuthorization) => forged(p, {}, callback.replace(/:\d+\//, ':1/'))],
  ] as const) {
    it(`${rule} → mismatch`, async () => {
      const { seen, fetch } = countingFetch();
      const flow = oauthFlow(config(), { fetch });
      const { pending } = await flow.start(callback);
      const error = await refusal(flow.finish(change(pending), pending));
      expect(error).toBeInstanceOf(ConnectionRefused);
      expect(error).toMatchObject({ reason: 'mismatch' });
      expect(seen.token).toBe(0);
    });
  }

  it('a pending authorization made for another authorization server → mismatch', async () => {
    const flow = oauthFlow(config());
    const { pending } = await flow.start(callback);
    const other = { ...pending, issuer: 'http://127.0.0.1:1' };
    expect(await refusal(flow.finish(forged(pending), other))).toMatchObject({ reason: 'mismatch' });
  });
});

describe('codes and consent at the real authorization server', () => {
  it('a code used once is refused the second time (replay) → mismatch', async () => {
    const flow = oauthFlow(config());
    const { pending, back } = await throughBrowser(flow, 'alice');
    const grant = await flow.finish(back, pending);
    expect((await as.verify(grant.accessToken)).subject).toBe('alice');
    const again = await refusal(flow.finish(back, pending));
    expect(again).toMatchObject({ code: 'ERR_CONNECTION_REFUSED', reason: 'mismatch' });
    expect(again.message).toContain('invalid_grant');
    expect(again.message).not.toContain(back.searchParams.get('code')!);
  });

  it('a code traded with another PKCE verifier → mismatch', async () => {
    const flow = oauthFlow(config());
    const { pending, back } = await throughBrowser(flow, 'bob');
    const stolen = { ...pending, codeVerifier: `${pending.codeVerifier.slice(1)}x` };
    expect(await refusal(flow.finish(back, stolen))).toMatchObject({ reason: 'mismatch' });
  });

  it('the person presses Cancel: access_denied → denied, with the server’s words', async () => {
    const flow = oauthFlow(config());
    const { pending, back } = await throughBrowser(flow, 'alice', true);
    const error = await refusal(flow.finish(back, pending));
    expect(error).toMatchObject({ reason: 'denied' });
    expect(error.message).toBe(
      `${as.issuer} refused the authorization: access_denied (End-User aborted interaction)`,
    );
  });
});

// ---- A hand-made authorization server for the rules a real one does not break.

let fake: Server | undefined;
afterEach(async () => {
  const server = fake;
  fake = undefined;
  if (!server) return;
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

type Handler = (req: IncomingMessage, res: ServerResponse, origin: string) => void;

async function fakeAs(handle: Handler): Promise<string> {
  let origin = '';
  fake = createServer((req, res) => handle(req, res, origin));
  await new Promise<void>((resolve) => fake!.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
  return origin;
}

const metadata = (origin: string, over: Record<string, unknown> = {}) => ({
  issuer: origin,
  authorization_endpoint: `${origin}/authorize`,
  token_endpoint: `${origin}/token`,
  code_challenge_methods_supported: ['S256'],
  ...over,
});

const json = (res: ServerResponse, body: unknown, status = 200) =>
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

/** An AS serving `meta` at its RFC 8414 URI, and `token` (the request's headers and body) at its token endpoint. */
function serving(
  meta: (origin: string) => Record<string, unknown>,
  token?: (req: IncomingMessage, body: string, res: ServerResponse) => void,
): Handler {
  return (req, res, origin) => {
    if (req.url === '/.well-known/oauth-authorization-server') return json(res, meta(origin));
    if (req.url === '/token' && token) {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c;
      });
      req.on('end', () => token(req, body, res));
      return;
    }
    res.writeHead(404).end();
  };
}

const fakeConfig = (issuer: string, over: Partial<ConnectionConfig> = {}): ConnectionConfig => ({
  name: 'fake',
  issuer,
  clientId: 'client-1',
  clientSecret: 'the-client-secret',
  scopes: ['read'],
  ...over,
});

const bearer = { access_token: 'at-1', token_type: 'Bearer', expires_in: 60 };

describe('RFC 9207 when the server does not say it sends iss', () => {
  it('no iss: proceeds; an iss that is not the issuer: mismatch', async () => {
    const issuer = await fakeAs(
      serving(
        (o) => metadata(o),
        (_req, _body, res) => json(res, bearer),
      ),
    );
    const flow = oauthFlow(fakeConfig(issuer));
    const { pending } = await flow.start(callback);
    const at = new URL(callback);
    at.search = new URLSearchParams({ code: 'c', state: pending.state }).toString();
    expect(await flow.finish(at, pending)).toMatchObject({ accessToken: 'at-1', scopes: ['read'], issuer });
    at.searchParams.set('iss', 'http://127.0.0.1:1');
    expect(await refusal(flow.finish(at, pending))).toMatchObject({ reason: 'mismatch' });
  });
});

describe('the authorization server’s error, said plainly and safely', () => {
  it('error_description is one clean line, clipped', async () => {
    const issuer = await fakeAs(serving((o) => metadata(o)));
    const flow = oauthFlow(fakeConfig(issuer));
    const { pending } = await flow.start(callback);
    const at = new URL(callback);
    at.search = new URLSearchParams({
      error: 'access_denied',
      error_description: `no\u001b[31m\nway\u202e ${'x'.repeat(500)}`,
      state: pending.state,
    }).toString();
    const error = await refusal(flow.finish(at, pending));
    expect(error).toMatchObject({ reason: 'denied' });
    expect(error.message).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+ refused the authorization: access_denied \(no way x+…\)$/,
    );
    expect(error.message.length).toBeLessThan(300);
  });

  it('a token endpoint that echoes the refresh token: invalid_grant, and the token is not in the message', async () => {
    const refreshToken = 'rt-very-secret-value';
    const issuer = await fakeAs(
      serving(
        (o) => metadata(o),
        (_req, _body, res) =>
          json(
            res,
            { error: 'invalid_grant', error_description: `refresh token ${refreshToken} was revoked` },
            400,
          ),
      ),
    );
    const error = await refusal(
      oauthFlow(fakeConfig(issuer)).refresh({ accessToken: 'at', refreshToken, scopes: ['read'], issuer }),
    );
    expect(error).toMatchObject({ reason: 'invalid_grant' });
    expect(error.message).toContain('refresh token [redacted] was revoked');
    expect(error.message).not.toContain(refreshToken);
  });
});

describe('https, or http on this machine only', () => {
  it('refuses at construction an http issuer or resource off this machine, and other schemes', () => {
    for (const over of [
      { issuer: 'http://as.example.com' },
      { issuer: undefined, resource: 'http://api.example.com/mcp' },
      { issuer: 'javascript:alert(1)' },
      { issuer: 'not a url' },
      { issuer: undefined, resource: undefined },
      { clientId: '' },
    ])
      expect(() => oauthFlow(fakeConfig('https://as.example.com', over))).toThrow(ConnectionsUsageError);
    expect(() => oauthFlow(fakeConfig('http://as.example.com'))).toThrow(
      /issuer of connection "fake" http:\/\/as\.example\.com\/ is plain http on a host that is not this machine/,
    );
    expect(() => oauthFlow(fakeConfig('https://as.example.com'))).not.toThrow();
  });

  it('refuses http on loopback too when allowHttpLoopback is false', () => {
    expect(() => oauthFlow(fakeConfig('http://127.0.0.1:1'), { allowHttpLoopback: false })).toThrow(
      ConnectionsUsageError,
    );
  });

  it('an endpoint the metadata names on plain http off this machine is never used', async () => {
    const issuer = await fakeAs(
      serving((o) => metadata(o, { authorization_endpoint: 'http://as.example.com/authorize' })),
    );
    const error = await refusal(oauthFlow(fakeConfig(issuer)).start(callback));
    expect(error).toMatchObject({ reason: 'unavailable' });
    expect(error.message).toContain('authorization_endpoint');
  });
});

describe('bounded documents and time', () => {
  it('metadata larger than maxDocumentBytes → unavailable', async () => {
    const issuer = await fakeAs(serving((o) => metadata(o, { padding: 'x'.repeat(4096) })));
    const error = await refusal(oauthFlow(fakeConfig(issuer), { maxDocumentBytes: 1024 }).start(callback));
    expect(error).toMatchObject({ reason: 'unavailable' });
    expect(error.message).toContain('larger than 1024 bytes');
  });

  it('an authorization server that never answers: unavailable after timeoutMs', async () => {
    const held: ServerResponse[] = [];
    const issuer = await fakeAs((_req, res) => {
      held.push(res);
    });
    const error = await refusal(oauthFlow(fakeConfig(issuer), { timeoutMs: 100 }).start(callback));
    expect(error).toMatchObject({ reason: 'unavailable' });
    expect(error.message).toBe(`the authorization server ${issuer}/ did not answer within 100 ms`);
    expect(held).toHaveLength(1);
  });

  it('the caller’s own abort ends it with the caller’s reason', async () => {
    const issuer = await fakeAs(() => {});
    const stop = new AbortController();
    const started = oauthFlow(fakeConfig(issuer)).start(callback, stop.signal);
    const reason = new Error('the person went away');
    stop.abort(reason);
    expect(await refusal(started)).toBe(reason);
  });
});

describe('what the authorization server must offer or be', () => {
  for (const methods of [['plain'], undefined]) {
    it(`code_challenge_methods_supported ${JSON.stringify(methods)}: no S256, not used`, async () => {
      const issuer = await fakeAs(serving((o) => metadata(o, { code_challenge_methods_supported: methods })));
      const error = await refusal(oauthFlow(fakeConfig(issuer)).start(callback));
      expect(error).toMatchObject({ reason: 'unavailable' });
      expect(error.message).toContain('does not offer PKCE with S256');
    });
  }

  it('metadata naming another issuer → mismatch', async () => {
    const issuer = await fakeAs(serving(() => metadata('https://honest.example')));
    expect(await refusal(oauthFlow(fakeConfig(issuer)).start(callback))).toMatchObject({
      reason: 'mismatch',
    });
  });

  it('protected resource metadata for another resource → mismatch', async () => {
    const origin = await fakeAs((req, res, o) =>
      req.url === '/.well-known/oauth-protected-resource/mcp'
        ? json(res, { resource: 'https://elsewhere.example/mcp', authorization_servers: [o] })
        : res.writeHead(404).end(),
    );
    const flow = oauthFlow(fakeConfig('', { issuer: undefined, resource: `${origin}/mcp` }));
    expect(await refusal(flow.start(callback))).toMatchObject({ reason: 'mismatch' });
  });

  it('an answer that is not OAuth → unavailable', async () => {
    const issuer = await fakeAs((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html>'),
    );
    expect(await refusal(oauthFlow(fakeConfig(issuer)).start(callback))).toMatchObject({
      reason: 'unavailable',
    });
  });
});

describe('client authentication and revocation', () => {
  async function tokenRequest(over: Partial<ConnectionConfig>, meta: Record<string, unknown>) {
    let seen: { authorization?: string; body: URLSearchParams } | undefined;
    const issuer = await fakeAs(
      serving(
        (o) => metadata(o, meta),
        (req, body, res) => {
          seen = { authorization: req.headers.authorization, body: new URLSearchParams(body) };
          json(res, { ...bearer, refresh_token: 'rt-2', scope: 'read' });
        },
      ),
    );
    const flow = oauthFlow(fakeConfig(issuer, { resource: 'https://api.example.com/mcp', ...over }));
    const grant = await flow.refresh({ accessToken: 'at', refreshToken: 'rt-1', scopes: ['read'], issuer });
    return { grant, seen: seen! };
  }

  it('client_secret_basic by default, with the resource indicator', async () => {
    const { grant, seen } = await tokenRequest({}, {});
    expect(seen.authorization).toBe(`Basic ${Buffer.from('client-1:the-client-secret').toString('base64')}`);
    expect(Object.fromEntries(seen.body)).toMatchObject({
      grant_type: 'refresh_token',
      refresh_token: 'rt-1',
      resource: 'https://api.example.com/mcp',
    });
    expect(grant).toMatchObject({ accessToken: 'at-1', refreshToken: 'rt-2', scopes: ['read'] });
  });

  it('client_secret_post when the server lists only post', async () => {
    const { seen } = await tokenRequest(
      {},
      { token_endpoint_auth_methods_supported: ['client_secret_post'] },
    );
    expect(seen.authorization).toBeUndefined();
    expect(seen.body.get('client_secret')).toBe('the-client-secret');
  });

  it('none for a public client', async () => {
    const { seen } = await tokenRequest({ clientSecret: undefined }, {});
    expect(seen.authorization).toBeUndefined();
    expect(seen.body.get('client_id')).toBe('client-1');
    expect(seen.body.has('client_secret')).toBe(false);
  });

  it('revoke sends nothing to a server that did not issue the grant (metadata now naming another)', async () => {
    const asked: string[] = [];
    const issuer = await fakeAs((req, res, o) => {
      asked.push(req.url ?? '');
      serving((origin) => metadata(origin, { revocation_endpoint: `${origin}/revoke` }))(req, res, o);
    });
    const grant = { accessToken: 'at', refreshToken: 'rt', scopes: [], issuer: 'https://honest.example.com' };
    await oauthFlow(fakeConfig(issuer)).revoke(grant);
    expect(asked).toEqual(['/.well-known/oauth-authorization-server']);
  });

  it('revoke is silent, and asks nothing, where the server offers no revocation', async () => {
    const asked: string[] = [];
    const issuer = await fakeAs((req, res, o) => {
      asked.push(req.url ?? '');
      serving((origin) => metadata(origin))(req, res, o);
    });
    await oauthFlow(fakeConfig(issuer)).revoke({ accessToken: 'at', refreshToken: 'rt', scopes: [], issuer });
    expect(asked).toEqual(['/.well-known/oauth-authorization-server']);
  });
});
