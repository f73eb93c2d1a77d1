// The gateway demo's tracker and its authorization server keep the OAuth rules a real third party keeps: PKCE S256,
// one use per code, `iss` on the way back, rotating refresh tokens, revocation, no redirect to an unknown URI. The
// tracker's MCP endpoint takes only tokens its own server issued.
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningTracker, startTracker, TRACKER_CLIENT_ID } from '../../src/cli/demo-servers/tracker.js';
import { McpClient } from '../../src/client/index.js';
import { freePort } from '../helpers/free-port.js';

const REDIRECT = 'http://127.0.0.1:9/mrtr/connect/callback/tracker';
let tracker: RunningTracker;

beforeAll(async () => {
  tracker = await startTracker(await freePort(), REDIRECT);
});
afterAll(() => tracker?.endpoint.close());

const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
  redirect: 'manual' as const,
});

/** Walk the consent page as `user` (or deny with ''), returning where the browser is sent back to. */
async function authorize(user: string, challenge: string, state = 's1'): Promise<URL> {
  const url = new URL(`${tracker.issuer}/authorize`);
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id: TRACKER_CLIENT_ID,
    redirect_uri: REDIRECT,
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    scope: 'tickets:read tickets:write',
  }))
    url.searchParams.set(k, v);
  const page = await (await fetch(url)).text();
  const request = /name="request" value="([^"]+)"/.exec(page)?.[1];
  expect(request).toBeDefined();
  const back = await fetch(`${tracker.issuer}/authorize`, form({ request: request!, user }));
  expect(back.status).toBe(303);
  return new URL(back.headers.get('location')!);
}

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

const token = (fields: Record<string, string>) =>
  fetch(`${tracker.issuer}/token`, form({ client_id: TRACKER_CLIENT_ID, ...fields }));

describe('the demo tracker', () => {
  it('issues a token for the PKCE verifier only, once per code, and names itself on the way back', async () => {
    const { verifier, challenge } = pkce();
    const back = await authorize('alice', challenge);
    expect(back.searchParams.get('iss')).toBe(tracker.issuer);
    expect(back.searchParams.get('state')).toBe('s1');
    const code = back.searchParams.get('code')!;
    const wrong = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: 'x'.repeat(43),
    });
    expect(await wrong.json()).toMatchObject({ error: 'invalid_grant' });
    // The wrong verifier spent the code: a code is used once, right or wrong.
    const late = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
    });
    expect(late.status).toBe(400);

    const again = pkce();
    const code2 = (await authorize('alice', again.challenge)).searchParams.get('code')!;
    const ok = await token({
      grant_type: 'authorization_code',
      code: code2,
      redirect_uri: REDIRECT,
      code_verifier: again.verifier,
    });
    const grant = (await ok.json()) as { access_token: string; refresh_token: string; expires_in: number };
    expect(grant.expires_in).toBeGreaterThan(0);

    // The MCP endpoint takes it and knows whose it is.
    const client = new McpClient({ server: tracker.url, token: grant.access_token });
    const made = await client.callTool('create_ticket', { title: 'printer on fire' });
    expect(JSON.stringify(made)).toContain('opened by alice');
    await client.close();

    // Refresh rotates: the old refresh token never works again.
    const fresh = (await (
      await token({ grant_type: 'refresh_token', refresh_token: grant.refresh_token })
    ).json()) as {
      refresh_token: string;
    };
    expect(fresh.refresh_token).not.toBe(grant.refresh_token);
    const reused = await token({ grant_type: 'refresh_token', refresh_token: grant.refresh_token });
    expect(await reused.json()).toMatchObject({ error: 'invalid_grant' });

    // Revoking the refresh token ends the person's access tokens too.
    await fetch(
      `${tracker.issuer}/revoke`,
      form({ client_id: TRACKER_CLIENT_ID, token: fresh.refresh_token }),
    );
    const after = await token({ grant_type: 'refresh_token', refresh_token: fresh.refresh_token });
    expect(after.status).toBe(400);
  });

  it('sends a denial back as access_denied, and never redirects to a URI it does not know', async () => {
    const back = await authorize('', pkce().challenge, 's2');
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('s2');
    // Nor to the gateway's callback of another connection: each connection registers its own.
    for (const elsewhere of [
      'https://attacker.example/cb',
      'http://127.0.0.1:9/mrtr/connect/callback/mail',
    ]) {
      const foreign = new URL(`${tracker.issuer}/authorize`);
      foreign.searchParams.set('client_id', TRACKER_CLIENT_ID);
      foreign.searchParams.set('redirect_uri', elsewhere);
      const res = await fetch(foreign, { redirect: 'manual' });
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
    }
  });

  it('refuses a token it did not issue at the MCP endpoint', async () => {
    const res = await fetch(tracker.url, {
      method: 'POST',
      headers: {
        authorization: 'Bearer made-up',
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('resource_metadata');
  });
});
