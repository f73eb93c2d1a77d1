// `mrtr serve --tokens` and `--issuer/--audience`: the interface checks outside the repo use, exactly — 401 with
// resource_metadata without a token, the metadata document, `mrtr call --token`, and every flag mistake named.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { mcp } from '../helpers/mcp-http.js';
import { startOidcProvider } from '../helpers/oidc-provider.js';
import { runCommand } from '../helpers/run-cli.js';
import { serveCli } from '../helpers/serve-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'mrtr-serve-auth-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const KEYS = `k1:${Buffer.alloc(32, 5).toString('base64url')}`;
const tokensFile = join(dir, 'tokens.json');
writeFileSync(
  tokensFile,
  JSON.stringify({
    'alice-dev-token': { sub: 'alice', name: 'Alice', roles: ['requester'], scopes: ['bugs:read'] },
    'bob-dev-token': { sub: 'bob', roles: ['approver'] },
  }),
);

const serve = (args: string[]) => serveCli(['--state-keys', KEYS, ...args]);

const run = (args: string[]) =>
  runCommand(process.execPath, ['dist/cli/main.js', ...args], { encoding: 'utf8', timeout: 25_000 });

describe('mrtr serve --fixture example --port P --tokens FILE', () => {
  it('401 + WWW-Authenticate with resource_metadata without a token; the metadata answers JSON; --token calls', async () => {
    const port = await freePort();
    const server = await serve(['--fixture', 'example', '--port', String(port), '--tokens', tokensFile]);
    expect(server.stderr()).toContain(`development tokens from ${tokensFile} (2: alice, bob)`);
    const refused = await mcp(server.url, 'tools/list');
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toBe(
      `Bearer resource_metadata="http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp"`,
    );
    const metadata = await fetch(`http://127.0.0.1:${port}/.well-known/oauth-protected-resource`);
    expect(metadata.headers.get('content-type')).toBe('application/json');
    expect(await metadata.json()).toEqual({ resource: server.url, bearer_methods_supported: ['header'] });
    const call = await run([
      'call',
      server.url,
      'echo',
      '--args',
      '{"message":"hi"}',
      '--token',
      'alice-dev-token',
    ]);
    expect(call.stdout.trim()).toBe('hi');
    expect(call.status).toBe(0);
    const wrong = await run(['call', server.url, 'echo', '--args', '{"message":"hi"}', '--token', 'nope']);
    expect(wrong.status).not.toBe(0);
    expect(wrong.stderr).toContain('Unauthorized: the access token is not valid');
    // No token at all: a server that names no authorization server can only be called with one its operator gave.
    const none = await run(['call', server.url, 'echo', '--args', '{"message":"hi"}']);
    expect(none.status).not.toBe(0);
    expect(none.stderr).toContain(
      `127.0.0.1:${port} needs a bearer token (HTTP 401) but names no authorization server to get one from: pass a token its operator gave you`,
    );
    expect(none.stderr).toContain('mrtr call: give the token with --token TOKEN');
    expect(none.status).toBe(7);
    // A token that was given and refused is not told to give one.
    expect(wrong.stderr).not.toContain('give the token with --token');
  });

  it('refuses development tokens on a non-loopback address, and says why', async () => {
    const out = await run(['serve', '--host', '0.0.0.0', '--port', '3999', '--tokens', tokensFile]);
    expect(out.status).toBe(2);
    expect(out.stderr).toContain(
      'mrtr serve: --tokens on 0.0.0.0 refused: development tokens are for this machine only',
    );
    expect(out.stderr).toContain('--insecure-dev-tokens');
  });

  it('serves them there with --insecure-dev-tokens, with a warning', async () => {
    const port = await freePort();
    const server = await serve([
      '--host',
      '0.0.0.0',
      '--port',
      String(port),
      '--tokens',
      tokensFile,
      '--insecure-dev-tokens',
      '--resource',
      `http://127.0.0.1:${port}/mcp`,
    ]);
    expect(server.stderr()).toContain('WARNING: served on 0.0.0.0 because of --insecure-dev-tokens');
  });

  const mistakes: Array<[string, string[], string | (() => string)]> = [
    ['a tokens file that does not exist', ['--tokens', join(dir, 'missing.json')], 'cannot read tokens file'],
    [
      '--resource without a way to check tokens',
      ['--resource', 'http://x/mcp'],
      '--resource needs --tokens FILE or --issuer URL',
    ],
    [
      '--tokens and --issuer together',
      ['--tokens', tokensFile, '--issuer', 'http://127.0.0.1:1'],
      'give --tokens or --issuer, not both',
    ],
    [
      '--audience without --issuer',
      ['--audience', 'http://x/mcp'],
      '--audience and --jwks-uri need --issuer URL',
    ],
    [
      'a resource that is not a URL',
      ['--tokens', tokensFile, '--resource', 'mcp.example.com'],
      'is not an absolute URL',
    ],
    [
      'a resource with a fragment',
      ['--tokens', tokensFile, '--resource', 'http://x/mcp#a'],
      'must not have a fragment',
    ],
    [
      'an issuer that is not a URL',
      ['--issuer', 'example', '--audience', 'http://x/mcp'],
      'issuer must be an http(s) URL',
    ],
    ['auth on stdio', ['--stdio', '--tokens', tokensFile], 'a stdio server trusts its parent process'],
  ];
  for (const [what, args, message] of mistakes) {
    it(`names the problem: ${what}`, async () => {
      const out = await run(['serve', '--port', '3999', ...args]);
      expect(out.status).toBe(2);
      expect(out.stderr).toContain(typeof message === 'string' ? message : message());
    });
  }

  it('names the entry of a tokens file that is wrong', async () => {
    const bad = join(dir, 'bad.json');
    // Each rule of the file has its unit test (test/auth/dev-tokens.test.ts); here, that the CLI passes them on.
    for (const [content, message] of [
      ['{"t1": {"name": "x"}}', `tokens file ${bad}: token "t1" needs "sub", a non-empty string`],
      ['{oops', `tokens file ${bad} is not valid JSON`],
    ] as const) {
      writeFileSync(bad, content);
      const out = await run(['serve', '--port', '3999', '--tokens', bad]);
      expect(out.status, content).toBe(2);
      expect(out.stderr, content).toContain(message);
    }
  });

  it('with --port 0, asks for --resource (the URL is not known in advance)', async () => {
    const out = await run(['serve', '--port', '0', '--tokens', tokensFile]);
    expect(out.status).toBe(2);
    expect(out.stderr).toContain('give --resource URL too');
  });
});

