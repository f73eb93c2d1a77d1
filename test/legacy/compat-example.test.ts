// docs/compatibility.md's fleet example (examples/legacy-clients.ts) does what the page says: two instances on one
// Redis and one keyring serve a 2025 client (the SDK Client, default options) whose POSTs alternate between them,
// and a 2026-07-28 client (mrtr's own) on the same endpoints, with the same handler.
import { Client, type FetchLike, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpClient, scriptedResolver } from '../../src/client/index.js';
import type { HttpEndpoint } from '../../src/server/index.js';
import { generateKeySpec } from '../../src/state/index.js';
import { TestRedis } from '../helpers/redis-server.js';

let redis: TestRedis;
let instances: HttpEndpoint[] = [];
beforeAll(async () => {
  redis = await TestRedis.start();
  process.env.MRTR_STATE_KEYS = generateKeySpec();
  const { startInstance } = await import('../../examples/legacy-clients.js');
  instances = await Promise.all([startInstance(redis.url, 0), startInstance(redis.url, 0)]);
}, 30_000);
afterAll(async () => {
  await Promise.all(instances.map((i) => i.close()));
  await redis?.stop();
});

describe('the fleet example of docs/compatibility.md', () => {
  it('a 2025 client whose every POST goes to the other instance completes the confirmation flow', async () => {
    let next = 0;
    const alternate: FetchLike = (_url, init) => fetch(instances[next++ % 2]!.url, init);
    const client = new Client({ name: 'sdk', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler('elicitation/create', async () => ({
      action: 'accept' as const,
      content: { confirm: true },
    }));
    await client.connect(new StreamableHTTPClientTransport(new URL(instances[0]!.url), { fetch: alternate }));
    const result = await client.callTool({ name: 'deploy', arguments: { service: 'api' } });
    await client.close();
    expect(result.content).toEqual([{ type: 'text', text: 'deployed api' }]);
  });

  it('a 2026-07-28 client gets the same flow as input_required rounds', async () => {
    const client = new McpClient({
      server: instances[1]!.url,
      resolvers: [scriptedResolver({ q1: { action: 'accept', content: { confirm: true } } })],
    });
    const outcome = await client.callTool('deploy', { service: 'web' });
    await client.close();
    expect(outcome.status).toBe('complete');
    expect(outcome.status === 'complete' && outcome.result.content).toEqual([
      { type: 'text', text: 'deployed web' },
    ]);
  });
});
