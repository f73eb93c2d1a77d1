// A 2025 client (the official SDK's default Client) through the bridge with mcpHttp's fetch handler: the handshake,
// a session, and a two-question flow whose questions arrive as server-to-client requests on an SSE stream.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { mcpHttp } from '../../src/server/index.js';
import { legacyFlowsServer } from '../fixtures/legacy-flows-server.js';

const open: Client[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

async function connect(legacyClients?: boolean): Promise<Client> {
  const handler = mcpHttp(
    legacyFlowsServer({ logger: { info() {}, warn() {}, error() {} } }),
    legacyClients === undefined ? {} : { legacyClients },
  );
  const client = new Client({ name: 'sdk-default', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  const transport = new StreamableHTTPClientTransport(new URL('http://127.0.0.1/mcp'), {
    fetch: (url, init) => handler.fetch(new Request(url, init)),
  });
  await client.connect(transport);
  open.push(client);
  return client;
}

describe('a 2025 client through mcpHttp', () => {
  it('opens a session, lists the tools and answers a two-question flow', async () => {
    const client = await connect();
    expect(client.getServerVersion()).toMatchObject({ name: 'legacy-flows' });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('plan_trip');
    client.setRequestHandler('elicitation/create', async (request) => {
      const content: Record<string, string | number> =
        request.params.message === 'Where to?' ? { city: 'Lisbon' } : { nights: 3 };
      return { action: 'accept' as const, content };
    });
    const result = await client.callTool({ name: 'plan_trip', arguments: {} });
    expect(result.content).toEqual([{ type: 'text', text: '3 nights in Lisbon' }]);
  });

  it('with legacyClients: false, the handshake is refused with an error naming the version', async () => {
    await expect(connect(false)).rejects.toThrow(/2026-07-28/);
  });
});

describe('the edge options on listen()', () => {
  it('legacyClients: false given to listen() refuses a 2025 handshake, as the server option did', async () => {
    const endpoint = await legacyFlowsServer({ logger: { info() {}, warn() {}, error() {} } }).listen({
      port: 0,
      legacyClients: false,
    });
    try {
      const client = new Client({ name: 'sdk-default', version: '1.0.0' });
      await expect(client.connect(new StreamableHTTPClientTransport(new URL(endpoint.url)))).rejects.toThrow(
        /2026-07-28/,
      );
    } finally {
      await endpoint.close();
    }
  });
});
