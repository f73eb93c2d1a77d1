// The gateway demo's "tracker": an MCP server behind its own authorization server, as a SaaS vendor's remote MCP
// server is. Each person connects their own tracker account through the gateway once; the tracker sees only its own
// tokens, never the gateway's callers' tokens. Tickets are kept per person, in memory.
import { z } from 'zod';
import { AuthRefusal, BearerAuth, type TokenVerifier } from '../../auth/index.js';
import { type HttpEndpoint, McpServer, text } from '../../server/index.js';
import { DemoAuthorizationServer } from './tracker-authorization.js';

export const TRACKER_CLIENT_ID = 'mrtr-gateway-demo';

export interface RunningTracker {
  /** The MCP endpoint (the gateway's upstream url). */
  readonly url: string;
  readonly issuer: string;
  readonly endpoint: HttpEndpoint;
}

/**
 * Start the tracker on 127.0.0.1:`port`. `redirectUri` is the gateway's connect callback for its tracker connection
 * (`/mrtr/connect/callback/tracker`), the one redirect URI its demo client may use.
 */
export async function startTracker(port: number, redirectUri: string): Promise<RunningTracker> {
  const origin = `http://127.0.0.1:${port}`;
  const as = new DemoAuthorizationServer(
    origin,
    [{ id: TRACKER_CLIENT_ID, redirectUris: [redirectUri] }],
    ['alice', 'bob'],
  );
  const verifier: TokenVerifier = {
    authorizationServers: [origin],
    verify(token) {
      const holder = as.holderOf(token);
      if (!holder) throw new AuthRefusal('invalid_token', 'unknown', 'the tracker does not know this token');
      return {
        subject: holder.user,
        issuer: origin,
        roles: [],
        scopes: holder.scopes,
        expiresAt: holder.expiresAt,
      };
    },
  };
  const tickets = new Map<string, string[]>();
  const mine = (who: string | undefined) => {
    const list = tickets.get(who ?? '') ?? [];
    tickets.set(who ?? '', list);
    return list;
  };
  const server = new McpServer({ name: 'tracker-demo', version: '1.0.0', logger: quiet })
    .tool({ name: 'list_tickets', description: "The signed-in tracker user's tickets" }, (_args, ctx) => {
      const list = mine(ctx.principal?.subject);
      return text(list.length ? list.map((t, i) => `#${i + 1} ${t}`).join('\n') : 'No tickets yet.');
    })
    .tool(
      {
        name: 'create_ticket',
        description: 'Open a ticket as the signed-in tracker user',
        input: z.object({ title: z.string().min(1).max(200) }),
      },
      ({ title }, ctx) => {
        const list = mine(ctx.principal?.subject);
        list.push(title);
        return text(`Ticket #${list.length} opened by ${ctx.principal?.subject}: ${title}`);
      },
    );
  const url = `${origin}/mcp`;
  const endpoint = await server.listen({
    host: '127.0.0.1',
    port,
    auth: new BearerAuth({ verifier, resource: url, resourceName: 'Tracker (demo)' }),
    pages: as,
  });
  return { url, issuer: origin, endpoint };
}

const quiet = { info() {}, warn() {}, error() {} };
