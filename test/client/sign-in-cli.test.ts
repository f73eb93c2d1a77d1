// `mrtr call`'s sign-in against hostile servers on 127.0.0.1: the link is opened only on a keypress, --timeout
// bounds a sign-in whose metadata never ends (and the process exits), and a stored refresh token is not sent to an
// authorization server the resource names instead of the one that issued it.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { signIn } from '../../src/cli/sign-in.js';
import { deferred } from '../helpers/signals.js';
import { CLI, requireBuiltCli } from './helpers.js';
import { authorizationServer, type Host, host, neverEnding, protectedResource } from './hostile-oauth.js';

const dir = mkdtempSync(join(tmpdir(), 'mrtr-sign-in-'));
beforeAll(() => requireBuiltCli());
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const hosts: Host[] = [];
afterEach(async () => {
  for (const h of hosts.splice(0)) await h.close();
});
async function hostile(): Promise<Host> {
  const h = await host();
  hosts.push(h);
  return h;
}

/** A stream that keeps what is written and resolves `until(pattern)` once the text matches. */
function collector() {
  let text = '';
  const waits: { re: RegExp; done: () => void }[] = [];
  const out = new Writable({
    write(chunk, _enc, done) {
      text += String(chunk);
      for (const w of waits.splice(0))
        if (w.re.test(text)) w.done();
        else waits.push(w);
      done();
    },
  });
  return {
    out,
    text: () => text,
    until: (re: RegExp) => new Promise<void>((done) => (re.test(text) ? done() : waits.push({ re, done }))),
  };
}

interface Run {
  child: ChildProcess;
  stderr: () => string;
  /** Resolves once stderr matches. */
  until(re: RegExp): Promise<void>;
  exit: Promise<number | null>;
}

function mrtr(args: string[], env: NodeJS.ProcessEnv): Run {
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.end();
  let err = '';
  const waits: { re: RegExp; done: () => void }[] = [];
  child.stderr.on('data', (c: Buffer) => {
    err += c.toString('utf8');
    for (const w of waits.splice(0))
      if (w.re.test(err)) w.done();
      else waits.push(w);
  });
  child.stdout.resume();
  const exit = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  return {
    child,
    stderr: () => err,
    until: (re) => new Promise<void>((done) => (re.test(err) ? done() : waits.push({ re, done }))),
    exit,
  };
}

describe('the sign-in link is opened only when the person asks', () => {
  async function protectedServer() {
    const [rs, as] = [await hostile(), await hostile()];
    authorizationServer(as);
    const url = protectedResource(rs, (r) => ({
      resource: `${r.origin}/mcp`,
      authorization_servers: [as.origin],
    }));
    return { rs, as, url: new URL(url) };
  }

  it('at a terminal: shown with its host, opened on "o" and Enter, not before', async () => {
    const { rs, as, url } = await protectedServer();
    const input = new PassThrough();
    const opened = deferred<string>();
    const c = collector();
    const login = signIn({
      interactive: true,
      input,
      open: (href) => opened.resolve(href),
      out: c.out,
      me: 'mrtr call',
      tokenFile: join(dir, 'terminal', 'tokens.json'),
    });
    const stop = new AbortController();
    const signingIn = login.auth.handleChallenge(url, 401, undefined, 0, stop.signal);
    await c.until(/type o and Enter/);
    const port = new URL(as.origin).port;
    expect(c.text()).toContain(
      `mrtr call: sign in to 127.0.0.1:${port} to go on:\n  ${as.origin}/authorize?`,
    );
    expect(opened.settled).toBe(false);
    input.write('yes\n');
    input.write('o\n');
    expect(await opened.promise).toMatch(new RegExp(`^${as.origin}/authorize\\?`));
    expect(c.text()).toContain(`opening 127.0.0.1:${port} in your browser…`);
    stop.abort(new Error('stopped by the test'));
    await expect(signingIn).rejects.toThrow(/stopped by the test/);
    await login.close();
    expect(rs.requests.length).toBeGreaterThan(0);
  });

  it('without a terminal: only printed, never opened, whatever is typed', async () => {
    const { url } = await protectedServer();
    const input = new PassThrough();
    const opened: string[] = [];
    const c = collector();
    const login = signIn({
      interactive: false,
      input,
      open: (href) => opened.push(href),
      out: c.out,
      me: 'mrtr call',
      tokenFile: join(dir, 'script', 'tokens.json'),
    });
    const stop = new AbortController();
    const signingIn = login.auth.handleChallenge(url, 401, undefined, 0, stop.signal);
    await c.until(/to go on:\n {2}http\S+\n/);
    input.write('o\n');
    stop.abort(new Error('stopped by the test'));
    await expect(signingIn).rejects.toThrow(/stopped by the test/);
    await login.close();
    expect(opened).toEqual([]);
    expect(c.text()).not.toMatch(/type o/);
  });
});

