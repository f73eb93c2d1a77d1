// The authorization server mix-up (RFC 9700 §4.4): a server with two connections, one of whose authorization
// servers is hostile. Asked to connect the hostile one, it forwards the person's browser to the honest one with our
// state and PKCE challenge; the honest one sends no `iss`, and its code comes back to us. With one shared redirect
// URI that code and our verifier went to the hostile token endpoint. Each connection's own redirect URI stops it.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BearerAuth, DevTokens, parseDevTokens } from '../../src/auth/index.js';
import { Connections, storeVault } from '../../src/connections/index.js';
import { McpServer, text } from '../../src/server/index.js';
import { generateKeySpec, Keyring } from '../../src/state/index.js';
import { MemoryStore } from '../../src/stores/index.js';
import { PEOPLE } from '../controls/fixture.js';
import { freePort } from '../helpers/free-port.js';
import { mcp } from '../helpers/mcp-http.js';
import { getPage, sessionCookie } from '../helpers/page-sessions.js';

// biome-ignore lint/suspicious/noExplicitAny: replies are read as loose JSON, checked by the expectations
type Loose = any;

/** A bare authorization server on 127.0.0.1: its metadata, and what its token endpoint was sent. */
async function authorizationServer(
  authorize: (query: URLSearchParams, res: ServerResponse) => void,
): Promise<{ issuer: string; tokenRequests: string[] }> {
  const seen: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', issuer);
    if (url.pathname === '/.well-known/oauth-authorization-server') {
      res.writeHead(200, { 'content-type': 'application/json' });
      // No authorization_response_iss_parameter_supported: a client cannot require `iss` of it.
      res.end(
        JSON.stringify({
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          code_challenge_methods_supported: ['S256'],
          response_types_supported: ['code'],
        }),
      );
    } else if (url.pathname === '/authorize') authorize(url.searchParams, res);
    else if (url.pathname === '/token') {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push(body);
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'invalid_grant' }));
      });
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { issuer, tokenRequests: seen };
}

const redirect = (res: ServerResponse, to: URL) => {
  res.writeHead(302, { location: to.href });
  res.end();
};

describe('an authorization server mix-up through the redirect URI', () => {
  it('the honest server’s code, sent back on its own connection’s URI for a request of the hostile one, goes to no token endpoint and ends the call', async () => {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    // The honest server: the person is signed in there already; it answers with a code, and no `iss`.
    const honest = await authorizationServer((q, res) => {
      const back = new URL(q.get('redirect_uri') ?? '');
      back.searchParams.set('code', 'honest-code-for-alice');
      back.searchParams.set('state', q.get('state') ?? '');
      redirect(res, back);
    });
    // The hostile server: our request, state and PKCE challenge kept, sent on to the honest server as if the server
    // had asked it, back to the redirect URI the server registered there (public knowledge).
    const hostile = await authorizationServer((q, res) => {
      const forwarded = new URL(`${honest.issuer}/authorize`);
      for (const [k, v] of q) forwarded.searchParams.set(k, v);
      forwarded.searchParams.set('client_id', 'server-at-honest');
      forwarded.searchParams.set(
        'redirect_uri',
        (q.get('redirect_uri') ?? '').replace(/\/evil$/, '/tracker'),
      );
      redirect(res, forwarded);
    });

    const tokens = new DevTokens(parseDevTokens(PEOPLE));
    const stateKeys = generateKeySpec();
    const server = new McpServer({
      name: 'mixup',
      version: '1.0.0',
      state: { keys: stateKeys },
      auth: new BearerAuth({ verifier: tokens, resource: `${origin}/mcp` }),
      signIn: { devTokens: tokens },
    });
    const store = new MemoryStore();
    const keyring = Keyring.fromSpec(stateKeys);
    const vault = storeVault(store, keyring);
    const events: string[] = [];
    const connections = new Connections({
      store,
      vault,
      keyring,
      pendingWaitMs: 0,
      onEvent: (e) => events.push(`${e.action} ${e.connection} ${e.detail?.reason ?? ''}`.trim()),
      connections: [
        {
          name: 'tracker',
          label: 'Tracker',
          issuer: honest.issuer,
          clientId: 'server-at-honest',
          scopes: [],
        },
        { name: 'evil', label: 'Evil', issuer: hostile.issuer, clientId: 'server-at-evil', scopes: [] },
      ],
    }).attach(server);
    server.tool(
      { name: 'evil_thing', description: 'Uses the evil connection', maxRounds: 10 },
      async (_a, ctx) => text(await connections.token(ctx, 'evil')),
    );
    const endpoint = await server.http({ port }).listen();
    onTestFinished(async () => {
      await endpoint.close();
      await store.close();
    });
    const call = (round: Record<string, unknown> = {}) =>
      mcp(
        endpoint.url,
        'tools/call',
        { name: 'evil_thing', arguments: {}, ...round },
        { headers: { authorization: 'Bearer alice-token' } },
      ).then((r) => r.response.result as Loose);

    const first = await call();
    const link = first.inputRequests.connect_evil.params.url as string;
    const alice = await sessionCookie(origin, 'alice-token');
    const started = await fetch(link, { headers: { cookie: alice }, redirect: 'manual' });
    expect(new URL(started.headers.get('location')!).searchParams.get('redirect_uri')).toBe(
      `${origin}/mrtr/connect/callback/evil`,
    );
    const atHostile = await fetch(started.headers.get('location')!, { redirect: 'manual' });
    const atHonest = await fetch(atHostile.headers.get('location')!, { redirect: 'manual' });
    const callback = atHonest.headers.get('location')!;
    expect(callback).toContain('code=honest-code-for-alice');

    const page = await getPage(callback, alice);
    // The honest code and the verifier went nowhere: not to the hostile token endpoint, not to the honest one.
    expect(hostile.tokenRequests).toEqual([]);
    expect(honest.tokenRequests).toEqual([]);
    expect(page.status).toBe(400);
    expect(page.html).toContain(
      'This answer came back to the Tracker address, but the request was for your Evil account',
    );
    expect(await vault.counts()).toEqual({});
    expect(events).toContain('refused evil mismatch');

    // The call ends, saying why: never another question.
    const retried = await call({
      requestState: first.requestState,
      inputResponses: { connect_evil: { action: 'accept' } },
    });
    expect(retried.isError).toBe(true);
    expect(retried.content[0].text).toContain('came back on the redirect URI of "tracker"');
  });
});
