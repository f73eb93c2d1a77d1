// Every command that makes the directory of a file it writes, given a path under /proc: each fails at once naming the
// directory it could not make. Node's recursive mkdir looped for ever there (full CPU, nothing said); a regression
// shows here as the spawn's timeout (signal SIGTERM) instead of a hang.

import { describe, expect, it } from 'vitest';
import { runCommand } from '../helpers/run-cli.js';

const env = { ...process.env };
delete env.MRTR_STATE_KEYS;
delete env.MRTR_AUDIT_KEY;

const mrtr = async (args: string[]) => {
  const out = await runCommand(process.execPath, ['dist/cli/main.js', ...args], {
    encoding: 'utf8',
    timeout: 25_000,
    env,
  });
  expect(out.signal).toBeNull();
  return out;
};
const CANNOT = (file: string) =>
  `cannot make the directory /proc/mrtr-none for ${file}: ENOENT: no such file or directory, mkdir '/proc/mrtr-none'`;

describe('a file under /proc fails fast with a clear message', () => {
  it('mrtr serve --store sqlite:PATH (SqliteStore)', async () => {
    const file = '/proc/mrtr-none/store.db';
    const out = await mrtr(['serve', '--port', '0', '--store', `sqlite:${file}`]);
    expect(out.stderr).toContain(`mrtr serve: invalid --store: ${CANNOT(file)}`);
    expect(out.status).toBe(2);
  });

  it('mrtr serve --state-keys-file PATH (secret-file.ts)', async () => {
    const file = '/proc/mrtr-none/state-keys';
    const out = await mrtr(['serve', '--port', '0', '--state-keys-file', file]);
    expect(out.stderr).toContain(`cannot write --state-keys-file ${file}: ${CANNOT(file)}`);
    expect(out.status).toBe(2);
  });

  it('mrtr users totp --totp PATH (users.ts)', async () => {
    const file = '/proc/mrtr-none/totp.json';
    const out = await mrtr(['users', 'totp', 'alice', '--totp', file, '--no-qr']);
    expect(out.stderr).toContain(`mrtr users totp: cannot write ${file}: ${CANNOT(file)}`);
    expect(out.status).toBe(1);
  });
});
