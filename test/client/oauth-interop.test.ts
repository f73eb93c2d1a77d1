// `mrtr call` against an MCP server protected by a real OpenID provider (oidc-provider on 127.0.0.1): the 401 leads
// to discovery, dynamic registration, PKCE and the resource indicator; the test, as the person, opens the printed
// link in headless Chromium, which signs in through the provider's pages; the token is kept in a 0600 file and used
// again on the next run without a browser.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, ROOT, requireBuiltCli } from './helpers.js';
import { type ProtectedMcp, startProtectedMcp } from './oidc.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function mrtr(args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [CLI, ...args],
      { timeout: 60_000, env },
      (error, stdout, stderr) => resolve({ code: child.exitCode ?? (error ? 1 : 0), stdout, stderr }),
    );
    child.stdin?.end();
  });
}

/**
 * Run `mrtr call` without a terminal, as a person would: it only prints the sign-in link (nothing is opened for
 * them), and the person opens it — here headless Chromium, once the link is on stderr. Resolves when both have
 * ended: `mrtr call` can finish as soon as the redirect lands, before the browser has written its log.
 */
function mrtrSigningIn(args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdin.end();
    let stdout = '';
    let stderr = '';
    let browserDone: Promise<void> = Promise.resolve();
    let opened = false;
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString('utf8');
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString('utf8');
      const link = /to go on:\n {2}(http\S+)\n/.exec(stderr)?.[1];
      if (link && !opened) {
        opened = true;
        browserDone = new Promise((done) => {
          execFile(process.execPath, [join(ROOT, 'test/client/browser-sign-in.mjs'), link], { env }, () =>
            done(),
          );
        });
      }
    });
    child.on('close', (code) => {
      void browserDone.then(() => resolve({ code: code ?? 1, stdout, stderr }));
    });
  });
}

let mcp: ProtectedMcp;
const home = mkdtempSync(join(tmpdir(), 'mrtr-oauth-'));
beforeAll(async () => {
  requireBuiltCli();
  mcp = await startProtectedMcp();
});
afterAll(async () => {
  await mcp?.close();
  rmSync(home, { recursive: true, force: true });
});

describe('mrtr call signs in to an OAuth-protected server', () => {
  it('signs in through the browser, keeps the token in a 0600 file, and reuses it next time', {
    timeout: 120_000,
  }, async () => {
    if (!existsSync('/usr/bin/chromium')) throw new Error('chromium is missing: apt-get install -y chromium');
    const log = join(home, 'browser.json');
    // $BROWSER is set, yet nothing is opened without a keypress: the test opens the printed link, as a person would.
    const env = {
      ...process.env,
      XDG_CONFIG_HOME: join(home, 'config'),
      BROWSER: '/bin/false',
      MRTR_TEST_BROWSER_LOG: log,
    };
    const first = await mrtrSigningIn(['call', mcp.url, 'echo', '--args', '{"message":"hello"}'], env);
    expect(first.stderr).toMatch(/mrtr call: sign in to 127\.0\.0\.1:\d+ to go on:/);
    expect(first).toMatchObject({ code: 0, stdout: 'hello\n' });
    // The browser went through the provider's login and consent pages, and back to the loopback listener.
    const steps: string[] = JSON.parse(readFileSync(log, 'utf8'));
    expect(steps.some((s) => s.includes('/interaction/'))).toBe(true);
    expect(mcp.admitted).toContain('ann');
    const file = join(home, 'config', 'mrtr', 'tokens.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, 'config', 'mrtr')).mode & 0o777).toBe(0o700);
    const stored = JSON.parse(readFileSync(file, 'utf8'));
    expect(stored[mcp.url].tokens.accessToken).toEqual(expect.any(String));
    expect(stored[mcp.url].client.clientId).toEqual(expect.any(String));
    // Second run: no browser, no sign-in line, the stored token is sent.
    rmSync(log);
    const again = await mrtr(['call', mcp.url, 'echo', '--args', '{"message":"again"}'], {
      ...env,
      BROWSER: '/bin/false',
    });
    expect(again).toMatchObject({ code: 0, stdout: 'again\n' });
    expect(again.stderr).not.toMatch(/sign in/);
    expect(existsSync(log)).toBe(false);
    // Third run with a dead access token: the stored refresh token gets a new one, still no browser.
    expect(stored[mcp.url].tokens.refreshToken).toEqual(expect.any(String));
    stored[mcp.url].tokens.accessToken = 'revoked';
    writeFileSync(file, JSON.stringify(stored));
    const refreshed = await mrtr(['call', mcp.url, 'echo', '--args', '{"message":"refreshed"}'], {
      ...env,
      BROWSER: '/bin/false',
    });
    expect(refreshed).toMatchObject({ code: 0, stdout: 'refreshed\n' });
    expect(refreshed.stderr).not.toMatch(/sign in/);
    expect(JSON.parse(readFileSync(file, 'utf8'))[mcp.url].tokens.accessToken).not.toBe('revoked');
  });

  it('a sign-in nobody completes ends with --timeout (exit 7), it does not wait for ever', async () => {
    const env = { ...process.env, XDG_CONFIG_HOME: join(home, 'nobody'), BROWSER: '/bin/true' };
    // Room to reach the sign-in first: with 1 s, a busy CI machine timed out before the server's 401 came back.
    const r = await mrtr(['call', mcp.url, 'echo', '--args', '{"message":"x"}', '--timeout', '5'], env);
    expect(r.stderr).toMatch(/sign in to 127\.0\.0\.1:\d+ to go on/);
    expect(r.code).toBe(7);
    expect(r.stderr).toMatch(/timed out/);
  });

  it('--token skips OAuth: a wrong token is refused (exit 7), nothing is stored', async () => {
    const env = { ...process.env, XDG_CONFIG_HOME: join(home, 'other') };
    const r = await mrtr(['call', mcp.url, 'echo', '--args', '{"message":"x"}', '--token', 'not-a-jwt'], env);
    expect(r.code).toBe(7);
    expect(r.stderr).toMatch(/HTTP 401/);
    expect(existsSync(join(home, 'other', 'mrtr', 'tokens.json'))).toBe(false);
  });
});
