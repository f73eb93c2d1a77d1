// The small rules of the auth room, one block each: reading the bearer token, quoting the challenge, scope
// hierarchies, claims to principal, the metadata URLs for an issuer and for a resource.
import { describe, expect, it } from 'vitest';
import { authorizationHeaders, bearerToken } from '../../src/auth/bearer-header.js';
import { principalFromClaims } from '../../src/auth/claims.js';
import {
  AuthRefusal,
  bearerChallenge,
  expandScopes,
  fetchIssuerMetadata,
  metadataPaths,
  metadataUrls,
  missingScopes,
} from '../../src/auth/index.js';

describe('bearerToken', () => {
  it('reads one Bearer header, any case of the scheme, b64token characters and padding', () => {
    expect(bearerToken(['Bearer abc.DEF-_~+/=='], '/mcp')).toBe('abc.DEF-_~+/==');
    expect(bearerToken(['bearer  t1 '], '/mcp')).toBe('t1');
  });
  const refused: Array<[string, string[], string, string]> = [
    ['none', [], '/mcp', 'no_token'],
    ['two', ['Bearer a', 'Bearer a'], '/mcp', 'repeated_authorization'],
    ['Basic', ['Basic YTpi'], '/mcp', 'malformed_authorization'],
    ['an empty token', ['Bearer '], '/mcp', 'malformed_authorization'],
    ['a comma list', ['Bearer a, Bearer b'], '/mcp', 'malformed_authorization'],
    ['a token in the query', ['Bearer a'], '/mcp?access_token=a', 'token_in_query'],
    ['a token in the query, any case', [], '/mcp?ACCESS_TOKEN=a', 'token_in_query'],
  ];
  for (const [what, headers, url, reason] of refused) {
    it(`refuses ${what} (${reason})`, () => {
      expect(() => bearerToken(headers, url)).toThrow(expect.objectContaining({ reason, status: 401 }));
    });
  }
  it('a query parameter merely ending in access_token is not a token', () => {
    expect(bearerToken(['Bearer a'], '/mcp?my_access_token=1')).toBe('a');
  });
  it('collects every Authorization header from rawHeaders, whatever its case', () => {
    expect(
      authorizationHeaders(['Host', 'x', 'authorization', 'a', 'AUTHORIZATION', 'b', 'X-Authorization', 'c']),
    ).toEqual(['a', 'b']);
  });
});

describe('bearerChallenge', () => {
  it('quotes and escapes, and drops control characters a header cannot carry', () => {
    const refusal = new AuthRefusal('invalid_token', 'x', 'Unauthorized: say "hi" \\ now\r\nSet-Cookie: a=b');
    expect(bearerChallenge({ resourceMetadata: 'https://h/m', scope: ['a', 'b'], refusal })).toBe(
      'Bearer error="invalid_token", error_description="say \\"hi\\" \\\\ nowSet-Cookie: a=b", scope="a b", resource_metadata="https://h/m"',
    );
  });
  it('is bare Bearer with nothing to say', () => {
    expect(bearerChallenge({ resourceMetadata: undefined, scope: [], refusal: undefined })).toBe('Bearer');
  });
  it('names no error for the issuer being down (503 is no statement about the token)', () => {
    const refusal = new AuthRefusal('unavailable', 'jwks_unavailable', 'down');
    expect(bearerChallenge({ resourceMetadata: 'https://h/m', scope: undefined, refusal })).toBe(
      'Bearer resource_metadata="https://h/m"',
    );
  });
});

describe('scopes', () => {
  it('follows implications transitively, cycles included', () => {
    const implications = { admin: ['write'], write: ['read'], read: ['admin'] };
    expect([...expandScopes(['write'], implications)].sort()).toEqual(['admin', 'read', 'write']);
  });
  it('reports exactly the missing ones, in the order required', () => {
    expect(missingScopes(['a'], ['c', 'a', 'b'])).toEqual(['c', 'b']);
    expect(missingScopes([], [])).toEqual([]);
  });
  it('an implication named like an Object member implies nothing', () => {
    expect(missingScopes(['constructor', 'toString'], ['x'], {})).toEqual(['x']);
  });
});

