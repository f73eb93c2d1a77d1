// JwtVerifier without a network: HS256 with an explicit secret, to pin the remembered-token rules — a verified token
// is remembered (the second round pays no signature), never past its exp, and the memory is bounded.
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { JwtVerifier } from '../../src/auth/index.js';

const SECRET = 'a-shared-secret-of-at-least-32-bytes!';
const ISSUER = 'https://issuer.example';
const AUDIENCE = 'https://mcp.example/mcp';

const token = (claims: Record<string, unknown> = {}, expiresIn = 300) =>
  new SignJWT({ scope: 'a b', ...claims })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject(String(claims.sub ?? 'alice'))
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + expiresIn)
    .sign(new TextEncoder().encode(SECRET));

afterEach(() => {
  vi.useRealTimers();
});

describe('remembered verifications', () => {
  it('a token verified once is answered from memory, synchronously, the next time', async () => {
    const verifier = new JwtVerifier({ issuer: ISSUER, audience: AUDIENCE, secret: SECRET });
    const t = await token();
    const first = await verifier.verify(t);
    const second = verifier.verify(t);
    expect(second).not.toBeInstanceOf(Promise);
    expect(second).toBe(first);
  });

  it('is never remembered past the token’s exp', async () => {
    const verifier = new JwtVerifier({
      issuer: ISSUER,
      audience: AUDIENCE,
      secret: SECRET,
      verifiedTokenCacheMs: 600_000,
    });
    const t = await token({}, 30);
    await verifier.verify(t);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 40_000 });
    await expect(Promise.resolve().then(() => verifier.verify(t))).rejects.toMatchObject({
      reason: 'expired',
    });
  });

  it('is forgotten after verifiedTokenCacheMs, and the signature is checked again', async () => {
    const verifier = new JwtVerifier({
      issuer: ISSUER,
      audience: AUDIENCE,
      secret: SECRET,
      verifiedTokenCacheMs: 1_000,
    });
    const t = await token();
    const first = await verifier.verify(t);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 2_000 });
    const again = verifier.verify(t);
    expect(again).toBeInstanceOf(Promise);
    expect(await again).not.toBe(first);
  });

  it('keeps at most verifiedTokenCacheSize tokens, forgetting the oldest', async () => {
    const verifier = new JwtVerifier({
      issuer: ISSUER,
      audience: AUDIENCE,
      secret: SECRET,
      verifiedTokenCacheSize: 2,
    });
    const [a, b, c] = await Promise.all([token({ sub: 'a' }), token({ sub: 'b' }), token({ sub: 'c' })]);
    for (const t of [a!, b!, c!]) await verifier.verify(t);
    expect(verifier.verify(a!)).toBeInstanceOf(Promise);
    expect(verifier.verify(c!)).not.toBeInstanceOf(Promise);
  });

  it('with verifiedTokenCacheMs 0, every call checks the signature', async () => {
    const verifier = new JwtVerifier({
      issuer: ISSUER,
      audience: AUDIENCE,
      secret: SECRET,
      verifiedTokenCacheMs: 0,
    });
    const t = await token();
    await verifier.verify(t);
    expect(verifier.verify(t)).toBeInstanceOf(Promise);
  });

  it('a refused token is never remembered', async () => {
    const verifier = new JwtVerifier({ issuer: ISSUER, audience: 'https://other.example', secret: SECRET });
    const t = await token();
    await expect(verifier.verify(t)).rejects.toMatchObject({ reason: 'wrong_audience' });
    await expect(verifier.verify(t)).rejects.toMatchObject({ reason: 'wrong_audience' });
  });
});

