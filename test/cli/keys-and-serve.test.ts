// The CLI's key handling and serve's argument errors, run as a person would run them.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it, onTestFinished } from 'vitest';
import { Keyring } from '../../src/state/index.js';
import { runCommand } from '../helpers/run-cli.js';

const mrtr = (args: string[], env: Record<string, string> = {}) =>
  runCommand(process.execPath, ['dist/cli/main.js', ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 25_000,
  });

describe('mrtr keys', () => {
  it('generates a key the keyring accepts, with an optional kid', async () => {
    const out = await mrtr(['keys', 'generate', '--kid', 'prod1']);
    expect(out.status).toBe(0);
    const spec = out.stdout.trim();
    expect(spec).toMatch(/^prod1:[A-Za-z0-9_-]{43}$/);
    expect(Keyring.fromSpec(spec).currentKid).toBe('prod1');
    expect((await mrtr(['keys', 'generate'])).stdout.trim()).not.toBe(
      (await mrtr(['keys', 'generate'])).stdout.trim(),
    );
  });

  it('explains itself on bad usage', async () => {
    const none = await mrtr(['keys']);
    expect(none.status).toBe(2);
    expect(none.stderr).toContain('usage: mrtr keys generate');
    const wrong = await mrtr(['keys', 'rotate']);
    expect(wrong.stderr).toContain("unknown subcommand 'rotate'");
  });
});

describe('mrtr serve argument errors', () => {
  it('names a malformed key spec without printing the secret', async () => {
    const out = await mrtr(['serve', '--port', '0', '--state-keys', 'k1:tooshort']);
    expect(out.status).toBe(2);
    expect(out.stderr).toContain('invalid state keys');
    expect(out.stderr).not.toContain('tooshort');
    const env = await mrtr(['serve', '--port', '0'], { MRTR_STATE_KEYS: 'nocolon' });
    expect(env.status).toBe(2);
    expect(env.stderr).toContain('not of the form kid:secret');
  });

  it('rejects an unknown fixture, a bad port and unknown flags', async () => {
    expect((await mrtr(['serve', '--fixture', 'nope'])).stderr).toContain("unknown fixture 'nope'");
    expect((await mrtr(['serve', '--port', 'eighty'])).stderr).toContain('--port must be an integer');
    expect((await mrtr(['serve', '--bogus'])).stderr).toContain("Unknown option '--bogus'");
    expect((await mrtr(['serve', '--drain-ms', '1.5'])).stderr).toContain(
      "--drain-ms must be an integer from 0 to 2147483647, got '1.5'",
    );
    expect((await mrtr(['frobnicate'])).status).toBe(2);
  });
});

describe('mrtr serve stopping', () => {
  it('on SIGTERM stops accepting, finishes what is in progress, and exits 0 without waiting out the grace period', async () => {
    const child = spawn(process.execPath, [
      'dist/cli/main.js',
      'serve',
      '--fixture',
      'example',
      '--port',
      '0',
      // An hour: had it waited out the grace period, the test would time out.
      '--drain-ms',
      '3600000',
    ]);
    // Whatever happens, no server is left behind draining for an hour.
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (c: Buffer) => {
        const m = /listening on (\S+)/.exec(c.toString());
        if (m) resolve(m[1]!);
      });
      child.once('exit', () => reject(new Error(`serve exited early: ${stderr}`)));
    });
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
    expect(stderr).toContain('SIGTERM: finishing requests in progress (up to 3600 s; again to stop now)');
    (await expect(fetch(url, { method: 'POST' }))).rejects.toThrow();
  });
});
