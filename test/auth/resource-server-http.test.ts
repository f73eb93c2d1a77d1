// The resource server over real HTTP with development tokens: 401 before anything else, the challenge and the
// metadata, the principal bound into requestState, requiredScopes per round.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpEndpoint } from '../../src/server/index.js';
import { freePort } from '../helpers/free-port.js';
import { accept, mcp, rawPost } from '../helpers/mcp-http.js';
import { devTokenServer } from './dev-token-server.js';

let endpoint: HttpEndpoint;
let url: string;
let origin: string;
const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
const challengeOf = (headers: Record<string, unknown>) => String(headers['www-authenticate']);

beforeAll(async () => {
  const port = await freePort();
  url = `http://127.0.0.1:${port}/mcp`;
  origin = `http://127.0.0.1:${port}`;
  endpoint = await devTokenServer({
    resource: url,
    scopeImplications: { bugs: ['bugs:read', 'bugs:write', 'bugs:admin'] },
  }).listen({ port });
});
afterAll(() => endpoint.close());

describe('a caller without a valid token learns nothing but 401', () => {
  const metadataUrl = () => `${origin}/.well-known/oauth-protected-resource/mcp`;

  it('no token: 401 with resource_metadata and the scopes to ask for, no error code (RFC 6750 §3.1)', async () => {
    const reply = await mcp(url, 'tools/list');
    expect(reply.status).toBe(401);
    expect(challengeOf(reply.headers)).toBe(`Bearer scope="bugs:read", resource_metadata="${metadataUrl()}"`);
    expect(reply.response.error?.message).toMatch(/needs an Authorization: Bearer token/);
  });

  it('an unknown token: 401 invalid_token', async () => {
    const reply = await mcp(url, 'tools/list', {}, bearer('not-a-token'));
    expect(reply.status).toBe(401);
    expect(challengeOf(reply.headers)).toBe(
      `Bearer error="invalid_token", error_description="the access token is not valid", resource_metadata="${metadataUrl()}"`,
    );
  });

  const unauthenticated: Array<
    [string, () => Promise<{ status: number; headers: Record<string, unknown>; text: string }>]
  > = [
    [
      'a notification (would be 202)',
      () =>
        rawPost(url, '{"jsonrpc":"2.0","method":"notifications/cancelled"}', {
          'content-type': 'application/json',
        }),
    ],
    [
      'a body that is not JSON (would be 400 parse error)',
      () => rawPost(url, '{oops', { 'content-type': 'application/json' }),
    ],
    [
      'a header mismatch (would be -32020 with details)',
      () =>
        rawPost(
          url,
          JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami' } }),
          {
            'content-type': 'application/json',
            'mcp-method': 'tools/list',
            'mcp-name': 'other',
          },
        ),
    ],
    ['a wrong Content-Type (would be 415)', () => rawPost(url, 'x', { 'content-type': 'text/plain' })],
    ['a GET (would be 405)', () => rawPost(url, '', {}, 'GET')],
    [
      'a body over the size limit (would be 413)',
      () => rawPost(url, 'x'.repeat(2 * 1024 * 1024), { 'content-type': 'application/json' }),
    ],
  ];
  for (const [what, send] of unauthenticated) {
    it(`${what}: 401, and no word about the request`, async () => {
      const reply = await send();
      expect(reply.status).toBe(401);
      expect(challengeOf(reply.headers)).toContain('resource_metadata=');
      expect(JSON.parse(reply.text).error.message).toBe(
        'Unauthorized: this server needs an Authorization: Bearer token',
      );
    });
  }

  it('a token in the query string is refused, even beside a valid header (OAuth 2.1 §5.1)', async () => {
    for (const query of ['?access_token=alice-token', '?x=1&access_token=alice-token']) {
      const reply = await mcp(`${url}${query}`, 'tools/list', {}, bearer('alice-token'));
      expect(reply.status).toBe(401);
      expect(challengeOf(reply.headers)).toContain('error="invalid_request"');
      expect(reply.response.error?.message).toMatch(/not accepted in the query string/);
    }
  });

  it('two Authorization headers are refused, whichever comes first', async () => {
    // Raw bytes: node's client would not send a header twice, and node's server keeps only the first.
    const { connect } = await import('node:net');
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    const head = [
      'POST /mcp HTTP/1.1',
      'Host: 127.0.0.1',
      'Content-Type: application/json',
      'Authorization: Bearer alice-token',
      'Authorization: Bearer bob-token',
      `Content-Length: ${body.length}`,
      'Connection: close',
    ];
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(url).port), '127.0.0.1', () =>
        socket.write(`${head.join('\r\n')}\r\n\r\n${body}`),
      );
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk;
      });
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(reply).toMatch(/^HTTP\/1.1 401 /);
    expect(reply).toContain('more than one Authorization header');
  });

  for (const header of ['Basic YWxpY2U6cHc=', 'Bearer', 'Bearer two words', 'alice-token', 'Bearer a"b']) {
    it(`a malformed Authorization header (${header}) gets 401 invalid_request`, async () => {
      const reply = await mcp(url, 'tools/list', {}, { headers: { authorization: header } });
      expect(reply.status).toBe(401);
      expect(challengeOf(reply.headers)).toContain('error="invalid_request"');
    });
  }
});

