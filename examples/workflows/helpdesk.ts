// Helpdesk triage: `create_ticket` files a ticket. A missing category is asked as a choice, the most likely one
// (from the words of the title and description) first; a hardware ticket also needs the asset tag of the device,
// checked against the asset register. Anyone signed in may file a ticket; it is filed in the caller's name.
import { type McpServer, type RequestContext, text } from 'mrtr/server';
import { z } from 'zod';
import { type Db, openDatabase, pick } from './db.js';

export const CATEGORIES = ['hardware', 'access', 'software', 'network', 'other'] as const;
type Category = (typeof CATEGORIES)[number];

/** Words that point at a category. Crude on purpose: it only orders the choices, the person decides. */
const HINTS: Record<Category, readonly string[]> = {
  hardware: ['laptop', 'screen', 'keyboard', 'monitor', 'printer', 'battery', 'mouse', 'dock', 'broken'],
  access: ['password', 'login', 'account', 'locked', 'permission', 'access', 'mfa', 'sso'],
  software: ['install', 'crash', 'error', 'update', 'licence', 'license', 'app', 'excel'],
  network: ['wifi', 'wi-fi', 'network', 'vpn', 'dns', 'connection', 'offline'],
  other: [],
};

/** The categories, most likely first; ties keep the catalogue order, so the question is the same on every round. */
export function rankCategories(words: string): Category[] {
  const lower = words.toLowerCase();
  const score = (c: Category) => HINTS[c].filter((w) => lower.includes(w)).length;
  return [...CATEGORIES].sort((a, b) => score(b) - score(a));
}

export function openHelpdesk(dataDir: string): Db {
  return openDatabase(dataDir, {
    file: 'helpdesk.db',
    schema: `
      CREATE TABLE IF NOT EXISTS assets (tag TEXT PRIMARY KEY, kind TEXT NOT NULL, holder TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('in_use', 'spare', 'retired')));
      CREATE TABLE IF NOT EXISTS tickets (id INTEGER PRIMARY KEY, flow_id TEXT UNIQUE, requester TEXT NOT NULL,
        title TEXT NOT NULL, category TEXT NOT NULL, asset_tag TEXT REFERENCES assets(tag), created_at TEXT NOT NULL);`,
    seed(db, random) {
      const kinds = ['laptop', 'monitor', 'dock', 'phone', 'printer'];
      const asset = db.prepare('INSERT INTO assets (tag, kind, holder, status) VALUES (?, ?, ?, ?)');
      for (let i = 1; i <= 5000; i++) {
        const status = random() < 0.1 ? 'retired' : random() < 0.1 ? 'spare' : 'in_use';
        asset.run(assetTag(i), pick(kinds, random), `user${i % 400}`, status);
      }
      const ticket = db.prepare(
        'INSERT INTO tickets (requester, title, category, created_at) VALUES (?, ?, ?, ?)',
      );
      for (let i = 1; i <= 2000; i++)
        ticket.run(
          `user${i % 400}`,
          `Historic ticket ${i}`,
          pick(CATEGORIES, random),
          '2026-01-01T00:00:00Z',
        );
    },
  });
}

export const assetTag = (n: number) => `AST-${String(n).padStart(5, '0')}`;

const Input = z.object({
  title: z.string().min(3).max(200),
  description: z.string().max(4000).default(''),
  category: z.enum(CATEGORIES).optional().describe('Leave out to be asked, with the likeliest first'),
});

/** Tries at an asset tag before the call ends: a person who cannot find it should look it up, not guess. */
const ASSET_TRIES = 3;

export function registerHelpdesk(server: McpServer, db: Db): void {
  const findAsset = db.prepare<[string], { status: string; kind: string }>(
    'SELECT status, kind FROM assets WHERE tag = ?',
  );
  const insert = db.prepare(
    `INSERT INTO tickets (flow_id, requester, title, category, asset_tag, created_at)
     VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (flow_id) DO NOTHING`,
  );
  const byFlow = db.prepare<[string], { id: number }>('SELECT id FROM tickets WHERE flow_id = ?');

  server.tool(
    {
      name: 'create_ticket',
      title: 'File a helpdesk ticket',
      description:
        'Files a ticket; asks for the category when it is not given, and for the asset tag of hardware',
      input: Input,
    },
    async ({ title, description, category }, ctx: RequestContext) => {
      const requester = ctx.principal?.subject ?? 'anonymous';
      const chosen =
        category ??
        (await ctx.ask.choose(
          `Which kind of problem is "${title}"?`,
          rankCategories(`${title} ${description}`),
          {
            key: 'category',
          },
        ));
      let tag: string | null | undefined = null;
      if (chosen === 'hardware') tag = await askAssetTag(ctx, (t) => findAsset.get(t));
      if (tag === undefined)
        return text(`No ticket filed: no asset in use after ${ASSET_TRIES} tries`, { isError: true });
      // The effect, after the last question; keyed by the flow, so a re-run after a crash files nothing twice.
      const ticket = await ctx.ask.step('create-ticket', () => {
        insert.run(ctx.flowId, requester, title, chosen, tag, new Date().toISOString());
        return byFlow.get(ctx.flowId)?.id ?? 0;
      });
      ctx.audit.note({ ticket, category: chosen, asset: tag });
      return text(`Ticket #${ticket} filed for ${requester}: ${chosen}${tag ? `, asset ${tag}` : ''}`);
    },
  );
}

/** Asks until the tag names an asset in use or spare; each try is its own question, so the journal keeps them all. */
async function askAssetTag(
  ctx: RequestContext,
  find: (tag: string) => { status: string } | undefined,
): Promise<string | null | undefined> {
  let problem = '';
  for (let attempt = 1; attempt <= ASSET_TRIES; attempt++) {
    const tag = (
      await ctx.ask.text(`${problem}Asset tag of the device (on its label, e.g. AST-01234)?`, {
        key: `asset-${attempt}`,
        minLength: 9,
        maxLength: 9,
      })
    ).toUpperCase();
    const asset = find(tag);
    if (asset && asset.status !== 'retired') return tag;
    problem = asset ? `${tag} is retired. ` : `${tag} is not in the asset register. `;
  }
  return undefined;
}
