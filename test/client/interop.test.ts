// Our client against real servers: the official SDK (stateless createMcpHandler) and our own example server,
// over HTTP and stdio.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleServer } from '../../src/cli/demo-servers/example.js';
import { McpClient, type MrtrEvent, StdioClientTransport, scriptedResolver } from '../../src/client/index.js';
import type { HttpEndpoint } from '../../src/server/index.js';
import { CLI, requireBuiltCli } from './helpers.js';
import { startSdkServer } from './sdk-server.js';

describe('against the official SDK server (stateless, @modelcontextprotocol/server 2.4.0)', () => {
  let sdk: Awaited<ReturnType<typeof startSdkServer>>;
  beforeAll(async () => {
    sdk = await startSdkServer();
  });
  afterAll(() => sdk.close());

  it('discovers and lists the tools', async () => {
    const c = new McpClient({ server: sdk.url });
    const d = await c.discover();
    expect(d.supportedVersions).toContain('2026-07-28');
    expect((await c.listTools()).map((t) => t.name).sort()).toEqual(['approve_change', 'book_trip']);
    await c.close();
  });

  it('completes the 2-round tool', async () => {
    const c = new McpClient({
      server: sdk.url,
      resolvers: [scriptedResolver({ approve: { action: 'accept', content: { approve: true } } })],
    });
    const outcome = await c.callTool('approve_change', { change: 'raise limit' });
    expect(outcome).toMatchObject({
      status: 'complete',
      rounds: 2,
      result: { content: [{ type: 'text', text: 'approved raise limit' }] },
    });
    await c.close();
  });

  it('completes the 3-round tool, with events for each round', async () => {
    const c = new McpClient({
      server: sdk.url,
      resolvers: [
        scriptedResolver({
          city: { action: 'accept', content: { city: 'Kyoto' } },
          nights: { action: 'accept', content: { nights: 4 } },
        }),
      ],
    });
    const events: MrtrEvent[] = [];
    const outcome = await c.callTool('book_trip', { traveller: 'Ada' }, { onEvent: (e) => events.push(e) });
    expect(outcome).toMatchObject({
      status: 'complete',
      rounds: 3,
      result: { content: [{ text: 'Ada: 4 nights in Kyoto' }] },
    });
    expect(
      events.filter((e) => e.type === 'input_needed').map((e) => (e.type === 'input_needed' ? e.key : '')),
    ).toEqual(['city', 'nights']);
    await c.close();
  });

  it('runs many flows in parallel on one client without mixing their state', async () => {
    const c = new McpClient({
      server: sdk.url,
      resolvers: [
        scriptedResolver({
          city: (q) => ({
            action: 'accept',
            content: { city: q.message === 'Where to?' ? 'Oslo' : 'Lisbon' },
          }),
          nights: { action: 'accept', content: { nights: 2 } },
          approve: { action: 'accept', content: { approve: false } },
        }),
      ],
    });
    const outcomes = await Promise.all([
      ...['A', 'B', 'C', 'D'].map((t) => c.callTool('book_trip', { traveller: t })),
      ...['x', 'y'].map((ch) => c.callTool('approve_change', { change: ch })),
    ]);
    const texts = outcomes.map((o) =>
      o.status === 'complete' ? (o.result.content[0] as { text: string }).text : o.status,
    );
    expect(texts).toEqual([
      'A: 2 nights in Oslo',
      'B: 2 nights in Oslo',
      'C: 2 nights in Oslo',
      'D: 2 nights in Oslo',
      'rejected x',
      'rejected y',
    ]);
    await c.close();
  });
});