describe('mrtr call --timeout bounds the sign-in', () => {
  it('metadata that never ends: timed out after the limit, exit 7, and the process exits', async () => {
    const rs = await hostile();
    rs.route('/mcp', (_req, res) => {
      res.writeHead(401, {
        'www-authenticate': `Bearer resource_metadata="${rs.origin}/.well-known/oauth-protected-resource/mcp"`,
      });
      res.end();
    });
    rs.route('/.well-known/oauth-protected-resource/mcp', (_req, res) => neverEnding(res));
    const run = mrtr(['call', `${rs.origin}/mcp`, 'echo', '--timeout', '1'], {
      ...process.env,
      XDG_CONFIG_HOME: join(dir, 'timeout'),
    });
    expect(await run.exit).toBe(7);
    const said = /mrtr call: timed out after (\d+\.\d) s \(--timeout 1\)/.exec(run.stderr());
    expect(said, run.stderr()).not.toBeNull();
    expect(Number(said?.[1])).toBeGreaterThanOrEqual(1);
    expect(rs.requests.some((r) => r.path === '/.well-known/oauth-protected-resource/mcp')).toBe(true);
  });
});

describe('mrtr call does not send a stored refresh token to another authorization server', () => {
  it('the resource now names another server: a new sign-in there, said plainly, the token never sent', async () => {
    const [rs, realAs, evilAs] = [await hostile(), await hostile(), await hostile()];
    authorizationServer(realAs);
    authorizationServer(evilAs);
    const url = protectedResource(rs, (r) => ({
      resource: `${r.origin}/mcp`,
      authorization_servers: [evilAs.origin],
    }));
    const config = join(dir, 'moved');
    mkdirSync(join(config, 'mrtr'), { recursive: true });
    const file = join(config, 'mrtr', 'tokens.json');
    writeFileSync(
      file,
      JSON.stringify({
        [url]: {
          tokens: {
            accessToken: 'real-access',
            refreshToken: 'REAL-REFRESH',
            expiresAt: Date.now() + 3_600_000,
            issuer: realAs.origin,
            resource: url,
          },
          client: { clientId: 'real-client', issuer: realAs.origin },
        },
      }),
    );
    const run = mrtr(['call', url, 'echo', '--timeout', '60'], { ...process.env, XDG_CONFIG_HOME: config });
    await run.until(/to go on:\n {2}http\S+\n/);
    run.child.kill('SIGINT');
    expect(await run.exit).toBe(130);
    expect(run.stderr()).toContain(
      `mrtr call: ${new URL(url).host} now names the authorization server ${evilAs.origin} instead of ${realAs.origin}: the tokens from ${realAs.origin} are not sent there; sign in again`,
    );
    expect(run.stderr()).toContain(`sign in to ${new URL(evilAs.origin).host} to go on:`);
    const atEvil = evilAs.requests.map((r) => r.body).join('\n');
    expect(atEvil).not.toContain('REAL-REFRESH');
    expect(atEvil).not.toContain('grant_type=refresh_token');
    expect(realAs.requests).toEqual([]);
    expect(readFileSync(file, 'utf8')).not.toContain('REAL-REFRESH');
  });
});
