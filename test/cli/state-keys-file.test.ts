// `mrtr serve --state-keys-file PATH` (what `npm start` uses): keys made once with mode 0600 and said so once; a
// restart reuses them, so a state sealed before the restart still opens after it; a bad file is named.

import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { accept, mcp } from '../helpers/mcp-http.js';
import { runCommand } from '../helpers/run-cli.js';
import { serveCli } from '../helpers/serve-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'mrtr-keys-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// Without MRTR_STATE_KEYS from the environment that runs the tests: the file is the only source here.
const env = { ...process.env };
delete env.MRTR_STATE_KEYS;

describe('mrtr serve --state-keys-file', () => {
  it('makes the keys once (0600), says so once, and a restarted server opens states sealed before', async () => {
    const file = join(dir, 'data', 'state-keys');
    delete process.env.MRTR_STATE_KEYS;
    const first = await serveCli(['--port', '0', '--state-keys-file', file]);
    expect(first.stderr()).toContain(`made new requestState keys in ${file} (mode 0600`);
    expect(first.stderr()).not.toContain('no requestState keys configured');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toMatch(/^[\w-]+:[\w-]{43}\n$/);
    const round1 = await mcp(first.url, 'tools/call', { name: 'resolve_bug', arguments: { id: 9 } });
    const requestState = round1.response.result!.requestState;

    const second = await serveCli(['--port', '0', '--state-keys-file', file]);
    expect(second.stderr()).not.toContain('made new requestState keys');
    expect(second.stderr()).not.toContain('no requestState keys configured');
    const round2 = await mcp(second.url, 'tools/call', {
      name: 'resolve_bug',
      arguments: { id: 9 },
      requestState,
      inputResponses: { resolution: accept({ resolution: 'Fixed' }) },
    });
    expect(round2.response.result?.resultType).toBe('input_required');
  });

  it('tightens a key file others can read to 0600, and says so', async () => {
    const file = join(dir, 'loose-keys');
    writeFileSync(file, `k1:${Buffer.alloc(32, 9).toString('base64url')}\n`);
    chmodSync(file, 0o644);
    const server = await serveCli(['--port', '0', '--state-keys-file', file]);
    expect(server.stderr()).toContain(`${file} was readable by others; its mode is now 0600`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('names a file with bad keys, and refuses both key flags at once', async () => {
    const bad = join(dir, 'bad-keys');
    writeFileSync(bad, 'not a key\n', { mode: 0o600 });
    const run = (args: string[]) =>
      runCommand(process.execPath, ['dist/cli/main.js', 'serve', '--port', '0', ...args], {
        encoding: 'utf8',
        timeout: 25_000,
        env,
      });
    const invalid = await run(['--state-keys-file', bad]);
    expect(invalid.status).toBe(2);
    expect(invalid.stderr).toContain(`mrtr serve: invalid requestState keys in --state-keys-file ${bad}:`);
    const both = await run(['--state-keys-file', bad, '--state-keys', 'k:x']);
    expect(both.status).toBe(2);
    expect(both.stderr).toContain('give --state-keys or --state-keys-file, not both');
  });
});

describe('mrtr serve --audit-key-file', () => {
  const noKeyEnv = () => {
    const copy = { ...env };
    delete copy.MRTR_AUDIT_KEY;
    return copy;
  };

  it('makes the signing key once (0600) with its verifier key said once, and a restart signs with the same key', async () => {
    const file = join(dir, 'data', 'audit-key');
    const audit = `sqlite:${join(dir, 'data', 'audit.db')}`;
    const saved = process.env.MRTR_AUDIT_KEY;
    delete process.env.MRTR_AUDIT_KEY;
    try {
      const first = await serveCli(['--port', '0', '--audit', audit, '--audit-key-file', file]);
      expect(first.stderr()).toContain(`made new audit signing key in ${file} (mode 0600`);
      expect(first.stderr()).not.toContain('no audit key configured');
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const verifier = /its verifier key is (\S+)/.exec(first.stderr())![1]!;
      expect(verifier).toMatch(/^mrtr-audit\+[0-9a-f]{8}\+/);
      expect(readFileSync(file, 'utf8')).toMatch(/^PRIVATE\+KEY\+mrtr-audit\+/);
      await mcp(first.url, 'tools/call', { name: 'resolve_bug', arguments: { id: 9 } });
      await first.stop();
      const second = await serveCli(['--port', '0', '--audit', audit, '--audit-key-file', file]);
      expect(second.stderr()).not.toContain('made new audit signing key');
      expect(second.stderr()).not.toContain('no audit key configured');
      await mcp(second.url, 'tools/call', { name: 'resolve_bug', arguments: { id: 9 } });
      await second.stop();
      // Checkpoints of both runs verify against the one verifier key printed the first time.
      const verified = await runCommand(
        process.execPath,
        ['dist/cli/main.js', 'audit', 'verify', '--audit', audit, '--vkey', verifier],
        { encoding: 'utf8', timeout: 25_000, env: noKeyEnv() },
      );
      // Each run: one round, its intent and its outcome.
      expect(verified.stdout).toMatch(/^intact: 4 events in 2 chain\(s\), 2 checkpoint/);
      expect(verified.status).toBe(0);
    } finally {
      if (saved !== undefined) process.env.MRTR_AUDIT_KEY = saved;
    }
  });

  it('names a file that holds no key, and refuses the flag without --audit', async () => {
    const bad = join(dir, 'bad-audit-key');
    writeFileSync(bad, 'not a key\n', { mode: 0o600 });
    const run = (args: string[]) =>
      runCommand(process.execPath, ['dist/cli/main.js', 'serve', '--port', '0', ...args], {
        encoding: 'utf8',
        timeout: 25_000,
        env: noKeyEnv(),
      });
    const invalid = await run(['--audit', `sqlite:${join(dir, 'x.db')}`, '--audit-key-file', bad]);
    expect(invalid.status).toBe(2);
    expect(invalid.stderr).toContain(`mrtr serve: invalid audit signing key in --audit-key-file ${bad}:`);
    const alone = await run(['--audit-key-file', bad]);
    expect(alone.status).toBe(2);
    expect(alone.stderr).toContain('mrtr serve: --audit-key-file needs --audit URL');
  });
});
