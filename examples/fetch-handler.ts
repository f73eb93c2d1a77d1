// docs/deploy.md: the server as a fetch handler, for Bun, Deno, Cloudflare's workerd or any host that takes one.
// #region fetch
import { BearerAuth, JwtVerifier } from 'mrtr/auth';
import { McpServer, mcpHttp, text } from 'mrtr/server';

// Every instance gets the same keyring: any of them opens a state another one sealed.
const server = new McpServer({
  name: 'bugs',
  version: '1.0.0',
  state: { keys: process.env.MRTR_STATE_KEYS },
}).tool({ name: 'whoami', description: 'Who the server thinks you are' }, (_args, { principal }) =>
  text(principal?.subject ?? 'nobody'),
);

const auth = new BearerAuth({
  verifier: new JwtVerifier({ issuer: 'https://id.example.com', audience: 'https://bugs.example.com/mcp' }),
  resource: 'https://bugs.example.com/mcp',
});

// The HTTP edge (auth, 2025 clients, path, hosts, body limit) is set here, not on the server.
export default mcpHttp(server, { auth, allowedHosts: ['bugs.example.com'] });
// #endregion
