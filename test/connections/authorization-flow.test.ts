// The authorization flow against a real third-party authorization server (oidc-provider), a person signing in and
// consenting in headless Chromium: start → login → finish → refresh → revoke, and discovery from the resource's
// Protected Resource Metadata when no issuer is configured.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConnectionConfig, ConnectionRefused, oauthFlow } from '../../src/connections/index.js';
import { launchChromium } from '../helpers/chromium.js';
import { freePort } from '../helpers/free-port.js';
import {
  authorizeInBrowser,
  startThirdPartyAs,
  THIRD_PARTY_SCOPES,
  type ThirdPartyAs,
} from '../helpers/third-party-as.js';

let as: ThirdPartyAs;
let browser: Browser;
let resourceServer: Server;
let resource: string;
let callback: string;

beforeAll(async () => {
  // The third party's resource: it serves only its Protected Resource Metadata, at the path-aware well-known URI.
  resourceServer = createServer((req, res) => {
    if (req.url === '/.well-known/oauth-protected-resource/mcp')
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ resource, authorization_servers: [as.issuer] }));
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => resourceServer.listen(0, '127.0.0.1', resolve));
  resource = `http://127.0.0.1:${(resourceServer.address() as AddressInfo).port}/mcp`;
  // Nothing listens at the callback: authorizeInBrowser catches the browser's request to it.
  callback = `http://127.0.0.1:${await freePort()}/mrtr/connect/callback/tracker`;
  as = await startThirdPartyAs({ resource, redirectUris: [callback] });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await as?.close();
  resourceServer?.closeAllConnections();
  await new Promise((resolve) => resourceServer?.close(resolve));
});

const config = (over: Partial<ConnectionConfig> = {}): ConnectionConfig => ({
  name: 'tracker',
  issuer: as.issuer,
  resource,
  clientId: as.client.id,
  clientSecret: as.client.secret,
  scopes: [...THIRD_PARTY_SCOPES],
  ...over,
});

async function connect(flow: ReturnType<typeof oauthFlow>, user: string) {
  const { url, pending } = await flow.start(callback);
  const context = await browser.newContext();
  try {
    const back = await authorizeInBrowser(await context.newPage(), url, user);
    return { url, pending, back };
  } finally {
    await context.close();
  }
}

describe('oauthFlow against a real authorization server', () => {
  it('connects alice: code + PKCE S256 for the resource, then refresh (rotated), then revoke ends the grant', async () => {
    const now = 1_800_000_000_000;
    const flow = oauthFlow(config(), { now: () => now });
    const { url, pending, back } = await connect(flow, 'alice');
    expect(url.origin).toBe(as.issuer);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: as.client.id,
      redirect_uri: callback,
      code_challenge_method: 'S256',
      state: pending.state,
      scope: 'tickets:read tickets:write',
      resource,
    });
    expect(url.searchParams.get('code_challenge')).not.toBe(pending.codeVerifier);
    expect(pending).toMatchObject({ redirectUri: callback, issuer: as.issuer });
    // The provider says who it is in the callback (RFC 9207).
    expect(back.searchParams.get('iss')).toBe(as.issuer);

    const grant = await flow.finish(back, pending);
    expect(grant).toMatchObject({
      issuer: as.issuer,
      scopes: ['tickets:read', 'tickets:write'],
      expiresAt: now + 300_000,
    });
    expect(grant.refreshToken).toEqual(expect.any(String));
    expect(await as.verify(grant.accessToken)).toEqual({
      subject: 'alice',
      scopes: ['tickets:read', 'tickets:write'],
    });

    const refreshed = await flow.refresh(grant);
    expect(refreshed.accessToken).not.toBe(grant.accessToken);
    expect(refreshed.refreshToken).toEqual(expect.any(String));
    expect(refreshed.refreshToken).not.toBe(grant.refreshToken);
    expect((await as.verify(refreshed.accessToken)).subject).toBe('alice');

    await flow.revoke(refreshed);
    const after = await flow.refresh(refreshed).catch((e: unknown) => e);
    expect(after).toBeInstanceOf(ConnectionRefused);
    expect(after).toMatchObject({ code: 'ERR_CONNECTION_REFUSED', reason: 'invalid_grant' });
    expect((after as Error).message).not.toContain(refreshed.refreshToken);
  });

  it('finds the authorization server from the resource’s Protected Resource Metadata when no issuer is given', async () => {
    const flow = oauthFlow(config({ issuer: undefined }));
    const { url, pending, back } = await connect(flow, 'bob');
    expect(url.origin).toBe(as.issuer);
    expect(pending.issuer).toBe(as.issuer);
    const grant = await flow.finish(back, pending);
    expect(grant.issuer).toBe(as.issuer);
    expect((await as.verify(grant.accessToken)).subject).toBe('bob');
  });

  it('keeps the refresh token it has when the server sends none', async () => {
    const flow = oauthFlow(config());
    const { pending, back } = await connect(flow, 'alice');
    const grant = await flow.finish(back, pending);
    // The provider rotates; a server that does not would answer without refresh_token. Seen from a stub fetch:
    const fetchWithoutRefresh: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (!String(input instanceof Request ? input.url : input).endsWith('/token')) return response;
      const { refresh_token: _dropped, ...body } = (await response.json()) as Record<string, unknown>;
      return Response.json(body, { status: response.status, headers: { 'cache-control': 'no-store' } });
    };
    const refreshed = await oauthFlow(config(), { fetch: fetchWithoutRefresh }).refresh(grant);
    expect(refreshed.refreshToken).toBe(grant.refreshToken);
    expect((await as.verify(refreshed.accessToken)).subject).toBe('alice');
  });
});
