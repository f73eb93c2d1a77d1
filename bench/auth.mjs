// What checking a bearer token costs one request, in process (no network): BearerAuth.authenticate with development
// tokens, with a JWT whose verification is remembered (the common case: a flow's later rounds, a client's later
// calls), and with a JWT checked every time (ES256 and RS256). Beside it, the same loop doing nothing, as the anchor.
// Run after `npm run build`:  node bench/auth.mjs [--seconds=1]
import { generateKeyPairSync } from 'node:crypto';
import { SignJWT } from 'jose';
import { BearerAuth, DevTokens, JwtVerifier, parseDevTokens } from '../dist/auth/index.js';

const hit = process.argv.find((a) => a.startsWith('--seconds='));
const SECONDS = hit ? Number(hit.slice(10)) : 1;
const ISSUER = 'https://issuer.example';
const AUDIENCE = 'https://mcp.example/mcp';
const resource = AUDIENCE;

/** A verifier that reads keys from an in-memory JWKS (jose's local key set, as after the first fetch). */
async function jwtCase(alg, cached) {
  const { privateKey, publicKey } =
    alg === 'ES256'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'k1', alg };
  const jwks = JSON.stringify({ keys: [jwk] });
  const fetchJwks = async () =>
    new Response(jwks, { status: 200, headers: { 'content-type': 'application/json' } });
  const token = await new SignJWT({ scope: 'a b', client_id: 'c' })
    .setProtectedHeader({ alg, kid: 'k1', typ: 'at+jwt' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject('alice')
    .setIssuedAt()
    .setExpirationTime('2h')
    .sign(privateKey);
  const metadata = JSON.stringify({ issuer: ISSUER, jwks_uri: `${ISSUER}/jwks` });
  globalThis.fetch = async (url) =>
    String(url).endsWith('/jwks') ? fetchJwks() : new Response(metadata, { status: 200 });
  const verifier = new JwtVerifier({
    issuer: ISSUER,
    audience: AUDIENCE,
    ...(cached ? {} : { verifiedTokenCacheMs: 0 }),
  });
  await verifier.verify(token);
  return { auth: new BearerAuth({ verifier, resource }), token };
}

const dev = new DevTokens(parseDevTokens({ 'bench-dev-token': { sub: 'alice' } }));
const cases = [
  ['no auth (the loop alone)', { auth: { authenticate: () => undefined }, token: 'x' }],
  ['development token', { auth: new BearerAuth({ verifier: dev, resource }), token: 'bench-dev-token' }],
  ['JWT ES256, remembered', await jwtCase('ES256', true)],
  ['JWT ES256, every signature', await jwtCase('ES256', false)],
  ['JWT RS256, every signature', await jwtCase('RS256', false)],
];

async function measure({ auth, token }) {
  // A fresh header list per request, as node gives one per request.
  const headers = () => [
    'Host',
    '127.0.0.1',
    'content-type',
    'application/json',
    'authorization',
    `Bearer ${token}`,
  ];
  const until = performance.now() + SECONDS * 1000;
  let n = 0;
  const start = performance.now();
  while (performance.now() < until) {
    for (let i = 0; i < 100; i++) {
      const p = auth.authenticate(headers(), '/mcp');
      if (p instanceof Promise) await p;
    }
    n += 100;
  }
  return ((performance.now() - start) * 1000) / n;
}

console.log(`bearer-token check per request, ${SECONDS} s each (node ${process.version})`);
for (const [label, c] of cases) {
  await measure(c); // warm-up
  console.log(`${label.padEnd(30)} ${(await measure(c)).toFixed(2).padStart(8)} µs/request`);
}