describe('Protected Resource Metadata (RFC 9728)', () => {
  it('is served at the path-inserted and the root well-known URI, without a token', async () => {
    for (const path of [
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource',
    ]) {
      const response = await fetch(`${origin}${path}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json');
      expect(await response.json()).toEqual({
        resource: url,
        bearer_methods_supported: ['header'],
        scopes_supported: ['bugs:read'],
        resource_name: 'Bug tracker',
      });
    }
  });

  it('answers only GET and HEAD', async () => {
    const response = await fetch(`${origin}/.well-known/oauth-protected-resource`, { method: 'POST' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('the principal', () => {
  it('reaches the handler with subject, issuer, name, roles and scopes', async () => {
    const reply = await mcp(url, 'tools/call', { name: 'whoami', arguments: {} }, bearer('alice-token'));
    expect(JSON.parse((reply.response.result!.content as Array<{ text: string }>)[0]!.text)).toEqual({
      subject: 'alice',
      issuer: 'urn:mrtr:dev-tokens',
      name: 'Alice',
      roles: ['requester'],
      scopes: ['bugs:read'],
    });
  });

  it('is what requestState is bound to: a state sealed for alice and presented by bob gets the fixed -32602', async () => {
    const first = await mcp(
      url,
      'tools/call',
      { name: 'confirm_close', arguments: { id: 7 } },
      bearer('alice-token'),
    );
    const requestState = first.response.result!.requestState as string;
    const retry = {
      name: 'confirm_close',
      arguments: { id: 7 },
      requestState,
      inputResponses: { ok: accept({ confirm: true }) },
    };
    const asBob = await mcp(url, 'tools/call', retry, bearer('bob-token'));
    expect(asBob.response.error).toEqual({ code: -32602, message: 'Invalid params: invalid requestState' });
    // The same principal with another token of hers (another scope set) is still her.
    const asAlice = await mcp(url, 'tools/call', retry, bearer('alice-writer'));
    expect((asAlice.response.result!.content as Array<{ text: string }>)[0]!.text).toBe('closed 7 for alice');
  });
});

describe('requiredScopes', () => {
  it('a token without the scope gets 403 insufficient_scope naming it, with resource_metadata', async () => {
    const reply = await mcp(
      url,
      'tools/call',
      { name: 'write_bug', arguments: { id: 1 } },
      bearer('alice-token'),
    );
    expect(reply.status).toBe(403);
    expect(challengeOf(reply.headers)).toBe(
      `Bearer error="insufficient_scope", error_description="this operation needs the scope bugs:write (missing: bugs:write)", scope="bugs:write", resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
    );
    expect(reply.response.error).toMatchObject({
      code: -32600,
      data: { requiredScopes: ['bugs:write'], missingScopes: ['bugs:write'] },
    });
  });

  it('names every scope the operation needs in one challenge, not one per retry', async () => {
    const reply = await mcp(url, 'tools/call', { name: 'admin_bug', arguments: {} }, bearer('alice-writer'));
    expect(reply.status).toBe(403);
    expect(challengeOf(reply.headers)).toContain('scope="bugs:write bugs:admin"');
    expect(reply.response.error?.data).toEqual({
      requiredScopes: ['bugs:write', 'bugs:admin'],
      missingScopes: ['bugs:admin'],
    });
  });

  it('a broad scope that implies the needed ones is enough (scope hierarchies)', async () => {
    const reply = await mcp(url, 'tools/call', { name: 'admin_bug', arguments: {} }, bearer('alice-admin'));
    expect(reply.status).toBe(200);
    expect(reply.response.result?.content).toEqual([{ type: 'text', text: 'admin' }]);
  });

  it('is checked on every round: round 2 with a token that lost the scope is refused', async () => {
    const first = await mcp(
      url,
      'tools/call',
      { name: 'write_bug', arguments: { id: 2 } },
      bearer('alice-writer'),
    );
    expect(first.response.result?.resultType).toBe('input_required');
    const retry = {
      name: 'write_bug',
      arguments: { id: 2 },
      requestState: first.response.result!.requestState,
      inputResponses: { ok: accept({ confirm: true }) },
    };
    const downgraded = await mcp(url, 'tools/call', retry, bearer('alice-token'));
    expect(downgraded.status).toBe(403);
    const upgraded = await mcp(url, 'tools/call', retry, bearer('alice-writer'));
    expect(upgraded.response.result?.content).toEqual([{ type: 'text', text: 'wrote 2' }]);
  });

  it('covers a prompt’s completer too: it runs only for a token with the prompt’s scopes', async () => {
    const params = {
      ref: { type: 'ref/prompt', name: 'bug_report' },
      argument: { name: 'component', value: 'b' },
    };
    const refused = await mcp(url, 'completion/complete', params, bearer('alice-token'));
    expect(refused.status).toBe(403);
    expect(challengeOf(refused.headers)).toContain('scope="bugs:write"');
    const allowed = await mcp(url, 'completion/complete', params, bearer('alice-writer'));
    expect(allowed.response.result?.completion).toEqual({ values: ['billing'] });
    const prompt = await mcp(
      url,
      'prompts/get',
      { name: 'bug_report', arguments: { component: 'api' } },
      bearer('alice-token'),
    );
    expect(prompt.status).toBe(403);
  });

  it('listing still shows the tool (a client may step up for it) and does not leak requiredScopes', async () => {
    const reply = await mcp(url, 'tools/list', {}, bearer('alice-token'));
    const tools = reply.response.result!.tools as Array<Record<string, unknown>>;
    const write = tools.find((t) => t.name === 'write_bug')!;
    expect(write).toBeDefined();
    expect(write).not.toHaveProperty('requiredScopes');
  });
});

describe('a server without auth', () => {
  it('has no scopes to grant: a tool with requiredScopes refuses every caller with 403', async () => {
    const port = await freePort();
    const open = await devTokenServer({ resource: `http://127.0.0.1:${port}/mcp`, withAuth: false }).listen({
      port,
    });
    try {
      const reply = await mcp(open.url, 'tools/call', { name: 'write_bug', arguments: { id: 1 } });
      expect(reply.status).toBe(403);
      expect(challengeOf(reply.headers)).toBe(
        'Bearer error="insufficient_scope", error_description="this operation needs the scope bugs:write (missing: bugs:write)", scope="bugs:write"',
      );
      const free = await mcp(open.url, 'tools/call', { name: 'whoami', arguments: {} });
      expect(free.status).toBe(200);
    } finally {
      await open.close();
    }
  });
});
