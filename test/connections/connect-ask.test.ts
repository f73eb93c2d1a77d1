// `ctx.ask.connect(name)`: the one-line form of `connections.token(ctx, name)` in a handler of a server with
// connections attached; on a server without, a mistake named to the author.
import { describe, expect, it } from 'vitest';
import { McpServer, text } from '../../src/server/index.js';
import { generateKeySpec } from '../../src/state/index.js';
import { mcp } from '../helpers/mcp-http.js';
import { sessionCookie } from '../helpers/page-sessions.js';
import { connectFromNode, connectServer } from './connect-fixture.js';

describe('ctx.ask.connect(name)', () => {
  it('asks the caller to connect, then gives their token', async () => {
    const f = await connectServer();
    const first = await f.call('alice-token', {}, 'tracker_mine');
    const link = first.inputRequests.connect_tracker.params.url as string;
    await connectFromNode(link, await sessionCookie(f.origin, 'alice-token'));
    const retried = await f.call(
      'alice-token',
      { requestState: first.requestState, inputResponses: { connect_tracker: { action: 'accept' } } },
      'tracker_mine',
    );
    expect(retried.content[0].text).toBe('issues read with tracker-at-1');
  });

  it('on a server without connections, names what is missing (in the log: the caller gets an internal error)', async () => {
    const logged: string[] = [];
    const server = new McpServer({
      name: 'bare',
      version: '1',
      stateKeys: generateKeySpec(),
      logger: {
        info() {},
        warn() {},
        error: (...args: unknown[]) => logged.push(JSON.stringify(args)),
      } as never,
    });
    server.tool({ name: 'needs', description: 'x' }, async (_a, ctx) =>
      text(await ctx.ask.connect('tracker')),
    );
    const endpoint = await server.http({ port: 0 }).listen();
    try {
      const reply = await mcp(endpoint.url, 'tools/call', { name: 'needs', arguments: {} });
      expect(reply.response.error?.code).toBe(-32603);
      expect(logged.join('\n')).toContain(
        "ctx.ask.connect('tracker') needs connections attached to this server: new Connections({...}).attach(server)",
      );
    } finally {
      await endpoint.close();
    }
  });
});
