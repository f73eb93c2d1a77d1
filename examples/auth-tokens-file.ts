// The first example of docs/auth.md: a server behind development tokens from a file, for demos and tests.
// test/docs/examples-run.test.ts starts it and calls it with and without a token.
// #region server

import { BearerAuth, DevTokens } from 'mrtr/auth';
import { McpServer, text } from 'mrtr/server';

// tokens.json: { "alice-dev-token": { "sub": "alice", "name": "Alice", "roles": ["requester"], "scopes": ["bugs:read"] } }
const tokens = DevTokens.fromFile(process.env.TOKENS_FILE ?? 'tokens.json');
const port = Number(process.env.PORT ?? 3000);

export const server = new McpServer({
  name: 'bugs',
  version: '1.0.0',
  // The resource is this server's URL: the 401 challenge and /.well-known/oauth-protected-resource name it.
  auth: new BearerAuth({ verifier: tokens, resource: `http://127.0.0.1:${port}/mcp` }),
  // The same people sign in to the server's own pages at /mrtr/signin with their own token (this machine only).
  signIn: { devTokens: tokens },
}).tool(
  { name: 'whoami', description: 'Who the server thinks you are', requiredScopes: ['bugs:read'] },
  (_args, { principal }) =>
    text(`${principal?.name} (${principal?.subject}), roles: ${principal?.roles?.join(', ')}`),
);

export const endpoint = await server.listen({ port });
// #endregion
