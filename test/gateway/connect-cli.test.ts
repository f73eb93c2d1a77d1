// `mrtr gateway` with an upstream that needs each person's account (`credentials: type: oauth`): people connect on
// the gateway's pages, so it does not start without sign-in; the client secret is read at start; `gateway pin`
// skips the upstream (nobody's account lists it). Runs the built CLI (npm run build).

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { runCommand } from '../helpers/run-cli.js';
import { serveCli } from '../helpers/serve-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'mrtr-gw-connect-cli-'));
const configFile = join(dir, 'gateway.yaml');
/** `mrtr gateway`'s flags for this config on `port`, with the development tokens. */
const started = (port: number | string) => [
  '--config',
  configFile,
  '--port',
  String(port),
  '--tokens',
  join(dir, 'tokens.json'),
];
beforeAll(() => {
  writeFileSync(join(dir, 'tokens.json'), JSON.stringify({ 'alice-dev-token': { sub: 'alice', roles: [] } }));
  writeFileSync(
    configFile,
    `upstreams:
  - name: tracker
    url: https://tracker.example.com/mcp
    credentials:
      type: oauth
      clientId: mrtr-gateway
      clientSecret: { env: TRACKER_CLIENT_SECRET_FOR_TEST }
      scopes: [tickets:read]
rules:
  - tools: ["tracker/*"]
    roles: ["*"]
`,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const mrtr = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  runCommand(process.execPath, ['dist/cli/main.js', ...args], {
    encoding: 'utf8',
    timeout: 30_000,
    env: { ...process.env, TRACKER_CLIENT_SECRET_FOR_TEST: undefined, ...env },
  });

describe('mrtr gateway with an oauth upstream', () => {
  it.each([
    ['no auth at all', []],
    [
      '--issuer without --client-id (no browser sign-in)',
      ['--issuer', 'https://id.example.com', '--audience', 'gw'],
    ],
  ])('%s: exit 2, saying people connect on the pages and what to give', async (_, flags) => {
    const run = await mrtr(['gateway', '--config', configFile, '--port', '0', ...flags]);
    expect(run.status).toBe(2);
    expect(run.stderr).toBe(
      "mrtr gateway: upstream tracker needs each person's own account (credentials type oauth): people connect it on the gateway's pages, signed in: give --tokens FILE (development), or --issuer URL --audience AUD with --client-id ID\n",
    );
  });

  it('a client secret variable not set: exit 2, naming it', async () => {
    const run = await mrtr(['gateway', ...started(0)]);
    expect(run.status).toBe(2);
    expect(run.stderr).toBe(
      'mrtr gateway: upstream tracker: the oauth client secret: the variable TRACKER_CLIENT_SECRET_FOR_TEST is not set\n',
    );
  });

  it('an http address before an https upstream: exit 2, naming the redirect URI and --resource', async () => {
    const port = await freePort();
    const run = await mrtr(['gateway', ...started(port)], { TRACKER_CLIENT_SECRET_FOR_TEST: 'test-secret' });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(
      `mrtr gateway: upstream tracker: its authorization server must send people back to https, and this gateway's redirect URI would be http://127.0.0.1:${port}/mrtr/connect/callback/tracker: give --resource with the gateway's public https URL\n`,
    );
    expect(run.stderr).not.toContain('register the redirect URI');
  });

  it('with --resource naming its public https URL it starts and prints that redirect URI', async () => {
    const served = await serveCli([...started(0), '--resource', 'https://gw.example.com/mcp'], 'gateway', {
      env: { TRACKER_CLIENT_SECRET_FOR_TEST: 'test-secret' },
    });
    await served.saidOnStderr('register the redirect URI');
    expect(served.stderr()).toContain(
      'upstream tracker: people connect their own accounts; register the redirect URI https://gw.example.com/mrtr/connect/callback/tracker at its authorization server',
    );
    await served.stop();
  });

  it('gateway pin skips it, saying why', async () => {
    const run = await mrtr([
      'gateway',
      'pin',
      '--config',
      configFile,
      '--lock',
      join(dir, 'gateway.lock.json'),
    ]);
    expect(run.stderr).toContain(
      'mrtr gateway pin: upstream tracker skipped: each person connects their own account (credentials type oauth)',
    );
    expect(run.status).toBe(0);
  });
});
