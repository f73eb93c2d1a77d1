// The gateway's egress without an issuer: no credentials, a static secret from a variable or a file (read once, at
// start; a missing one names itself), and the seam that hands a handler its caller's verified token — proven
// through a real McpServer over HTTP with BearerAuth, with the token in none of what observers and logs see.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BearerAuth, DevTokens, parseDevTokens, type TokenVerifier } from '../../src/auth/index.js';
import {
  type EgressConfig,
  EgressRefused,
  egressFor,
  GatewayConfigError,
  rememberingVerifier,
} from '../../src/gateway/egress/index.js';
import { MrtrError } from '../../src/protocol/index.js';
import { type HttpEndpoint, McpServer, type RoundEvent, text } from '../../src/server/index.js';
import { KEYS, TOKENS } from '../auth/dev-token-server.js';
import { freePort } from '../helpers/free-port.js';
import { accept, mcp } from '../helpers/mcp-http.js';

const dir = mkdtempSync(join(tmpdir(), 'mrtr-egress-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const configError = (run: () => unknown, names: RegExp) => {
  let thrown: unknown;
  try {
    run();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(GatewayConfigError);
  expect(thrown).toBeInstanceOf(MrtrError);
  expect((thrown as GatewayConfigError).code).toBe('ERR_GATEWAY_CONFIG');
  expect((thrown as Error).message).toMatch(names);
};

const alice = { subject: 'alice', issuer: 'https://id.example', subjectToken: 'alice-own-token' };

describe('none', () => {
  it('presents nothing, the same for every caller', async () => {
    const egress = egressFor({ type: 'none' });
    expect(egress.perCaller).toBe(false);
    expect(await egress.tokenFor(alice)).toBeUndefined();
  });
});

describe('static', () => {
  it('sends the secret from a variable, read at start, never the caller’s token', async () => {
    const env = { UPSTREAM_TOKEN: 'the-gateways-own-secret' };
    const egress = egressFor({ type: 'static', env: 'UPSTREAM_TOKEN' }, { env });
    env.UPSTREAM_TOKEN = 'changed-after-start';
    expect(egress.perCaller).toBe(false);
    expect(await egress.tokenFor(alice)).toBe('the-gateways-own-secret');
    expect(await egress.tokenFor({ subject: 'bob' })).toBe('the-gateways-own-secret');
  });

  it('sends the secret from a file, trimmed of its newline', async () => {
    const file = join(dir, 'upstream-token');
    writeFileSync(file, '  file-secret-123\n');
    const egress = egressFor({ type: 'static', file });
    expect(await egress.tokenFor(alice)).toBe('file-secret-123');
  });

  it('reads process.env when no env is given', async () => {
    process.env.MRTR_EGRESS_TEST_SECRET = 'from-process-env';
    try {
      expect(await egressFor({ type: 'static', env: 'MRTR_EGRESS_TEST_SECRET' }).tokenFor(alice)).toBe(
        'from-process-env',
      );
    } finally {
      delete process.env.MRTR_EGRESS_TEST_SECRET;
    }
  });

  it('a missing, empty or unreadable secret fails the start, naming the variable or file', () => {
    configError(
      () => egressFor({ type: 'static', env: 'NOT_SET_ANYWHERE' }, { env: {} }),
      /variable NOT_SET_ANYWHERE is not set/,
    );
    configError(() => egressFor({ type: 'static', env: 'EMPTY' }, { env: { EMPTY: '' } }), /EMPTY is empty/);
    const missing = join(dir, 'no-such-file');
    configError(() => egressFor({ type: 'static', file: missing }), new RegExp(`${missing}.*ENOENT`));
    const blank = join(dir, 'blank');
    writeFileSync(blank, ' \n\n');
    configError(() => egressFor({ type: 'static', file: blank }), new RegExp(`${blank} is empty`));
  });

  it('needs exactly one of env and file', () => {
    configError(() => egressFor({ type: 'static' }), /exactly one of env .* or file/);
    configError(
      () => egressFor({ type: 'static', env: 'A', file: '/tmp/x' }, { env: { A: 'a' } }),
      /exactly one of env .* or file/,
    );
  });

  it('an unknown credentials type is a config error naming it', () => {
    configError(() => egressFor({ type: 'passthrough' } as unknown as EgressConfig), /"passthrough"/);
  });
});

describe('token-exchange config', () => {
  const base = { type: 'token-exchange' as const, clientId: 'gateway', audience: 'https://up.example' };

  it('a client secret that is not set fails the start, naming the variable', () => {
    configError(
      () => egressFor({ ...base, issuer: 'https://id.example', clientSecretEnv: 'GW_SECRET' }, { env: {} }),
      /client secret: the variable GW_SECRET is not set/,
    );
  });

  it('an issuer over plain http off this machine, or no URL at all, is refused', () => {
    configError(() => egressFor({ ...base, issuer: 'http://id.example' }), /must be https/);
    configError(() => egressFor({ ...base, issuer: 'id.example' }), /is not a URL/);
    configError(() => egressFor({ ...base, issuer: 'https://id.example', clientId: '' }), /clientId/);
  });

  it('a caller without a token of its own gets a clear refusal, not a request to the issuer', async () => {
    const egress = egressFor({ ...base, issuer: 'https://id.invalid' });
    expect(egress.perCaller).toBe(true);
    const refused = await egress.tokenFor({ subject: 'alice' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(EgressRefused);
    expect(refused).toMatchObject({
      code: 'ERR_GATEWAY_EGRESS',
      reason: 'no_subject_token',
      message:
        "the upstream's credentials could not be obtained for you (the request carried no bearer token to exchange)",
    });
  });
});

describe('rememberingVerifier', () => {
  let endpoint: HttpEndpoint;
  const events: RoundEvent[] = [];
  const logged: unknown[] = [];
  const seen: Array<string | undefined> = [];
  const remembering = rememberingVerifier(new DevTokens(parseDevTokens(TOKENS)));

  beforeAll(async () => {
    const port = await freePort();
    const resource = `http://127.0.0.1:${port}/mcp`;
    const log = (...args: unknown[]) => logged.push(args);
    endpoint = await new McpServer({
      name: 'egress-seam',
      version: '1.0.0',
      stateKeys: KEYS,
      auth: new BearerAuth({ verifier: remembering.verifier, resource }),
      observers: [{ observe: (event) => void events.push(event) }],
      logger: { info: log, warn: log, error: log } as never,
    })
      .tool({ name: 'whoami', description: 'who' }, (_args, { principal }) => {
        seen.push(remembering.tokenOf(principal));
        return text(JSON.stringify(principal));
      })
      .tool({ name: 'two_rounds', description: 'asks once' }, async (_args, { ask, principal }) => {
        seen.push(remembering.tokenOf(principal));
        return text(String(await ask.confirm('Go on?', { key: 'ok' })));
      })
      .listen({ port });
  });
  afterAll(() => endpoint.close());

  const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

  it("gives the handler its request's own token, from ctx.principal, and puts it nowhere else", async () => {
    seen.length = 0;
    const [a, b] = await Promise.all([
      mcp(endpoint.url, 'tools/call', { name: 'whoami', arguments: {} }, bearer('alice-token')),
      mcp(endpoint.url, 'tools/call', { name: 'whoami', arguments: {} }, bearer('bob-token')),
    ]);
    expect(seen.sort()).toEqual(['alice-token', 'bob-token']);
    // The principal the handler and the observers see has no token on it.
    const shown = (a.response.result!.content as Array<{ text: string }>)[0]!.text;
    expect(JSON.parse(shown)).toMatchObject({ subject: 'alice', scopes: ['bugs:read'] });
    expect(shown).not.toContain('alice-token');
    expect(JSON.stringify(b.response)).not.toContain('bob-token');
    expect(events.length).toBeGreaterThanOrEqual(2);
    expect(JSON.stringify(events)).not.toMatch(/alice-token|bob-token/);
    expect(JSON.stringify(logged)).not.toMatch(/alice-token|bob-token/);
  });

  it('a later round gets the token its own request carried, not the first one’s', async () => {
    seen.length = 0;
    const first = await mcp(
      endpoint.url,
      'tools/call',
      { name: 'two_rounds', arguments: {} },
      bearer('alice-token'),
    );
    const requestState = first.response.result!.requestState as string;
    expect(requestState).not.toContain('alice-token');
    const second = await mcp(
      endpoint.url,
      'tools/call',
      { name: 'two_rounds', arguments: {}, requestState, inputResponses: { ok: accept({ confirm: true }) } },
      bearer('alice-writer'),
    );
    expect((second.response.result!.content as Array<{ text: string }>)[0]!.text).toBe('true');
    expect(seen).toEqual(['alice-token', 'alice-writer']);
    expect(JSON.stringify(events)).not.toMatch(/alice-token|alice-writer/);
  });

  it('knows no token for a principal it did not make, nor for none', () => {
    expect(remembering.tokenOf(undefined)).toBeUndefined();
    expect(remembering.tokenOf({ subject: 'alice' })).toBeUndefined();
  });

  it('answers a fresh principal per verification, synchronous when the inner verifier is', async () => {
    const shared = { subject: 'svc', issuer: 'urn:x', roles: [], scopes: [] };
    const inner: TokenVerifier = { authorizationServers: ['https://id.example'], verify: () => shared };
    const wrapped = rememberingVerifier(inner);
    expect(wrapped.verifier.authorizationServers).toEqual(['https://id.example']);
    const one = wrapped.verifier.verify('token-one');
    const two = wrapped.verifier.verify('token-two');
    expect(one).not.toBeInstanceOf(Promise);
    expect(one).toEqual(shared);
    expect(wrapped.tokenOf(one as object)).toBe('token-one');
    expect(wrapped.tokenOf(two as object)).toBe('token-two');
    const later = rememberingVerifier({ ...inner, verify: async () => shared });
    const three = await later.verifier.verify('token-three');
    expect(later.tokenOf(three)).toBe('token-three');
  });
});
