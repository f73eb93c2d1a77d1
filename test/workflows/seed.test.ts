// The workflows' databases are seeded once, even when several processes open a fresh data directory at the same
// moment (a fleet's instances starting together): the seed runs in an IMMEDIATE transaction that looks again.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect, it } from 'vitest';

const BUILT = join(import.meta.dirname, '../../dist/workflows/index.js');

it('three processes opening one fresh data directory at once seed it once', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mrtr-wf-seed-'));
  try {
    const said: string[] = [];
    const open = () =>
      new Promise<number | null>((resolve) => {
        const child = spawn(process.execPath, [
          '--input-type=module',
          '-e',
          `const { workflowsServer } = await import(${JSON.stringify(BUILT)}); workflowsServer({ dataDir: ${JSON.stringify(dir)} });`,
        ]);
        child.stderr.on('data', (chunk: Buffer) => said.push(chunk.toString()));
        child.once('exit', resolve);
      });
    expect(await Promise.all([open(), open(), open()]), said.join('')).toEqual([0, 0, 0]);
    const count = (file: string, table: string) => {
      const db = new Database(join(dir, file), { readonly: true });
      try {
        return (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
      } finally {
        db.close();
      }
    };
    expect(count('helpdesk.db', 'assets')).toBe(5000);
    expect(count('helpdesk.db', 'tickets')).toBe(2000);
    expect(count('identity.db', 'profiles')).toBe(3000);
    expect(count('documents.db', 'documents')).toBe(8000);
    expect(count('cloud.db', 'vms')).toBe(4000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
