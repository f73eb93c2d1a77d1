// `mrtr serve --fixture workflows`: a data directory it cannot use is named at start-up, with exit status 1.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { runCommand } from '../helpers/run-cli.js';

it('names a --data directory it cannot create, and exits 1', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mrtr-wf-data-'));
  try {
    const file = join(dir, 'a-file');
    writeFileSync(file, '');
    const out = await runCommand(
      process.execPath,
      ['dist/cli/main.js', 'serve', '--fixture', 'workflows', '--port', '0', '--data', join(file, 'data')],
      { encoding: 'utf8', timeout: 20_000 },
    );
    expect(out.status).toBe(1);
    expect(out.stderr).toContain("mrtr serve: cannot start fixture 'workflows': ENOTDIR");
    expect(out.stderr).toContain(join(file, 'data'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
