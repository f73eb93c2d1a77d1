// The OAuth client's small parts: the Bearer challenge grammar and the token stores. The flows themselves are
// tested by the conformance runner's auth/* scenarios and against a real oidc-provider (oauth-interop.test.ts).
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  canonicalResource,
  defaultTokenFile,
  fileTokenStore,
  memoryTokenStore,
  OAuthClient,
  parseBearerChallenge,
} from '../../src/client/index.js';

const dir = mkdtempSync(join(tmpdir(), 'mrtr-tokens-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('WWW-Authenticate', () => {
  it('reads resource_metadata, scope and error, quoted or not, among other challenges', () => {
    expect(
      parseBearerChallenge(
        'Basic realm="x", Bearer resource_metadata="https://a.example/.well-known/oauth-protected-resource", scope="files:read files:write"',
      ),
    ).toEqual({
      resourceMetadata: 'https://a.example/.well-known/oauth-protected-resource',
      scope: 'files:read files:write',
      error: undefined,
    });
    expect(parseBearerChallenge('Bearer error=insufficient_scope, scope="a \\"b\\""')).toEqual({
      resourceMetadata: undefined,
      scope: 'a "b"',
      error: 'insufficient_scope',
    });
    expect(parseBearerChallenge(undefined)).toEqual({
      resourceMetadata: undefined,
      scope: undefined,
      error: undefined,
    });
    expect(parseBearerChallenge('Basic realm="only basic"').resourceMetadata).toBeUndefined();
  });
});

describe('token stores', () => {
  it('the file store writes 0600 in a 0700 directory, keyed by server, and reads back', () => {
    const file = join(dir, 'cfg', 'mrtr', 'tokens.json');
    const store = fileTokenStore(file);
    store.set('https://a.example/mcp', { tokens: { accessToken: 'A' } });
    store.set('https://b.example/mcp', { tokens: { accessToken: 'B', refreshToken: 'R' } });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'cfg', 'mrtr')).mode & 0o777).toBe(0o700);
    expect(fileTokenStore(file).get('https://b.example/mcp')?.tokens).toEqual({
      accessToken: 'B',
      refreshToken: 'R',
    });
    expect(fileTokenStore(file).get('constructor')).toBeUndefined();
    expect(Object.keys(JSON.parse(readFileSync(file, 'utf8')))).toEqual([
      'https://a.example/mcp',
      'https://b.example/mcp',
    ]);
  });

  it('lives under XDG_CONFIG_HOME, else ~/.config', () => {
    expect(defaultTokenFile({ XDG_CONFIG_HOME: '/x' })).toBe('/x/mrtr/tokens.json');
    expect(defaultTokenFile({})).toMatch(/\.config\/mrtr\/tokens\.json$/);
  });

  it('an expired token without a refresh token is not sent', async () => {
    const store = memoryTokenStore();
    const server = new URL('https://a.example/mcp');
    store.set(server.href, { tokens: { accessToken: 'old', expiresAt: Date.now() - 1000 } });
    expect(await new OAuthClient({ store }).accessToken(server)).toBeUndefined();
    store.set(server.href, { tokens: { accessToken: 'fresh', expiresAt: Date.now() + 3_600_000 } });
    expect(await new OAuthClient({ store }).accessToken(server)).toBe('fresh');
  });

  it('the resource indicator is the endpoint without its fragment', () => {
    expect(canonicalResource(new URL('HTTPS://MCP.Example.com/mcp#x'))).toBe('https://mcp.example.com/mcp');
  });
});

describe('the token directory', () => {
  it('an existing directory with wider permissions is narrowed to 0700', () => {
    const tokens = join(dir, 'wide', 'mrtr');
    mkdirSync(tokens, { recursive: true });
    chmodSync(tokens, 0o755);
    fileTokenStore(join(tokens, 'tokens.json')).set('https://a.example/mcp', {
      tokens: { accessToken: 'A' },
    });
    expect(statSync(tokens).mode & 0o777).toBe(0o700);
  });

  it('a directory under /proc fails with a message naming it (it does not hang)', () => {
    const store = fileTokenStore(`/proc/mrtr-no-such-dir-${process.pid}/mrtr/tokens.json`);
    expect(() => store.set('https://a.example/mcp', { tokens: { accessToken: 'A' } })).toThrow(
      new RegExp(`cannot create the token directory /proc/mrtr-no-such-dir-${process.pid}: ENOENT`),
    );
  });

  it('a path through a file fails with a message naming it', () => {
    const store = fileTokenStore('/etc/hostname/mrtr/tokens.json');
    expect(() => store.set('https://a.example/mcp', { tokens: { accessToken: 'A' } })).toThrow(
      /cannot create the token directory \/etc\/hostname\/mrtr: ENOTDIR/,
    );
  });
});
