// Narrowing a retrieval end to end: search_documents over 8,000 seeded documents. Facets are counted over the
// caller's readable matches only (checked against the database), a client with sampling lets its model propose the
// filter, and a restricted document never shows, in results or counts. Then the attacks.
import { type InputQuestion, samplingResolver, scriptedResolver } from 'mrtr/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attackSuite } from './attacks.js';
import { accept, startWorkflows, type WorkflowsServer } from './workflows-server.js';

let s: WorkflowsServer;
beforeAll(async () => {
  s = await startWorkflows();
});
afterAll(() => s.stop());

/** What `roles` may read of the documents whose title has `word`: the rule, restated in SQL for the check. */
const readableCount = (word: string, department: string, where = '1') =>
  s.query<{ n: number }>(
    'documents.db',
    `SELECT count(*) AS n FROM documents WHERE title LIKE ? AND (restricted = 0 OR department = ?) AND ${where}`,
    `%${word}%`,
    department,
  )[0]!.n;
const enumOf = (q: InputQuestion, field: string) =>
  (q.request.params as { requestedSchema: { properties: Record<string, { enum?: string[] }> } })
    .requestedSchema.properties[field]?.enum ?? [];
const lines = (result: { content?: unknown }) =>
  (result.content as Array<{ text: string }>)[0]!.text.split('\n');

describe('search_documents', () => {
  it('asks to narrow with facets counted over the readable matches, until few enough remain', async () => {
    const asked: InputQuestion[] = [];
    // Narrow by the most frequent value of every facet offered.
    const narrow = (q: InputQuestion) => {
      asked.push(q);
      const fields = Object.keys(
        (q.request.params as { requestedSchema: { properties: object } }).requestedSchema.properties,
      );
      return accept(Object.fromEntries(fields.map((f) => [f, enumOf(q, f)[0] as string])));
    };
    const client = s.client('alice', [
      scriptedResolver({ 'narrow-1': narrow, 'narrow-2': narrow, 'narrow-3': narrow }),
    ]);
    const outcome = await client.callTool('search_documents', { query: 'incident' });
    expect(outcome.status).toBe('complete');
    if (outcome.status !== 'complete') return;
    const total = readableCount('incident', 'engineering');
    const all = s.query<{ n: number }>(
      'documents.db',
      "SELECT count(*) AS n FROM documents WHERE title LIKE '%incident%'",
    )[0]!.n;
    expect(total).toBeLessThan(all); // some matches are restricted to other departments
    const first = asked[0]!;
    expect(first.message).toContain(`${total} documents match "incident"`);
    // Every count shown is the database's count of what alice may read, e.g. finance's public documents only.
    for (const dept of ['finance', 'engineering', 'legal'])
      expect(first.message).toContain(
        `${dept} (${readableCount('incident', 'engineering', `department = '${dept}'`)})`,
      );
    const shown = lines(outcome.result)
      .slice(1)
      .filter((l) => l.startsWith('#'));
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.length).toBeLessThanOrEqual(20);
    for (const line of shown) {
      const id = Number(/^#(\d+)/.exec(line)![1]);
      const [doc] = s.query<{ restricted: number; department: string }>(
        'documents.db',
        'SELECT restricted, department FROM documents WHERE id = ?',
        id,
      );
      expect(doc!.restricted === 0 || doc!.department === 'engineering').toBe(true);
    }
  });

  it("never counts a document the caller may not read: bob's facets differ from alice's by the restricted ones", async () => {
    const messages: Record<string, string> = {};
    for (const who of ['alice', 'bob'] as const) {
      const client = s.client(who, [
        scriptedResolver({
          'narrow-1': (q) => {
            messages[who] = q.message ?? '';
            return { action: 'cancel' };
          },
        }),
      ]);
      await client.callTool('search_documents', { query: 'budget' });
    }
    const count = (who: 'alice' | 'bob', dept: string) =>
      Number(new RegExp(`${dept} \\((\\d+)\\)`).exec(messages[who]!)![1]);
    const restricted = (dept: string) =>
      s.query<{ n: number }>(
        'documents.db',
        "SELECT count(*) AS n FROM documents WHERE title LIKE '%budget%' AND restricted = 1 AND department = ?",
        dept,
      )[0]!.n;
    expect(count('alice', 'engineering') - count('bob', 'engineering')).toBe(restricted('engineering'));
    expect(count('bob', 'finance') - count('alice', 'finance')).toBe(restricted('finance'));
    expect(restricted('finance')).toBeGreaterThan(0);
  });

  it("lets the client's model propose the filter when the client offers sampling", async () => {
    const prompts: string[] = [];
    const model = samplingResolver(async (params) => {
      prompts.push(JSON.stringify(params.messages));
      return {
        role: 'assistant',
        model: 'test-model',
        content: { type: 'text', text: 'Try {"kind": "runbook", "department": "security", "year": 2023}' },
      };
    });
    const forms: string[] = [];
    const client = s.client('carol', [
      model,
      scriptedResolver(
        {},
        {
          fallback: (q) => {
            forms.push(q.key);
            return undefined;
          },
        },
      ),
    ]);
    const outcome = await client.callTool('search_documents', { query: 'backup' });
    expect(outcome).toMatchObject({ status: 'complete', rounds: 2 });
    expect(forms).toEqual([]);
    expect(prompts[0]).toContain('documents match \\"backup\\"');
    if (outcome.status !== 'complete') return;
    const shown = lines(outcome.result).filter((l) => l.startsWith('#'));
    expect(shown.length).toBeGreaterThan(0);
    for (const line of shown) expect(line).toMatch(/^#\d+ backup runbook security 2023 /);
  });

  it('falls back to the person when the model proposes what the matches do not have', async () => {
    const model = samplingResolver(async () => ({
      role: 'assistant',
      model: 'm',
      content: { type: 'text', text: '{"department": "the moon"}' },
    }));
    const asked: string[] = [];
    const client = s.client('bob', [
      model,
      scriptedResolver(
        {},
        {
          fallback: (q) => {
            asked.push(q.key);
            return q.key.startsWith('narrow')
              ? accept({ kind: 'policy', year: '2025', department: 'finance' })
              : undefined;
          },
        },
      ),
    ]);
    const outcome = await client.callTool('search_documents', { query: 'vendor' });
    expect(outcome.status).toBe('complete');
    expect(asked[0]).toBe('narrow-1');
  });
});

const modelSays = (text: string) => ({
  role: 'assistant',
  model: 'test-model',
  content: { type: 'text', text },
});

describe('search_documents under attack', () => {
  attackSuite(
    () => s,
    () => ({
      tool: 'search_documents',
      owner: 'alice',
      intruder: 'bob',
      args: { query: 'travel' },
      changedArgs: { query: 'hiring' },
      // The raw client declares sampling: the first question is the model's.
      first: { 'model-filter-1': modelSays('{"kind": "policy", "year": 2024, "department": "engineering"}') },
      other: { 'model-filter-1': modelSays('{"kind": "report"}') },
      later: { 'narrow-1': accept({ kind: 'report' }) },
      rest: () => ({}),
    }),
  );
});