describe('mrtr serve --issuer URL --audience AUD', () => {
  it('accepts the issuer’s JWT access tokens for that audience and refuses others', async () => {
    const port = await freePort();
    const resource = `http://127.0.0.1:${port}/mcp`;
    const provider = await startOidcProvider({ resource });
    onTestFinished(() => provider.close());
    const server = await serve([
      '--fixture',
      'example',
      '--port',
      String(port),
      '--issuer',
      provider.issuer,
      '--audience',
      resource,
    ]);
    expect(server.stderr()).toContain(`every request needs a JWT access token from ${provider.issuer}`);
    const metadata = (await (
      await fetch(`http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp`)
    ).json()) as Record<string, unknown>;
    expect(metadata.authorization_servers).toEqual([provider.issuer]);
    const token = await provider.accessToken({ user: 'alice' });
    const ok = await mcp(
      server.url,
      'tools/call',
      { name: 'echo', arguments: { message: 'hello' } },
      {
        headers: { authorization: `Bearer ${token}` },
      },
    );
    expect(ok.response.result?.content).toEqual([{ type: 'text', text: 'hello' }]);
    const other = await provider.accessToken({ user: 'alice', audience: 'http://127.0.0.1:1/mcp' });
    const refused = await mcp(
      server.url,
      'tools/list',
      {},
      { headers: { authorization: `Bearer ${other}` } },
    );
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toContain('error="invalid_token"');
  });
});

describe('mrtr serve help and audience', () => {
  it('--help prints the usage, auth flags included', async () => {
    const out = await runCommand(process.execPath, ['dist/cli/main.js', 'serve', '--help'], {
      encoding: 'utf8',
      timeout: 25_000,
    });
    expect(out.status).toBe(0);
    expect(out.stdout).toContain('--tokens FILE');
  });
  it('an audience that is not a URL asks for --resource, naming --audience', async () => {
    const out = await runCommand(
      process.execPath,
      [
        'dist/cli/main.js',
        'serve',
        '--port',
        '3997',
        '--issuer',
        'https://id.example.com',
        '--audience',
        'bugs-api',
      ],
      { encoding: 'utf8', timeout: 25_000 },
    );
    expect(out.status).toBe(2);
    expect(out.stderr).toContain("--audience bugs-api is not this server's URL: give --resource URL");
  });
});
