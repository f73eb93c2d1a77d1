// `mrtr serve --fixture example` as a real process with people of every console role, a SQLite replay store and a
// SQLite audit trail: what the console tests sign in to, call tools on, and attack.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../helpers/free-port.js';
import { mcp } from '../helpers/mcp-http.js';
import { sessionCookie } from '../helpers/page-sessions.js';
import { type ServedCli, serveCli } from '../helpers/serve-cli.js';

export const PEOPLE = {
  'alice-token': { sub: 'alice', name: 'Alice', roles: ['requester'] },
  'bob-token': { sub: 'bob', name: 'Bob', roles: ['approver'] },
  'erin-token': { sub: 'erin', name: 'Erin', roles: ['auditor'] },
  'carol-token': { sub: 'carol', name: 'Carol', roles: ['admin'] },
  'dave-token': { sub: 'dave', name: 'Dave', roles: [] },
  // Holds `ops`, which the fixture maps to the console's approver role: he may read the queue, but a request
  // for the role `approver` is not his to decide.
  'frank-token': { sub: 'frank', name: 'Frank', roles: ['ops'] },
};
export type Token = keyof typeof PEOPLE;

export interface ConsoleFixture {
  served: ServedCli;
  origin: string;
  dir: string;
  auditDb: string;
  /** A session cookie for a person, signed in once. */
  cookie(subject: string): Promise<string>;
  call(
    token: Token,
    name: string,
    args: Record<string, unknown>,
    round?: { requestState?: string; inputResponses?: Record<string, unknown> },
    // biome-ignore lint/suspicious/noExplicitAny: replies are read as loose JSON, checked by each expectation
  ): Promise<any>;
}

export async function startConsole(extra: string[] = []): Promise<ConsoleFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'mrtr-console-'));
  const tokens = join(dir, 'tokens.json');
  writeFileSync(tokens, JSON.stringify(PEOPLE));
  const port = await freePort();
  const auditDb = join(dir, 'audit.db');
  const served = await serveCli([
    '--fixture',
    'example',
    '--port',
    String(port),
    '--tokens',
    tokens,
    '--store',
    `sqlite:${join(dir, 'replay.db')}`,
    '--audit',
    `sqlite:${auditDb}`,
    '--totp',
    join(dir, 'totp.json'),
    '--console-role',
    'approver=approver,ops',
    ...extra,
  ]);
  const origin = new URL(served.url).origin;
  const cookies = new Map<string, string>();
  return {
    served,
    origin,
    dir,
    auditDb,
    async cookie(subject) {
      let c = cookies.get(subject);
      if (!c) {
        c = await sessionCookie(origin, subject);
        cookies.set(subject, c);
      }
      return c;
    },
    async call(token, name, args, round = {}) {
      const reply = await mcp(
        served.url,
        'tools/call',
        { name, arguments: args, ...round },
        { headers: { authorization: `Bearer ${token}` } },
      );
      return reply.response;
    },
  };
}

/** The id of the approval request a first round asked about (its URL-mode link names it). */
export const approvalIdOf = (reply: {
  result: { inputRequests: Record<string, { params: { url: string } }> };
}) => new URL(Object.values(reply.result.inputRequests)[0]!.params.url).pathname.split('/')[3]!;
