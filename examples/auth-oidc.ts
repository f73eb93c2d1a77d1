// The second example of docs/auth.md: a server whose callers bring JWT access tokens from an OpenID provider, with
// scopes per tool and the provider's sign-in for the server's pages. test/docs/examples-run.test.ts runs it against
// a real provider (oidc-provider on 127.0.0.1).
// #region server

import { BearerAuth, JwtVerifier } from 'mrtr/auth';
import { McpServer, text } from 'mrtr/server';
import { z } from 'zod';

const resource = process.env.MCP_URL ?? 'https://bugs.example.com/mcp'; // this server's public URL
const issuer = process.env.OIDC_ISSUER ?? 'https://id.example.com'; // who mints its tokens

export const server = new McpServer({
  name: 'bugs',
  version: '1.0.0',
  auth: new BearerAuth({
    // Signature (the issuer's JWKS, discovered from its metadata), iss, aud = this server, exp/nbf: every request.
    verifier: new JwtVerifier({ issuer, audience: resource }),
    resource,
    scopesSupported: ['bugs:read'], // what a client asks for first (the 401's scope)
  }),
  signIn: {
    oidc: {
      issuer,
      clientId: process.env.OIDC_CLIENT_ID ?? 'bugs-pages',
      clientSecret: process.env.OIDC_CLIENT_SECRET,
    },
  },
})
  .tool({ name: 'count_bugs', description: 'How many bugs are open', requiredScopes: ['bugs:read'] }, () =>
    text('12 open bugs'),
  )
  .tool(
    {
      name: 'close_bug',
      description: 'Close a bug, once the person confirms',
      input: z.object({ id: z.number().int() }),
      // A token without bugs:write gets 403 insufficient_scope naming it: the client steps up and retries.
      requiredScopes: ['bugs:write'],
    },
    async ({ id }, { ask, principal }) =>
      (await ask.confirm(`Close bug ${id}?`, { key: 'confirm' }))
        ? text(`Bug ${id} closed by ${principal?.subject}`)
        : text(`Bug ${id} left open`),
  );
// #endregion
