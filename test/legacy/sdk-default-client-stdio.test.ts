// The official SDK Client with its default options over stdio: it spawns `mrtr serve --fixture conformance --stdio`,
// opens with initialize (2025-11-25), lists the tools and completes a two-round ask.* flow whose questions reach it
// as elicitation/create requests on stdout, answered on stdin.
import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, describe, expect, it } from 'vitest';

const open: Client[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

async function connect(options: ConstructorParameters<typeof Client>[1] = {}): Promise<Client> {
  const client = new Client({ name: 'sdk-default-stdio', version: '1.0.0' }, options);
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [resolve('dist/cli/main.js'), 'serve', '--fixture', 'conformance', '--stdio'],
      stderr: 'ignore',
    }),
  );
  open.push(client);
  return client;
}

describe('the SDK Client with default options, over stdio', () => {
  it('completes the handshake and lists the tools', async () => {
    const client = await connect();
    expect(client.getServerVersion()).toMatchObject({ name: 'mrtr-conformance' });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('test_input_required_result_multi_round');
  });

  it('completes a two-round ask.* flow: two elicitation/create requests, answered in order', async () => {
    const client = await connect({ capabilities: { elicitation: {} } });
    const asked: string[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      const message = String(request.params.message);
      asked.push(message);
      const content: Record<string, string> = message.startsWith('Step 1')
        ? { name: 'Ada' }
        : { color: 'green' };
      return { action: 'accept' as const, content };
    });
    const result = await client.callTool({ name: 'test_input_required_result_multi_round', arguments: {} });
    expect(result.content).toEqual([{ type: 'text', text: 'Ada likes green' }]);
    expect(asked).toEqual(['Step 1: What is your name?', 'Step 2: What is your favorite color?']);
  });

  it('without elicitation declared, the flow fails with the precise capability error', async () => {
    const client = await connect();
    const failure = await client
      .callTool({ name: 'test_input_required_result_multi_round', arguments: {} })
      .then(
        () => undefined,
        (e: unknown) => e as Error,
      );
    expect(String(failure)).toContain('Missing required client capability');
  });
});
