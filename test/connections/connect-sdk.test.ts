// The official SDK Client, as an application makes it, calling a tool that needs the caller's tracker account: in
// 2026 mode it answers the link with accept and retries at once, held until alice has connected; with its default
// options (a 2025-11-25 client, through the bridge) the link carries an elicitationId and is completed by
// notifications/elicitation/complete once the callback stored her grant. Neither client ever sees the token's grant.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it, onTestFinished } from 'vitest';
import { sessionCookie } from '../helpers/page-sessions.js';
import { type ConnectFixture, connectFromNode, connectServer } from './connect-fixture.js';

interface Asked {
  mode: string;
  url?: string;
  elicitationId?: string;
}

async function sdkClient(
  f: ConnectFixture,
  options: Record<string, unknown>,
  asked: (q: Asked) => void = () => {},
) {
  const client = new Client(
    { name: 'sdk', version: '1.0.0' },
    { capabilities: { elicitation: { form: {}, url: {} } }, ...options },
  );
  const questions: Asked[] = [];
  const completed: string[] = [];
  client.setRequestHandler('elicitation/create', async (request) => {
    const q = request.params as unknown as Asked;
    questions.push(q);
    asked(q);
    return { action: 'accept' } as never;
  });
  client.setNotificationHandler('notifications/elicitation/complete', (n) => {
    completed.push(n.params.elicitationId);
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(f.mcpUrl), {
      requestInit: { headers: { authorization: 'Bearer alice-token' } },
    }),
  );
  onTestFinished(() => client.close());
  return { client, questions, completed };
}

const textOf = (r: { content?: unknown }) => (r.content as Array<{ text: string }>)[0]!.text;

describe('the official SDK Client connects the caller’s account', () => {
  it('2026 mode: its retry is held until alice connects, then the call completes', async () => {
    const f = await connectServer({ pendingWaitMs: 60_000 });
    const { client, questions } = await sdkClient(f, { versionNegotiation: { mode: 'auto' } });
    const held = f.next((e) => e.action === 'waiting');
    const call = client.callTool({ name: 'tracker_issues', arguments: {} });
    const { id } = await held;
    const alice = await sessionCookie(f.origin, 'alice-token');
    expect((await connectFromNode(`${f.origin}/mrtr/connect/${id}`, alice)).status).toBe(200);
    expect(textOf(await call)).toBe('issues read with tracker-at-1');
    expect(questions.map((q) => q.mode)).toEqual(['url']);
  });

  it('default options (2025-11-25 through the bridge): asked once with an elicitationId, completed after the callback', async () => {
    const f = await connectServer();
    const alice = await sessionCookie(f.origin, 'alice-token');
    const person: Promise<unknown>[] = [];
    const { client, questions, completed } = await sdkClient(f, {}, (q) => {
      // The person acts after the client answered, as in real life.
      person.push(Promise.resolve().then(() => connectFromNode(q.url!, alice)));
    });
    const result = await client.callTool({ name: 'tracker_issues', arguments: {} });
    await Promise.all(person);
    expect(textOf(result)).toBe('issues read with tracker-at-1');
    expect(questions).toHaveLength(1);
    expect(questions[0]!.elicitationId).toMatch(/^[\w-]{22}$/);
    expect(completed).toEqual([questions[0]!.elicitationId]);
    // The callback told the bridge at once (not left to its next check).
    expect(f.done).toEqual([questions[0]!.url]);
  });
});