describe('against our own example server', () => {
  let endpoint: HttpEndpoint;
  beforeAll(async () => {
    endpoint = await exampleServer().listen({ port: 0 });
  });
  afterAll(() => endpoint.close());

  const answers = {
    resolution: { action: 'accept' as const, content: { resolution: 'Duplicate' } },
    original: { action: 'accept' as const, content: { original: 7 } },
    confirm: { action: 'accept' as const, content: { confirm: true } },
    severity: { action: 'accept' as const, content: { severity: 'high' } },
  };

  it('resolve_bug as a duplicate: 3 questions, 4 rounds', async () => {
    const c = new McpClient({
      server: endpoint.url,
      resolvers: [scriptedResolver(answers, { confirmDefault: true })],
    });
    await c.discover();
    expect(c.serverInfo?.name).toBe('mrtr-example');
    const outcome = await c.callTool('resolve_bug', { id: 42 });
    expect(outcome).toMatchObject({
      status: 'complete',
      rounds: 4,
      result: { content: [{ type: 'text', text: 'Bug 42 resolved as Duplicate (duplicate of 7)' }] },
    });
    await c.close();
  });

  it('resolve_bug as fixed: 2 questions, 3 rounds; declined: an error result that names the decline', async () => {
    const fixed = new McpClient({
      server: endpoint.url,
      resolvers: [
        scriptedResolver(
          { resolution: { action: 'accept', content: { resolution: 'Fixed' } } },
          { confirmDefault: true },
        ),
      ],
    });
    expect(await fixed.callTool('resolve_bug', { id: 1 })).toMatchObject({ status: 'complete', rounds: 3 });
    const declining = new McpClient({
      server: endpoint.url,
      resolvers: [
        scriptedResolver({
          resolution: { action: 'accept', content: { resolution: 'Fixed' } },
          confirm: { action: 'decline' },
        }),
      ],
    });
    const o = await declining.callTool('resolve_bug', { id: 1 });
    expect(o).toMatchObject({
      status: 'complete',
      rounds: 3,
      result: { isError: true },
      declined: [{ key: 'confirm', action: 'decline' }],
    });
  });

  it('prompts and resources go through the same driver', async () => {
    const c = new McpClient({ server: endpoint.url, resolvers: [scriptedResolver(answers)] });
    const p = await c.getPrompt('triage_note');
    expect(p).toMatchObject({ status: 'complete', rounds: 2 });
    if (p.status === 'complete') expect(JSON.stringify(p.result.messages)).toContain('high');
    const r = await c.readResource('helpdesk://policy');
    expect(r).toMatchObject({ status: 'complete', rounds: 1 });
  });

  it('parallel resolve_bug flows with different answers stay isolated', async () => {
    const c = new McpClient({
      server: endpoint.url,
      resolvers: [
        scriptedResolver(
          {
            resolution: (q) => ({
              action: 'accept',
              content: {
                resolution: Number(/bug (\d+)/.exec(q.message ?? '')?.[1]) % 2 ? 'Fixed' : 'Duplicate',
              },
            }),
            original: (q) => ({
              action: 'accept',
              content: { original: Number(/Bug (\d+)/.exec(q.message ?? '')?.[1]) + 1000 },
            }),
          },
          { confirmDefault: true },
        ),
      ],
    });
    const ids = [10, 11, 12, 13, 14, 15];
    const outcomes = await Promise.all(ids.map((id) => c.callTool('resolve_bug', { id })));
    outcomes.forEach((o, i) => {
      const id = ids[i] as number;
      const text =
        id % 2
          ? `Bug ${id} resolved as Fixed`
          : `Bug ${id} resolved as Duplicate (duplicate of ${id + 1000})`;
      expect(o).toMatchObject({ status: 'complete', result: { content: [{ text }] } });
    });
  });

  it('over stdio (the built CLI serving the example fixture)', async () => {
    requireBuiltCli();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'serve', '--fixture', 'example', '--stdio'],
      stderr: 'ignore',
    });
    const c = new McpClient({
      server: transport,
      resolvers: [scriptedResolver(answers, { confirmDefault: true })],
    });
    const tools = await c.listTools();
    expect(tools.map((t) => t.name)).toContain('resolve_bug');
    const [a, b] = await Promise.all([
      c.callTool('resolve_bug', { id: 5 }),
      c.callTool('echo', { message: 'hi' }),
    ]);
    expect(a).toMatchObject({ status: 'complete', rounds: 4 });
    expect(b).toMatchObject({ status: 'complete', rounds: 1, result: { content: [{ text: 'hi' }] } });
    await c.close();
  });
});
