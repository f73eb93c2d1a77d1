// docs/security.md §1: the principal is established on every round and requiredScopes checked on every round. For a
// 2025 client the later rounds of a flow start with its answer's POST, so the principal of that POST — not the one
// of the first request, kept from minutes before — is who the round runs as.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { elicitationForm } from '../../src/flow/index.js';
import { McpServer, text } from '../../src/server/index.js';
import { LegacyWire } from '../helpers/legacy-wire.js';

let endpoint: { url: string; close(): Promise<void> };

beforeAll(async () => {
  const server = new McpServer({
    name: 'scoped',
    version: '1.0.0',
    logger: { info() {}, warn() {}, error() {} },
  }).tool(
    { name: 'write_note', description: 'Asks for a title, then writes', requiredScopes: ['notes:write'] },
    async (_a, ctx) => {
      const { title } = await ctx.ask.form('Title?', elicitationForm(z.object({ title: z.string() })), {
        key: 'title',
      });
      return text(`wrote ${title} as ${ctx.principal?.subject} with ${ctx.principal?.scopes?.join(' ')}`);
    },
  );
  endpoint = await server.listen({
    port: 0,
    // The caller's scopes come from a header: enough to show which request's principal a round runs as.
    authenticate: (req) => ({
      subject: 'alice',
      issuer: 'https://issuer.test',
      scopes: String(req.headers['x-test-scopes'] ?? '')
        .split(' ')
        .filter(Boolean),
    }),
  });
});
afterAll(() => endpoint.close());

describe('a bridged flow runs each round as the principal of the POST that carried it', () => {
  it('an answer POSTed with a token that lost the scope ends the call with insufficient_scope', async () => {
    const wire = new LegacyWire(endpoint.url, '2025-11-25', { 'x-test-scopes': 'notes:write' });
    await wire.initialize({ elicitation: {} });
    const { events } = await wire.stream('tools/call', { name: 'write_note', arguments: {} }, 1);
    await events.next(); // priming
    const question = await events.nextMessage();
    expect(question?.message).toMatchObject({ method: 'elicitation/create' });
    const answer = await wire.post(
      { jsonrpc: '2.0', id: question!.message.id, result: { action: 'accept', content: { title: 't' } } },
      { 'x-test-scopes': 'notes:read' },
    );
    expect(answer.status).toBe(202);
    const final = await events.nextMessage();
    expect(final?.message).toMatchObject({ id: 1, error: { data: { missingScopes: ['notes:write'] } } });
  });

  it('an answer with the scope completes, as the principal that answered', async () => {
    const wire = new LegacyWire(endpoint.url, '2025-11-25', { 'x-test-scopes': 'notes:write' });
    await wire.initialize({ elicitation: {} });
    const { events } = await wire.stream('tools/call', { name: 'write_note', arguments: {} }, 2);
    await events.next();
    const question = await events.nextMessage();
    await wire.post(
      { jsonrpc: '2.0', id: question!.message.id, result: { action: 'accept', content: { title: 't' } } },
      { 'x-test-scopes': 'notes:write notes:extra' },
    );
    const final = await events.nextMessage();
    expect(final?.message).toMatchObject({
      id: 2,
      result: { content: [{ type: 'text', text: 'wrote t as alice with notes:write notes:extra' }] },
    });
  });
});
