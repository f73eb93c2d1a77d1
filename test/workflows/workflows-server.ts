// `mrtr serve --fixture workflows` as a real process with everything on: development tokens, the replay guard on
// SQLite, the audit trail on SQLite, a fresh data directory. Tests read the workflows' databases and the audit
// trail straight from the files, the way an operator would.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { type AuditRecord, SqliteAuditReader } from 'mrtr/audit';
import { type InputResolver, McpClient } from 'mrtr/client';
import { mcp } from '../helpers/mcp-http.js';
import { spawnServe } from './spawn-serve.js';

export const TOKENS_FILE = join(import.meta.dirname, '../../examples/workflows/tokens.json');
export const TOKENS = { alice: 'alice-dev-token', bob: 'bob-dev-token', carol: 'carol-dev-token' } as const;
export type Who = keyof typeof TOKENS;
const KEYS = `k1:${Buffer.alloc(32, 9).toString('base64url')}`;

export interface WorkflowsServer {
  url: string;
  dataDir: string;
  stderr: () => string;
  /** Read-only SQL on one of the workflows' databases. */
  query: <T>(file: string, sql: string, ...params: unknown[]) => T[];
  /** A write to one of the workflows' databases, as another program would make it meanwhile. */
  write: (file: string, sql: string, ...params: unknown[]) => void;
  /** The audit trail's records, oldest first. */
  audit: () => Promise<AuditRecord[]>;
  client: (who: Who, resolvers: InputResolver[]) => McpClient;
  /** Stop the server, close what the test opened and remove the data directory (call it from afterAll). */
  stop: () => Promise<void>;
  /** One raw tools/call as `who`, for the attacks the client would never send. */
  call: (who: Who, params: Record<string, unknown>, id?: string) => ReturnType<typeof mcp>;
}

export async function startWorkflows(): Promise<WorkflowsServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'mrtr-workflows-'));
  const port = await import('../helpers/free-port.js').then((m) => m.freePort());
  const served = await spawnServe([
    '--fixture',
    'workflows',
    '--data',
    dataDir,
    '--port',
    String(port),
    '--state-keys',
    KEYS,
    '--tokens',
    TOKENS_FILE,
    '--store',
    `sqlite:${join(dataDir, 'replay.db')}`,
    '--audit',
    `sqlite:${join(dataDir, 'audit.db')}`,
    '--audit-instance',
    'wf-1',
    '--totp',
    join(dataDir, 'totp.json'),
  ]);
  const open: Database.Database[] = [];
  const clients: McpClient[] = [];
  const stop = async () => {
    for (const c of clients) await c.close();
    for (const db of open) db.close();
    await served.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  const dbs = new Map<string, Database.Database>();
  return {
    url: served.url,
    dataDir,
    stop,
    stderr: served.stderr,
    query<T>(file: string, sql: string, ...params: unknown[]) {
      let db = dbs.get(file);
      if (!db) {
        db = new Database(join(dataDir, file), { readonly: true });
        dbs.set(file, db);
        open.push(db);
      }
      return db.prepare(sql).all(...params) as T[];
    },
    write(file, sql, ...params) {
      const db = new Database(join(dataDir, file));
      try {
        db.pragma('busy_timeout = 5000');
        db.prepare(sql).run(...params);
      } finally {
        db.close();
      }
    },
    async audit() {
      const reader = new SqliteAuditReader(join(dataDir, 'audit.db'));
      try {
        return (await reader.events()).map((e) => JSON.parse(e.text) as AuditRecord);
      } finally {
        await reader.close();
      }
    },
    client(who, resolvers) {
      // Without the tasks extension: these tests drive each control as MRTR questions, the approver's link included
      // (test/controls/request-access-task.test.ts and test/cli/npm-start.test.ts take the task path).
      const client = new McpClient({ server: served.url, token: TOKENS[who], resolvers, tasks: false });
      clients.push(client);
      return client;
    },
    call: (who, params, id) =>
      mcp(served.url, 'tools/call', params, {
        headers: { authorization: `Bearer ${TOKENS[who]}` },
        ...(id === undefined ? {} : { id }),
      }),
  };
}

export const accept = (content: Record<string, string | number | boolean | string[]>) => ({
  action: 'accept' as const,
  content,
});
