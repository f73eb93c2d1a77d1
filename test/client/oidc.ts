// A real OpenID provider (oidc-provider) on 127.0.0.1 with dynamic registration and resource indicators (JWT
// access tokens for the MCP server's URL), and an MCP endpoint that accepts only its tokens: the example server
// behind a gate that answers 401 with the protected resource metadata's address.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import Provider from 'oidc-provider';
import { exampleServer } from '../../src/cli/demo-servers/example.js';

const listen = (server: Server): Promise<number> =>
  new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );

async function freePort(): Promise<number> {
  const s = createServer();
  const port = await listen(s);
  await new Promise((r) => s.close(r));
  return port;
}

export interface ProtectedMcp {
  /** The MCP endpoint (needs a token). */
  url: string;
  issuer: string;
  /** Requests the gate let through, with the token's subject. */
  admitted: string[];
  close(): Promise<void>;
}

export async function startProtectedMcp(): Promise<ProtectedMcp> {
  const example = await exampleServer().listen({ port: 0 });
  const gatePort = await freePort();
  const resource = `http://127.0.0.1:${gatePort}/mcp`;
  const issuerPort = await freePort();
  const issuer = `http://127.0.0.1:${issuerPort}`;
  const provider = new Provider(issuer, {
    clients: [],
    scopes: ['openid', 'offline_access', 'mcp:tools'],
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, indicator: string) => {
          if (indicator !== resource) throw new Error(`unknown resource ${indicator}`);
          return { scope: 'mcp:tools', audience: resource, accessTokenFormat: 'jwt', accessTokenTTL: 600 };
        },
      },
    },
    pkce: { required: () => true },
    // Refresh tokens for every client that asks for them (the client's refresh path is under test).
    issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(t: string): boolean }) =>
      client.grantTypeAllowed('refresh_token'),
    findAccount: (_ctx: unknown, sub: string) => ({ accountId: sub, claims: () => ({ sub }) }),
    // Grant the resource's scope on consent, so the token carries it.
    // biome-ignore lint/suspicious/noExplicitAny: oidc-provider's context is untyped
    loadExistingGrant: async (ctx: any) => {
      const grantId =
        ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session?.grantIdFor(ctx.oidc.client?.clientId ?? '');
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client?.clientId,
        accountId: ctx.oidc.session?.accountId,
      });
      grant.addOIDCScope('openid offline_access');
      grant.addResourceScope(resource, 'mcp:tools');
      await grant.save();
      return grant;
    },
  });
  provider.proxy = false;
  const idp = createServer(provider.callback());
  await new Promise<void>((r) => idp.listen(issuerPort, '127.0.0.1', () => r()));

  const jwks = createRemoteJWKSet(new URL(`${issuer}/jwks`));
  const admitted: string[] = [];
  const body = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  };
  const gate = createServer((req, res) => {
    void (async () => {
      if (req.method === 'GET' && req.url === '/.well-known/oauth-protected-resource/mcp') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ resource, authorization_servers: [issuer], scopes_supported: ['mcp:tools'] }),
        );
        return;
      }
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      let subject: string | undefined;
      if (token) {
        try {
          const { payload } = await jwtVerify(token, jwks, { issuer, audience: resource });
          subject = String(payload.sub);
        } catch {}
      }
      if (!subject) {
        res.writeHead(401, {
          'www-authenticate': `Bearer resource_metadata="http://127.0.0.1:${gatePort}/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"`,
        });
        res.end();
        return;
      }
      admitted.push(subject);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (typeof v === 'string' && k !== 'host' && k !== 'authorization' && k !== 'content-length')
          headers[k] = v;
      const upstream = await fetch(example.url, { method: req.method, headers, body: await body(req) });
      const out: Record<string, string> = {};
      upstream.headers.forEach((v, k) => {
        if (k !== 'content-length' && k !== 'transfer-encoding') out[k] = v;
      });
      res.writeHead(upstream.status, out);
      res.end(Buffer.from(await upstream.arrayBuffer()));
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(error));
    });
  });
  await new Promise<void>((r) => gate.listen(gatePort, '127.0.0.1', () => r()));
  return {
    url: resource,
    issuer,
    admitted,
    close: async () => {
      for (const s of [gate, idp]) {
        s.closeAllConnections();
        await new Promise((r) => s.close(r));
      }
      await example.close();
    },
  };
}
