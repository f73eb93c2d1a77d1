// Credentials for the auth rows of the benchmark: one development token, and one JWT access token signed by a key
// made here. The parent sends the token; the server child is handed the public key (MRTR_BENCH_JWK) and serves it
// as its issuer's JWKS on a local port, so the JWT row pays for real signature checks against a fetched key set.
import { generateKeyPairSync } from 'node:crypto';
import { SignJWT } from 'jose';

export const BENCH_DEV_TOKEN = 'bench-dev-token';
export const BENCH_ISSUER = 'https://bench-issuer.invalid';
export const BENCH_AUDIENCE = 'urn:mrtr:bench';

let made;
/** The key pair and token, made once per process. */
export async function benchJwt() {
  if (!made) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'bench', alg: 'ES256', use: 'sig' };
    const token = await new SignJWT({ scope: 'bench', client_id: 'bench-client' })
      .setProtectedHeader({ alg: 'ES256', kid: 'bench', typ: 'at+jwt' })
      .setIssuer(BENCH_ISSUER)
      .setAudience(BENCH_AUDIENCE)
      .setSubject('bench-user')
      .setIssuedAt()
      .setExpirationTime('2h')
      .sign(privateKey);
    made = { jwk: JSON.stringify(jwk), token };
  }
  return made;
}