describe('claims', () => {
  it('the principal carries scopes from scope, and the configured roles claim', async () => {
    const verifier = new JwtVerifier({
      issuer: ISSUER,
      audience: AUDIENCE,
      secret: SECRET,
      rolesClaim: 'groups',
    });
    const principal = await verifier.verify(await token({ groups: ['ops'] }));
    expect(principal).toMatchObject({ subject: 'alice', issuer: ISSUER, scopes: ['a', 'b'], roles: ['ops'] });
  });
  it('an empty subject is no subject (jose only checks that the claim is there)', async () => {
    const verifier = new JwtVerifier({ issuer: ISSUER, audience: AUDIENCE, secret: SECRET });
    const empty = await new SignJWT({ sub: '' })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(SECRET));
    await expect(Promise.resolve().then(() => verifier.verify(empty))).rejects.toMatchObject({
      reason: 'missing_claim',
    });
  });
  it('typ is enforced when configured (RFC 9068 at+jwt)', async () => {
    const verifier = new JwtVerifier({ issuer: ISSUER, audience: AUDIENCE, secret: SECRET, type: 'at+jwt' });
    await expect(verifier.verify(await token())).rejects.toMatchObject({ reason: 'wrong_type' });
  });
});

describe('key-set timing options', () => {
  // The key set that uses them is made with the first check (jose loads then): a bad value stops the server at start.
  const jwks = { issuer: ISSUER, audience: AUDIENCE, jwksUri: 'https://issuer.example/jwks' };
  it.each([
    ['fetchTimeoutMs', 1.5, /fetchTimeoutMs must be a whole number of milliseconds, 0 or more, got 1.5/],
    ['fetchTimeoutMs', -1, /fetchTimeoutMs must be a whole number/],
    ['jwksCooldownMs', Number.NaN, /jwksCooldownMs must be a number of milliseconds, 0 or more, got NaN/],
    ['jwksCacheMaxAgeMs', -5, /jwksCacheMaxAgeMs must be a number of milliseconds, 0 or more, got -5/],
  ])('%s = %s is refused when the verifier is made', (name, value, message) => {
    expect(() => new JwtVerifier({ ...jwks, [name]: value })).toThrow(message);
  });

  it('good values are accepted', () => {
    expect(
      () => new JwtVerifier({ ...jwks, fetchTimeoutMs: 0, jwksCooldownMs: 0, jwksCacheMaxAgeMs: 1.5 }),
    ).not.toThrow();
  });
});

describe('a static key set (jwks)', () => {
  async function signed(claims: Record<string, unknown> = {}) {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' };
    const t = await new SignJWT({ scope: 'a', ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject('alice')
      .setExpirationTime('5m')
      .sign(privateKey);
    return { jwk, t };
  }

  it('verifies a token against the given public keys, with no fetch', async () => {
    const { jwk, t } = await signed();
    const fetch = vi.fn();
    const verifier = new JwtVerifier({ issuer: ISSUER, audience: AUDIENCE, jwks: { keys: [jwk] }, fetch });
    await expect(verifier.verify(t)).resolves.toMatchObject({ subject: 'alice', scopes: ['a'] });
    expect(fetch).not.toHaveBeenCalled();
  });

  it('refuses a token signed by a key not in the set', async () => {
    const { t } = await signed();
    const other = await signed();
    const verifier = new JwtVerifier({ issuer: ISSUER, audience: AUDIENCE, jwks: { keys: [other.jwk] } });
    await expect(Promise.resolve().then(() => verifier.verify(t))).rejects.toMatchObject({
      reason: 'bad_signature',
    });
  });

  it('takes one key source: jwks with a jwksUri or a secret is refused, and so is a set without keys', () => {
    const jwks = { keys: [] };
    expect(
      () => new JwtVerifier({ issuer: ISSUER, audience: AUDIENCE, jwks, jwksUri: `${ISSUER}/jwks` }),
    ).toThrow('give one of secret, jwksUri or jwks, not several');
    expect(() => new JwtVerifier({ issuer: ISSUER, audience: AUDIENCE, jwks, secret: SECRET })).toThrow(
      'give one of secret, jwksUri or jwks, not several',
    );
    expect(
      () => new JwtVerifier({ issuer: ISSUER, audience: AUDIENCE, jwks: {} as { keys: object[] } }),
    ).toThrow('jwks must be a JSON Web Key Set');
  });
});
