// Narrowing a retrieval: `search_documents` finds documents by words of their title. A query that matches too much
// asks to narrow it, with facets counted over the actual matches — or, when the client offers sampling, lets the
// client's model propose the filter first. A restricted document is readable only by its department (a role of
// that name) and by `admin`; the others never see it, not in the results and not in a facet count.
import { elicitationForm } from 'mrtr/flow';
import { type McpServer, type RequestContext, text } from 'mrtr/server';
import { z } from 'zod';
import { type Db, openDatabase, pick } from './db.js';
import { DEPARTMENTS } from './identity.js';

export const KINDS = ['policy', 'report', 'runbook', 'contract', 'minutes'] as const;
const TOPICS = ['incident', 'budget', 'onboarding', 'vendor', 'travel', 'hiring', 'backup', 'audit'] as const;
const YEARS = [2020, 2021, 2022, 2023, 2024, 2025, 2026];

/** More matches than this and the person is asked to narrow. */
export const MAX_RESULTS = 20;
/** Narrowing rounds at most; then the first results are shown as they are. */
const NARROWINGS = 3;
const FACETS = ['kind', 'department', 'year'] as const;
type Facet = (typeof FACETS)[number];
type Filter = Partial<Record<Facet, string>>;
interface Doc {
  id: number;
  title: string;
  kind: string;
  department: string;
  year: number;
}

export function openDocuments(dataDir: string): Db {
  return openDatabase(dataDir, {
    file: 'documents.db',
    schema: `CREATE TABLE IF NOT EXISTS documents (id INTEGER PRIMARY KEY, title TEXT NOT NULL, kind TEXT NOT NULL,
      department TEXT NOT NULL, year INTEGER NOT NULL, restricted INTEGER NOT NULL);`,
    seed(db, random) {
      const doc = db.prepare(
        'INSERT INTO documents (title, kind, department, year, restricted) VALUES (?, ?, ?, ?, ?)',
      );
      for (let i = 1; i <= 8000; i++) {
        const [topic, kind, dept] = [pick(TOPICS, random), pick(KINDS, random), pick(DEPARTMENTS, random)];
        const year = pick(YEARS, random);
        doc.run(`${topic} ${kind} ${dept} ${year} no. ${i}`, kind, dept, year, random() < 0.3 ? 1 : 0);
      }
    },
  });
}

const Input = z.object({
  query: z.string().min(2).max(200).describe('Words of the title'),
  kind: z.enum(KINDS).optional(),
  department: z.string().max(100).optional(),
  year: z.number().int().optional(),
});

export function registerDocuments(server: McpServer, db: Db): void {
  /** Every document of the query the caller may read: the one place the access rule is applied. */
  const readable = (ctx: RequestContext, words: string[], filter: Filter): Doc[] => {
    const roles = ctx.principal?.roles ?? [];
    // Each word must appear in the title; LIKE's own wildcards in a word are matched literally.
    const where = words.map(() => "title LIKE ? ESCAPE '\\'");
    const params: (string | number)[] = words.map((w) => `%${w.replace(/[%_\\]/g, '\\$&')}%`);
    if (!roles.includes('admin')) {
      where.push(`(restricted = 0 OR department IN (SELECT value FROM json_each(?)))`);
      params.push(JSON.stringify(roles));
    }
    for (const facet of FACETS) {
      if (filter[facet] === undefined) continue;
      where.push(`${facet} = ?`);
      params.push(facet === 'year' ? Number(filter[facet]) : (filter[facet] as string));
    }
    return db
      .prepare<typeof params, Doc>(
        `SELECT id, title, kind, department, year FROM documents WHERE ${where.join(' AND ')} ORDER BY id`,
      )
      .all(...params);
  };

  server.tool(
    {
      name: 'search_documents',
      title: 'Search documents',
      description: `Finds documents you may read; more than ${MAX_RESULTS} matches asks you to narrow the search`,
      input: Input,
    },
    async ({ query, ...given }, ctx: RequestContext) => {
      const words = query.toLowerCase().split(/\s+/).filter(Boolean);
      const filter: Filter = {};
      for (const facet of FACETS) if (given[facet] !== undefined) filter[facet] = String(given[facet]);
      let matches = readable(ctx, words, filter);
      for (let round = 1; matches.length > MAX_RESULTS && round <= NARROWINGS; round++) {
        const counts = facetCounts(matches, filter);
        if (counts.length === 0) break; // every match looks the same: nothing left to narrow by
        const extra = await narrow(ctx, query, matches.length, counts, round);
        Object.assign(filter, extra);
        matches = readable(ctx, words, filter);
      }
      ctx.audit.note({ matches: matches.length, filter });
      if (matches.length === 0) return text(`No document you may read matches "${query}"`);
      const shown = matches.slice(0, MAX_RESULTS).map((d) => `#${d.id} ${d.title}`);
      const more =
        matches.length > MAX_RESULTS ? `\n(${matches.length - MAX_RESULTS} more: narrow the query)` : '';
      return text(`${matches.length} documents:\n${shown.join('\n')}${more}`);
    },
  );
}

type Counts = Array<{ facet: Facet; values: Array<[string, number]> }>;

/** For each facet not yet fixed and with two values or more among the matches: its values, most frequent first. */
export function facetCounts(matches: readonly Doc[], fixed: Filter): Counts {
  const out: Counts = [];
  for (const facet of FACETS) {
    if (fixed[facet] !== undefined) continue;
    const tally = new Map<string, number>();
    for (const d of matches) tally.set(String(d[facet]), (tally.get(String(d[facet])) ?? 0) + 1);
    if (tally.size < 2) continue;
    out.push({ facet, values: [...tally].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])) });
  }
  return out;
}

const describe = (counts: Counts) =>
  counts.map((c) => `${c.facet}: ${c.values.map(([v, n]) => `${v} (${n})`).join(', ')}`).join('\n');

/** Sampling first when the client offers it (its model reads the facets); a person's form otherwise or when the
 * model's answer names no value the matches have. */
async function narrow(ctx: RequestContext, query: string, total: number, counts: Counts, round: number) {
  const message = `${total} documents match "${query}". Narrow by:\n${describe(counts)}`;
  if (ctx.ask.supports('sampling')) {
    const proposal = await ctx.ask.sample(
      {
        messages: [
          {
            role: 'user',
            content: {
              type: 'text',
              text: `${message}\nAnswer with one JSON object of facet to value, e.g. {"kind":"policy"}.`,
            },
          },
        ],
        maxTokens: 100,
      },
      { key: `model-filter-${round}` },
    );
    const filter = proposedFilter(proposal.content, counts);
    if (filter) return filter;
  }
  const shape: Record<string, z.ZodOptional<z.ZodEnum>> = {};
  for (const c of counts)
    shape[c.facet] = z
      .enum(c.values.map(([v]) => v) as [string, ...string[]])
      .optional()
      .meta({ title: c.facet });
  const answer = await ctx.ask.form(message, elicitationForm(z.object(shape)), { key: `narrow-${round}` });
  return answer as Filter;
}

/** The model's JSON, kept only where it names a facet value the matches really have. */
function proposedFilter(content: unknown, counts: Counts): Filter | undefined {
  const said = (content as { type?: string; text?: string })?.text;
  if (typeof said !== 'string') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(said.slice(said.indexOf('{'), said.lastIndexOf('}') + 1));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const filter: Filter = {};
  for (const c of counts) {
    const v = (parsed as Record<string, unknown>)[c.facet];
    if (v !== undefined && c.values.some(([value]) => value === String(v))) filter[c.facet] = String(v);
  }
  return Object.keys(filter).length > 0 ? filter : undefined;
}
