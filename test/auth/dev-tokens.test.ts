// The development tokens file: every rule names the entry it is about; lookups return the frozen principal.
import { describe, expect, it } from 'vitest';
import { DevTokens, DevTokensError, parseDevTokens } from '../../src/auth/index.js';

describe('parseDevTokens', () => {
  const cases: Array<[string, unknown, string]> = [
    ['not an object', [], 'expected a JSON object { "<token>": { "sub": "…" } }'],
    ['null', null, 'expected a JSON object'],
    ['empty', {}, 'no tokens'],
    ['an entry without sub', { t1: { name: 'x' } }, 'token "t1" needs "sub", a non-empty string'],
    ['an empty sub', { t1: { sub: '' } }, 'token "t1" needs "sub"'],
    [
      'an entry that is not an object',
      { t1: 'alice' },
      'token "t1" must map to an object with at least "sub"',
    ],
    [
      'an unknown key (a typo)',
      { t1: { sub: 'a', role: ['x'] } },
      'token "t1" has unknown keys role (known: sub, name, roles, scopes, client_id)',
    ],
    ['a token with a space', { 't 1': { sub: 'a' } }, 'token "t 1" is not a valid bearer token'],
    [
      'scopes as a string',
      { t1: { sub: 'a', scopes: 'read' } },
      'token "t1": "scopes" must be an array of non-empty strings',
    ],
    [
      'roles with a number',
      { t1: { sub: 'a', roles: [1] } },
      'token "t1": "roles" must be an array of non-empty strings',
    ],
    [
      'a scope with a space',
      { t1: { sub: 'a', scopes: ['a b'] } },
      'token "t1": scope "a b" is not a valid scope token',
    ],
    ['a name that is not a string', { t1: { sub: 'a', name: 3 } }, 'token "t1": "name" must be a string'],
    [
      'an empty client_id',
      { t1: { sub: 'a', client_id: '' } },
      'token "t1": "client_id" must be a non-empty string',
    ],
  ];
  for (const [what, document, message] of cases) {
    it(`refuses ${what}, naming the entry`, () => {
      expect(() => parseDevTokens(document)).toThrow(DevTokensError);
      expect(() => parseDevTokens(document)).toThrow(message);
    });
  }

  it('shortens a long token in messages (the file is secret, logs are not)', () => {
    const token = 'a-very-long-secret-token-value';
    expect(() => parseDevTokens({ [token]: {} })).toThrow('token "a-very…"');
    expect(() => parseDevTokens({ [token]: {} })).not.toThrow(token);
  });

  it('a __proto__ or constructor token is a plain token, not an Object member', () => {
    const tokens = parseDevTokens(JSON.parse('{"__proto__": {"sub": "p"}, "constructor": {"sub": "c"}}'));
    const dev = new DevTokens(tokens);
    expect(dev.verify('__proto__').subject).toBe('p');
    expect(dev.verify('constructor').subject).toBe('c');
    expect(() => dev.verify('toString')).toThrow('the access token is not valid');
  });
});

describe('DevTokens', () => {
  const dev = new DevTokens(
    parseDevTokens({
      'alice-token': { sub: 'alice', name: 'Alice', roles: ['r'], scopes: ['s'], client_id: 'cli' },
    }),
  );
  it('finds the principal of a token, frozen', () => {
    const principal = dev.verify('alice-token');
    expect(principal).toEqual({
      subject: 'alice',
      issuer: 'urn:mrtr:dev-tokens',
      name: 'Alice',
      roles: ['r'],
      scopes: ['s'],
      clientId: 'cli',
    });
    expect(Object.isFrozen(principal)).toBe(true);
  });
  it('refuses any other token with invalid_token (401)', () => {
    for (const token of ['alice-toke', 'alice-token ', 'ALICE-TOKEN', '']) {
      expect(() => dev.verify(token)).toThrow(
        expect.objectContaining({ error: 'invalid_token', status: 401 }),
      );
    }
  });
  it('names no authorization server: nobody issues these', () => {
    expect(dev.authorizationServers).toEqual([]);
  });
});
