// `npm run bench:audit` runs (it measures nothing here: a short window only proves every sink's row is produced and
// a bad flag is named). Figures come from running it by hand; see bench/README.md.

import { describe, expect, it } from 'vitest';
import { runCommand } from '../helpers/run-cli.js';

const bench = (args: string[]) =>
  runCommand(process.execPath, ['bench/audit.mjs', ...args], { encoding: 'utf8', timeout: 60_000 });

describe('bench/audit.mjs', () => {
  it('prints a row per sink and batch size, with the no-sink anchor', async () => {
    const r = await bench(['--seconds=0.05', '--batch=4']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const rows = r.stdout.split('\n').filter((l) => /^\S.*\s(1|4)\s+[\d,]+\s+[\d.]+\s+(—|-?[\d.]+)$/.test(l));
    expect(rows.map((l) => l.replace(/\s{2,}.*/, ''))).toEqual([
      'record, JSON and hash only (no sink)',
      'SQLite, synchronous=NORMAL (default)',
      'SQLite, synchronous=FULL (fsync)',
      'JSON lines, file (best effort)',
      'record, JSON and hash only (no sink)',
      'SQLite, synchronous=NORMAL (default)',
      'SQLite, synchronous=FULL (fsync)',
      'JSON lines, file (best effort)',
    ]);
  });

  it('names a bad flag', async () => {
    const r = await bench(['--seconds=soon']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--seconds must be a positive number, got --seconds=soon');
  });
});
