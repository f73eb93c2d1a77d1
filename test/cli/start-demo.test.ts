// `npm start` (scripts/start-demo.mjs): a loopback demo keeps one generated requestState key under ./data (0600),
// says so once when it creates it, and never warns about MRTR_STATE_KEYS.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, requireBuiltCli } from '../client/helpers.js';

const cwd = mkdtempSync(join(tmpdir(), 'mrtr-start-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

/** Start it on a free port, wait for "listening on", stop it; what it said on stderr. */
function startOnce(env: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const { MRTR_STATE_KEYS: _, ...rest } = process.env;
    const child = spawn(process.execPath, [join(ROOT, 'scripts/start-demo.mjs'), '--port', '0'], {
      cwd,
      env: { ...rest, ...env },
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.stdout.on('data', (c: Buffer) => {
      if (c.toString().includes('listening on')) child.kill('SIGTERM');
    });
    child.on('error', reject);
    child.on('exit', () => resolve(stderr));
  });
}

describe('npm start', () => {
  it('generates the key once (0600 in ./data), says so once, and never warns about MRTR_STATE_KEYS', {
    timeout: 30_000,
  }, async () => {
    requireBuiltCli();
    const first = await startOnce();
    expect(first).toMatch(
      /generated a requestState key for this loopback demo in data\/state-keys \(mode 0600\)/,
    );
    expect(first).not.toMatch(/no requestState keys configured/);
    const file = join(cwd, 'data', 'state-keys');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const key = readFileSync(file, 'utf8');
    const second = await startOnce();
    expect(second).not.toMatch(/generated a requestState key/);
    expect(second).not.toMatch(/no requestState keys configured/);
    expect(readFileSync(file, 'utf8')).toBe(key);
  });
});
