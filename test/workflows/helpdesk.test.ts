// Helpdesk triage end to end: create_ticket over HTTP with the project's client, against `mrtr serve --fixture
// workflows`, checked in the helpdesk database; then the attacks.
import { randomUUID } from 'node:crypto';
import { type InputQuestion, scriptedResolver } from 'mrtr/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attackSuite, nestedObject, TOO_DEEP } from './attacks.js';
import { accept, startWorkflows, type WorkflowsServer } from './workflows-server.js';

let s: WorkflowsServer;
beforeAll(async () => {
  s = await startWorkflows();
});
afterAll(() => s.stop());

const tickets = () => s.query<{ n: number }>('helpdesk.db', 'SELECT count(*) AS n FROM tickets')[0]!.n;
const assetWith = (status: string) =>
  s.query<{ tag: string }>('helpdesk.db', 'SELECT tag FROM assets WHERE status = ? LIMIT 1', status)[0]!.tag;
const choicesOf = (q: InputQuestion) =>
  (q.request.params as { requestedSchema: { properties: { choice: { enum: string[] } } } }).requestedSchema
    .properties.choice.enum;

describe('create_ticket', () => {
  it('asks the category (likeliest first), then an asset tag checked against the register, then files once', async () => {
    const seen: InputQuestion[] = [];
    const inUse = assetWith('in_use');
    const client = s.client('alice', [
      scriptedResolver(
        {
          category: (q) => {
            seen.push(q);
            return accept({ choice: 'hardware' });
          },
          'asset-1': (q) => {
            seen.push(q);
            return accept({ text: 'AST-99999' });
          }, // not in the register
          'asset-2': (q) => {
            seen.push(q);
            return accept({ text: assetWith('retired') });
          },
          'asset-3': (q) => {
            seen.push(q);
            return accept({ text: inUse.toLowerCase() });
          },
        },
        { validate: true },
      ),
    ]);
    const outcome = await client.callTool('create_ticket', {
      title: 'Laptop screen broken',
      description: 'The screen of my laptop flickers, then goes black',
    });
    expect(outcome.status).toBe('complete');
    if (outcome.status !== 'complete') return;
    expect(outcome.rounds).toBe(5);
    expect(choicesOf(seen[0]!)[0]).toBe('hardware');
    expect(seen[2]!.message).toContain('AST-99999 is not in the asset register');
    expect(seen[3]!.message).toContain('is retired');
    const text = (outcome.result.content as Array<{ text: string }>)[0]!.text;
    const [row] = s.query<{ id: number; requester: string; category: string; asset_tag: string }>(
      'helpdesk.db',
      'SELECT id, requester, category, asset_tag FROM tickets WHERE title = ?',
      'Laptop screen broken',
    );
    expect(row).toMatchObject({ requester: 'alice', category: 'hardware', asset_tag: inUse });
    expect(text).toBe(`Ticket #${row!.id} filed for alice: hardware, asset ${inUse}`);
  });

  it('orders the choices by the words of the ticket', async () => {
    let choices: string[] = [];
    const client = s.client('bob', [
      scriptedResolver({
        category: (q) => {
          choices = choicesOf(q);
          return accept({ choice: 'network' });
        },
      }),
    ]);
    const outcome = await client.callTool('create_ticket', { title: 'VPN connection drops on wifi' });
    expect(outcome.status).toBe('complete');
    expect(choices[0]).toBe('network');
    expect(new Set(choices).size).toBe(5);
  });

  it('files at once when the category is given and needs no follow-up', async () => {
    const before = tickets();
    const client = s.client('bob', []);
    const outcome = await client.callTool('create_ticket', { title: 'Locked out', category: 'access' });
    expect(outcome).toMatchObject({ status: 'complete', rounds: 1 });
    expect(tickets()).toBe(before + 1);
  });

  it('ends without a ticket after three asset tags that are not in use', async () => {
    const before = tickets();
    const client = s.client('alice', [
      scriptedResolver({}, { fallback: () => accept({ text: 'AST-99998' }) }),
    ]);
    const outcome = await client.callTool('create_ticket', { title: 'Dock dead', category: 'hardware' });
    expect(outcome.status).toBe('complete');
    if (outcome.status === 'complete') {
      expect(outcome.result.isError).toBe(true);
      expect(JSON.stringify(outcome.result.content)).toContain('no asset in use after 3 tries');
    }
    expect(tickets()).toBe(before);
  });
});

describe('create_ticket under attack', () => {
  it('files nothing for a one-round call whose extra argument nests 1,000 levels deep; the refusal is audited', async () => {
    // As reported: with the category given, create_ticket files at once — it filed a ticket and left no event.
    const before = tickets();
    const id = randomUUID();
    const r = await s.call(
      'bob',
      { name: 'create_ticket', arguments: { title: 'Deep', category: 'access', extra: nestedObject(1000) } },
      id,
    );
    expect(r.response.error).toEqual(TOO_DEEP.error);
    expect(tickets()).toBe(before);
    const events = (await s.audit()).filter((e) => e.requestId === id);
    expect(events.map((e) => [e.outcome, e.reason, e.arguments])).toEqual([
      ['refused', 'code -32602', TOO_DEEP.recorded],
    ]);
  });

  attackSuite(
    () => s,
    () => ({
      tool: 'create_ticket',
      owner: 'alice',
      intruder: 'bob',
      args: { title: 'Monitor broken' },
      changedArgs: { title: 'Monitor broken', category: 'other' },
      first: { category: accept({ choice: 'hardware' }) },
      other: { category: accept({ choice: 'other' }) },
      later: { 'asset-1': accept({ text: assetWith('in_use') }) },
      rest: () => ({ 'asset-1': accept({ text: assetWith('in_use') }) }),
      effects: tickets,
    }),
  );
});
