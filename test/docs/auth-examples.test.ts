// The examples of docs/auth.md do what the page says: the tokens-file server answers 401 without a token and names
// its caller with one; the OIDC server accepts the provider's tokens, and asks for bugs:write before close_bug runs.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpEndpoint } from '../../src/server/index.js';
import { generateKeySpec } from '../../src/state/index.js';
import { freePort } from '../helpers/free-port.js';
import { accept, mcp } from '../helpers/mcp-http.js';
import { type RunningProvider, startOidcProvider, TEST_CLIENT } from '../helpers/oidc-provider.js';

const dir = mkdtempSync(join(tmpdir(), 'mrtr-auth-docs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
const textOf = (reply: Awaited<ReturnType<typeof mcp>>) =>
  (reply.response.result?.content as Array<{ text: string }> | undefined)?.[0]?.text;

describe('docs/auth.md: a server behind a tokens file (examples/auth-tokens-file.ts)', () => {
  let endpoint: HttpEndpoint;
  beforeAll(async () => {
    const file = join(dir, 'tokens.json');
    writeFileSync(
      file,
      JSON.stringify({
        'alice-dev-token': { sub: 'alice', name: 'Alice', roles: ['requester'], scopes: ['bugs:read'] },
        'bob-dev-token': { sub: 'bob', name: 'Bob' },
      }),
    );
    process.env.TOKENS_FILE = file;
    process.env.PORT = String(await freePort());
    process.env.MRTR_STATE_KEYS = generateKeySpec();
    ({ endpoint } = await import('../../examples/auth-tokens-file.js'));
  });
  afterAll(() => endpoint?.close());

  it('401 with the challenge without a token; the caller named with one; 403 without the scope', async () => {
    const none = await mcp(endpoint.url, 'tools/call', { name: 'whoami', arguments: {} });
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toContain('resource_metadata="http://127.0.0.1:');
    const alice = await mcp(
      endpoint.url,
      'tools/call',
      { name: 'whoami', arguments: {} },
      bearer('alice-dev-token'),
    );
    expect(textOf(alice)).toBe('Alice (alice), roles: requester');
    const bob = await mcp(
      endpoint.url,
      'tools/call',
      { name: 'whoami', arguments: {} },
      bearer('bob-dev-token'),
    );
    expect(bob.status).toBe(403);
  });

  it('offers development sign-in at /mrtr/signin', async () => {
    const page = await fetch(new URL('/mrtr/signin', endpoint.url));
    const html = await page.text();
    expect(html).toContain('Development sign-in');
    expect(html).toContain('<label for="token">Development token</label>');
  });
});

describe('docs/auth.md: a server protected by an OIDC issuer (examples/auth-oidc.ts)', () => {
  let endpoint: HttpEndpoint;
  let provider: RunningProvider;
  beforeAll(async () => {
    const port = await freePort();
    const resource = `http://127.0.0.1:${port}/mcp`;
    provider = await startOidcProvider({
      resource,
      redirectUris: [`http://127.0.0.1:${port}/mrtr/callback`],
    });
    process.env.MCP_URL = resource;
    process.env.OIDC_ISSUER = provider.issuer;
    process.env.OIDC_CLIENT_ID = TEST_CLIENT.id;
    process.env.OIDC_CLIENT_SECRET = TEST_CLIENT.secret;
    process.env.MRTR_STATE_KEYS = generateKeySpec();
    const { server } = await import('../../examples/auth-oidc.js');
    endpoint = await server.listen({ port });
  });
  afterAll(async () => {
    await endpoint?.close();
    await provider?.close();
  });

  it('a token with bugs:read counts bugs; close_bug asks for bugs:write, then runs for a token that has it', async () => {
    const reader = await provider.accessToken({ user: 'alice', scope: 'bugs:read' });
    expect(
      textOf(await mcp(endpoint.url, 'tools/call', { name: 'count_bugs', arguments: {} }, bearer(reader))),
    ).toBe('12 open bugs');
    const refused = await mcp(
      endpoint.url,
      'tools/call',
      { name: 'close_bug', arguments: { id: 3 } },
      bearer(reader),
    );
    expect(refused.status).toBe(403);
    expect(refused.headers['www-authenticate']).toContain('error="insufficient_scope"');
    expect(refused.headers['www-authenticate']).toContain('scope="bugs:write"');
    const writer = await provider.accessToken({ user: 'alice', scope: 'bugs:read bugs:write' });
    const first = await mcp(
      endpoint.url,
      'tools/call',
      { name: 'close_bug', arguments: { id: 3 } },
      bearer(writer),
    );
    const done = await mcp(
      endpoint.url,
      'tools/call',
      {
        name: 'close_bug',
        arguments: { id: 3 },
        requestState: first.response.result!.requestState,
        inputResponses: { confirm: accept({ confirm: true }) },
      },
      bearer(writer),
    );
    expect(textOf(done)).toBe('Bug 3 closed by alice');
  });

  it('serves its metadata naming the issuer, and sends people to the issuer to sign in', async () => {
    const metadata = await (
      await fetch(new URL('/.well-known/oauth-protected-resource/mcp', endpoint.url))
    ).json();
    expect(metadata).toMatchObject({
      authorization_servers: [provider.issuer],
      scopes_supported: ['bugs:read'],
    });
    const start = await fetch(new URL('/mrtr/signin/oidc', endpoint.url), { redirect: 'manual' });
    expect(start.status).toBe(303);
    const location = new URL(start.headers.get('location')!);
    expect(location.origin).toBe(provider.issuer);
    expect(location.searchParams.get('code_challenge_method')).toBe('S256');
  });
});
