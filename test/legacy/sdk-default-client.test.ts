// The official SDK Client with its default options — the 2025-11-25 initialize handshake, no version negotiation —
// against an mrtr server over real Streamable HTTP: it lists tools and completes multi-round flows, its questions
// arriving as server-to-client requests through the legacy bridge. The rounds are the MRTR pipeline's own: the audit
// events carry one flow id and rising round numbers, marked as bridged.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RoundEvent } from '../../src/server/index.js';
import { legacyFlowsServer } from '../fixtures/legacy-flows-server.js';

const events: RoundEvent[] = [];
let endpoint: { url: string; close(): Promise<void> };
const open: Client[] = [];

beforeAll(async () => {
  endpoint = await legacyFlowsServer({ observers: [{ observe: (e) => void events.push(e) }] }).listen({
    port: 0,
  });
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
  events.length = 0;
});
afterAll(() => endpoint.close());

async function connect(options: ConstructorParameters<typeof Client>[1] = {}): Promise<Client> {
  const client = new Client({ name: 'sdk-default', version: '1.0.0' }, options);
  await client.connect(new StreamableHTTPClientTransport(new URL(endpoint.url)));
  open.push(client);
  return client;
}

describe('the SDK Client with default options, over HTTP', () => {
  it('completes the 2025-11-25 handshake with a session and lists the tools', async () => {
    const client = await connect();
    expect(client.getServerVersion()).toMatchObject({ name: 'legacy-flows', version: '1.0.0' });
    expect(client.getServerCapabilities()).toMatchObject({ tools: {}, logging: {} });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      'plan_trip',
      'approve',
      'summarize_roots',
      'sign_in',
      'poll_job',
      'chatty',
    ]);
  });

  it('runs a two-question ask.* flow: two elicitation/create requests, one flow, rounds 0..2 marked bridged', async () => {
    const client = await connect({ capabilities: { elicitation: {} } });
    const asked: string[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      const message = String(request.params.message);
      asked.push(message);
      const content: Record<string, string | number> =
        message === 'Where to?' ? { city: 'Lisbon' } : { nights: 3 };
      return { action: 'accept' as const, content };
    });
    const result = await client.callTool({ name: 'plan_trip', arguments: {} });
    expect(result.content).toEqual([{ type: 'text', text: '3 nights in Lisbon' }]);
    expect(result).not.toHaveProperty('resultType');
    expect(asked).toEqual(['Where to?', 'How many nights in Lisbon?']);
    expect(events.map((e) => [e.round, e.outcome, e.bridged])).toEqual([
      [0, 'input_required', '2025-11-25'],
      [1, 'input_required', '2025-11-25'],
      [2, 'complete', '2025-11-25'],
    ]);
    const flow = events[0]!.flowId;
    expect(flow).toBeDefined();
    expect(events.every((e) => e.flowId === flow)).toBe(true);
  });

  it('runs a handler written with the explicit inputRequired() API unchanged', async () => {
    const client = await connect({ capabilities: { elicitation: {} } });
    client.setRequestHandler('elicitation/create', async () => ({
      action: 'accept',
      content: { approve: true },
    }));
    const result = await client.callTool({ name: 'approve', arguments: { change: 'deploy-42' } });
    expect(result.content).toEqual([{ type: 'text', text: 'approved deploy-42' }]);
  });

  it('asks two kinds of question in one round (sampling and roots) and waits for both answers', async () => {
    const client = await connect({ capabilities: { sampling: {}, roots: {} } });
    client.setRequestHandler('sampling/createMessage', async () => ({
      role: 'assistant',
      content: { type: 'text', text: 'teal' },
      model: 'test',
    }));
    client.setRequestHandler('roots/list', async () => ({ roots: [{ uri: 'file:///work', name: 'work' }] }));
    const result = await client.callTool({ name: 'summarize_roots', arguments: {} });
    expect(result.content).toEqual([{ type: 'text', text: 'teal / file:///work' }]);
    expect(events.map((e) => e.outcome)).toEqual(['input_required', 'complete']);
  });

  it('an invalid answer is refused by the same validation as on the MRTR path, and the question is asked again', async () => {
    const client = await connect({ capabilities: { elicitation: {} } });
    const answers = [{ nights: 99 }, { nights: 2 }];
    client.setRequestHandler('elicitation/create', async (request) => {
      const content: Record<string, string | number> =
        request.params.message === 'Where to?' ? { city: 'Porto' } : answers.shift()!;
      return { action: 'accept' as const, content };
    });
    const result = await client.callTool({ name: 'plan_trip', arguments: {} });
    expect(result.content).toEqual([{ type: 'text', text: '2 nights in Porto' }]);
    expect(answers).toEqual([]);
  });

  it('a client that declared no elicitation gets the precise capability error of the MRTR path', async () => {
    const client = await connect();
    const failure = await client.callTool({ name: 'plan_trip', arguments: {} }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(String(failure)).toContain(
      'Missing required client capability: the handler needs elicitation, which the client did not declare',
    );
    expect(events.map((e) => [e.outcome, e.bridged])).toEqual([['refused', '2025-11-25']]);
  });

  it('a 2025-11-25 client with form-only elicitation cannot be sent to a URL: the same precise error', async () => {
    const client = await connect({ capabilities: { elicitation: { form: {} } } });
    const failure = await client.callTool({ name: 'sign_in', arguments: {} }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(String(failure)).toContain('Missing required client capability');
    expect(String(failure)).toContain('elicitation');
  });

  it('state-only rounds (nothing asked) are taken again after a pause, within the round cap', async () => {
    const client = await connect();
    const result = await client.callTool({ name: 'poll_job', arguments: {} });
    expect(result.content).toEqual([{ type: 'text', text: 'done after 2 polls' }]);
    expect(events.map((e) => [e.round, e.outcome])).toEqual([
      [0, 'input_required'],
      [1, 'input_required'],
      [2, 'complete'],
    ]);
  });

  it('a client that answers with an error ends the call with an error naming the question', async () => {
    const client = await connect({ capabilities: { elicitation: {} } });
    client.setRequestHandler('elicitation/create', async () => {
      throw new Error('the user closed the window');
    });
    const failure = await client.callTool({ name: 'plan_trip', arguments: {} }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(String(failure)).toContain('The client could not answer elicitation/create');
  });
});
