// A server with the development sign-in under Bun's own HTTP server, on the port PORT names: the pages through fetch,
// with Bun's server passed on so the pages know the caller's address.
import { BearerAuth, DevTokens, parseDevTokens } from 'mrtr/auth';
import { McpServer, mcpHttp } from 'mrtr/server';
import { STATE_KEYS } from './fixture-server.js';

declare const Bun: {
  serve(options: {
    hostname: string;
    port: number;
    fetch(
      request: Request,
      server: { requestIP(request: Request): { address: string } | null },
    ): Promise<Response>;
  }): { port: number };
};

const origin = `http://127.0.0.1:${process.env.PORT}`;
const tokens = new DevTokens(parseDevTokens({ 'bob-token': { sub: 'bob', name: 'Bob' } }));
const server = new McpServer({ name: 'pages', version: '1.0.0', state: { keys: STATE_KEYS } });
const app = mcpHttp(server, {
  auth: new BearerAuth({ verifier: tokens, resource: `${origin}/mcp` }),
  signIn: { devTokens: tokens },
  allowedHosts: ['127.0.0.1'],
});
const served = Bun.serve({
  hostname: '127.0.0.1',
  port: Number(process.env.PORT),
  fetch: (request, bun) => app.fetch(request, bun),
});
console.log(`listening on http://127.0.0.1:${served.port}`);