describe('principalFromClaims', () => {
  const names = { scopeClaims: ['scope', 'scp'], rolesClaim: 'realm_access.roles' };
  it('reads scope (string) or scp (array), nested roles, client_id or azp, name or preferred_username', () => {
    expect(
      principalFromClaims(
        {
          sub: 's',
          iss: 'i',
          scp: ['a', 'b'],
          azp: 'app',
          preferred_username: 'sam',
          exp: 10,
          realm_access: { roles: ['r'] },
        },
        names,
      ),
    ).toEqual({
      subject: 's',
      issuer: 'i',
      scopes: ['a', 'b'],
      roles: ['r'],
      clientId: 'app',
      name: 'sam',
      expiresAt: 10_000,
    });
    expect(
      principalFromClaims({ sub: 's', iss: 'i', scope: 'a  b', client_id: 'c', azp: 'x' }, names),
    ).toMatchObject({
      scopes: ['a', 'b'],
      clientId: 'c',
      roles: [],
    });
  });
  it('never reads inherited members for a claim path', () => {
    expect(
      principalFromClaims(
        { sub: 's', iss: 'i' },
        { scopeClaims: ['constructor'], rolesClaim: '__proto__.x' },
      ),
    ).toEqual({
      subject: 's',
      issuer: 'i',
      scopes: [],
      roles: [],
    });
  });
  it('ignores values that are not strings', () => {
    expect(
      principalFromClaims(
        { sub: 's', iss: 'i', scope: 5, roles: [1, 'ok', ''] },
        { scopeClaims: ['scope'], rolesClaim: 'roles' },
      ),
    ).toMatchObject({
      scopes: [],
      roles: ['ok'],
    });
  });
});

describe('metadata URLs', () => {
  it('for an issuer: RFC 8414 first, then OpenID Connect Discovery, with path insertion for a path', () => {
    expect(metadataUrls('https://as.example')).toEqual([
      'https://as.example/.well-known/oauth-authorization-server',
      'https://as.example/.well-known/openid-configuration',
    ]);
    expect(metadataUrls('https://as.example/tenant1')).toEqual([
      'https://as.example/.well-known/oauth-authorization-server/tenant1',
      'https://as.example/.well-known/openid-configuration/tenant1',
      'https://as.example/tenant1/.well-known/openid-configuration',
    ]);
  });
  it('for a resource: path-inserted first, then the root', () => {
    expect(metadataPaths('https://mcp.example/public/mcp')).toEqual([
      '/.well-known/oauth-protected-resource/public/mcp',
      '/.well-known/oauth-protected-resource',
    ]);
    expect(metadataPaths('https://mcp.example')).toEqual(['/.well-known/oauth-protected-resource']);
  });
});

describe('fetchIssuerMetadata', () => {
  const serving = (documents: Record<string, unknown>): typeof fetch =>
    (async (url: string | URL | Request) => {
      const body = documents[String(url)];
      return body === undefined
        ? new Response('not found', { status: 404 })
        : new Response(JSON.stringify(body), {
            status: 200,
            headers: { 'content-type': 'application/json' },
          });
    }) as typeof fetch;

  it('falls back to OpenID Connect Discovery when RFC 8414 metadata is absent', async () => {
    const doc = { issuer: 'https://as.example', jwks_uri: 'https://as.example/jwks' };
    const metadata = await fetchIssuerMetadata(
      'https://as.example',
      1000,
      serving({ 'https://as.example/.well-known/openid-configuration': doc }),
    );
    expect(metadata.jwks_uri).toBe('https://as.example/jwks');
  });
  it('refuses metadata that names another issuer (mix-up defence)', async () => {
    const doc = { issuer: 'https://evil.example', jwks_uri: 'https://evil.example/jwks' };
    await expect(
      fetchIssuerMetadata(
        'https://as.example',
        1000,
        serving({ 'https://as.example/.well-known/oauth-authorization-server': doc }),
      ),
    ).rejects.toThrow('names issuer "https://evil.example", not https://as.example');
  });
  it('refuses metadata without a jwks_uri, and says what every URL answered when none has any', async () => {
    await expect(
      fetchIssuerMetadata(
        'https://as.example',
        1000,
        serving({
          'https://as.example/.well-known/oauth-authorization-server': { issuer: 'https://as.example' },
        }),
      ),
    ).rejects.toThrow('has no jwks_uri');
    await expect(fetchIssuerMetadata('https://as.example', 1000, serving({}))).rejects.toThrow(
      /no metadata for issuer https:\/\/as.example \(.*oauth-authorization-server: HTTP 404; .*openid-configuration: HTTP 404\)/,
    );
  });
});
