// A 2025 client through the bridge is not a tasks client: it never declares the extension, so a tool that may run
// as a task answers it as a plain call, one that runs only as a task is refused with -32021 naming the extension, and
// the approval waits go by MRTR as before. The official SDK Client with its default options, over real HTTP.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpServer, text } from '../../src/server/index.js';
import { generateKeySpec } from '../../src/state/index.js';

let endpoint: { url: string; close(): Promise<void> };
let client: Client;

beforeAll(async () => {
  const server = new McpServer({
    name: 'bridge-tasks',
    version: '1',
    stateKeys: generateKeySpec(),
    logger: { info() {}, warn() {}, error() {} },
  })
    .tool({ name: 'maybe_task', description: 'may run as a task', task: 'optional' }, () =>
      text('ran plainly'),
    )
    .tool({ name: 'only_task', description: 'runs only as a task', task: 'required' }, () => text('never'));
  endpoint = await server.listen({ port: 0 });
  client = new Client({ name: 'sdk-default', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(endpoint.url)));
});
afterAll(async () => {
  await client.close();
  await endpoint.close();
});

describe('the tasks extension and a 2025 client through the bridge', () => {
  it('a tool that may run as a task answers as a plain call', async () => {
    const result = await client.callTool({ name: 'maybe_task', arguments: {} });
    expect(result.content).toEqual([{ type: 'text', text: 'ran plainly' }]);
    expect(result).not.toHaveProperty('taskId');
  });

  it('a tool that runs only as a task is refused with -32021 naming the extension', async () => {
    await expect(client.callTool({ name: 'only_task', arguments: {} })).rejects.toMatchObject({
      code: -32021,
      message: expect.stringContaining('io.modelcontextprotocol/tasks'),
    });
  });
});
