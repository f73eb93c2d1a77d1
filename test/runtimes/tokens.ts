// Access tokens for the runtime tests, signed with the private half of the fixture's issuer key (a test-only key).
import { importJWK, SignJWT } from 'jose';
import { ISSUER, ISSUER_JWK, RESOURCE } from './fixture-server.js';

const PRIVATE_D = '1dlCIRc6EEwugW5-CoFK5wf7IbpXSNA5AaGj4SAksYg';

/** A five-minute ES256 token for `subject`, issued for the fixture server. */
export async function accessToken(subject = 'alice'): Promise<string> {
  const key = await importJWK({ ...ISSUER_JWK, d: PRIVATE_D }, 'ES256');
  return new SignJWT({ scope: 'mcp' })
    .setProtectedHeader({ alg: 'ES256', kid: ISSUER_JWK.kid })
    .setIssuer(ISSUER)
    .setAudience(RESOURCE)
    .setSubject(subject)
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(key);
}
