// Each workflow keeps its data in its own SQLite file under the data directory, created and seeded on first start.
// Several processes may open the same file (a fleet on one machine): the seed runs in an IMMEDIATE transaction that
// checks again whether another process seeded first, and writers wait for each other instead of failing.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { switchToWal } from 'mrtr/stores';

export type Db = Database.Database;

export interface DatabaseSpec {
  /** The file's name under the data directory, e.g. `helpdesk.db`. */
  file: string;
  /** `CREATE TABLE IF NOT EXISTS …` statements. */
  schema: string;
  /** Fills the empty tables; runs once per file, inside a transaction. */
  seed: (db: Db, random: () => number) => void;
}

export function openDatabase(dataDir: string, spec: DatabaseSpec): Db {
  mkdirSync(dataDir, { recursive: true });
  const db = new Database(join(dataDir, spec.file));
  db.pragma('busy_timeout = 5000');
  // Not a bare pragma: the switch can fail at once while another process opens the same fresh file.
  switchToWal(db, { timeoutMs: 5000 });
  db.exec(`${spec.schema}\nCREATE TABLE IF NOT EXISTS seeded (done INTEGER NOT NULL);`);
  db.transaction(() => {
    if (db.prepare('SELECT 1 FROM seeded').get()) return;
    spec.seed(db, seededRandom(spec.file));
    db.prepare('INSERT INTO seeded (done) VALUES (1)').run();
  }).immediate();
  return db;
}

/** A deterministic generator (mulberry32), so that every fresh data directory holds the same demo data. */
export function seededRandom(seed: string): () => number {
  let a = [...seed].reduce((h, c) => Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0, 2166136261);
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One element of `items`, picked by `random`. */
export const pick = <T>(items: readonly T[], random: () => number): T =>
  items[Math.floor(random() * items.length)] as T;
