// requestState codec benchmark: our sealed codec (AES-256-GCM, all bindings on) vs the official SDK's
// createRequestStateCodec (HMAC-SHA256, signed only) with a bind callback, on the same payloads.
// Run after `npx tsc -p tsconfig.build.json`:  node bench/state.mjs [--seconds=0.5] [--rounds=5]
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createRequestStateCodec } from '@modelcontextprotocol/server';
import { Keyring, StateCodec } from '../dist/state/index.js';

const arg = (name, dflt) => {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit === undefined ? dflt : Number(hit.slice(name.length + 3));
};
const SECONDS = arg('seconds', 0.5);
const ROUNDS = arg('rounds', 5);

const small = { step: 'confirm', attempt: 1, resource: 'db-42', ok: true };
const journal = {
  v: 1,
  flow: 'deploy-approval',
  answers: Array.from({ length: 8 }, (_, i) => ({
    key: `ask-${i}`,
    kind: 'elicitation',
    action: 'accept',
    content: { approved: i % 2 === 0, comment: `reviewer note number ${i}`, at: 1764400000000 + i * 1000 },
  })),
};
const payloads = { small, journal };

const principal = { subject: 'user-7f3a', issuer: 'https://idp.example.com', clientId: 'client-1' };
const binding = {
  principal,
  method: 'tools/call',
  target: 'deploy',
  arguments: { env: 'prod', service: 'api' },
};
const secret = randomBytes(32);

const keyring = new Keyring([{ kid: 'k1', secret }]);
// The default codec (no compression: no length oracle), and the opt-in deflate for state that holds no secrets.
const ours = new StateCodec({ keyring, audience: 'mrtr-bench' });
const oursDeflate = new StateCodec({ keyring, audience: 'mrtr-bench', compression: true });

const ctx = {
  mcpReq: { method: 'tools/call' },
  http: { authInfo: { clientId: 'client-1', token: 't', scopes: [] } },
};
const bind = (c) => `${c.mcpReq.method}\0${c.http?.authInfo?.clientId ?? ''}`;
const sdk = createRequestStateCodec({ key: secret, bind });

// The SDK codec's envelope, written synchronously with node:crypto: what its design costs without WebCrypto's
// promise round-trips. Wire: "v1." b64url(JSON {p, exp, b}) "." b64url(HMAC).
function createSyncHmacCodec(key, bindFn, ttlSeconds = 600) {
  const bindTag = (v) =>
    createHmac('sha256', key).update(`mcp.requestState.bind:${v}`).digest().subarray(0, 16);
  return {
    mint(payload, c) {
      const env = {
        p: payload,
        exp: Math.floor(Date.now() / 1000) + ttlSeconds,
        b: bindTag(bindFn(c)).toString('base64url'),
      };
      const body = `v1.${Buffer.from(JSON.stringify(env)).toString('base64url')}`;
      return `${body}.${createHmac('sha256', key).update(body).digest('base64url')}`;
    },
    verify(state, c) {
      const dot = state.lastIndexOf('.');
      if (!state.startsWith('v1.') || dot <= 3) throw new Error('malformed');
      const mac = Buffer.from(state.slice(dot + 1), 'base64url');
      const want = createHmac('sha256', key).update(state.slice(0, dot)).digest();
      if (mac.length !== want.length || !timingSafeEqual(mac, want)) throw new Error('mac');
      const env = JSON.parse(Buffer.from(state.slice(3, dot), 'base64url').toString('utf8'));
      if (typeof env.exp !== 'number' || env.exp < Math.floor(Date.now() / 1000)) throw new Error('expired');
      if (!timingSafeEqual(Buffer.from(env.b, 'base64url'), bindTag(bindFn(c)))) throw new Error('bind');
      return env.p;
    },
  };
}
const sdkSync = createSyncHmacCodec(secret, bind);

function oursPair(payload, codec = ours) {
  const r = codec.open(codec.seal(payload, binding), binding);
  if (!r.ok) throw new Error(`open failed: ${r.reason}`);
}
const oursDeflatePair = (payload) => oursPair(payload, oursDeflate);
async function sdkPair(payload) {
  await sdk.verify(await sdk.mint(payload, ctx), ctx);
}
function sdkSyncPair(payload) {
  sdkSync.verify(sdkSync.mint(payload, ctx), ctx);
}

async function rate(fn, payload) {
  const deadline = performance.now() + SECONDS * 1000;
  let n = 0;
  const t0 = performance.now();
  let t = t0;
  while (t < deadline) {
    for (let i = 0; i < 64; i++) {
      const r = fn(payload);
      if (r !== undefined) await r;
    }
    n += 64;
    t = performance.now();
  }
  return (n * 1000) / (t - t0);
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (x) => Math.round(x).toLocaleString('en-US').padStart(9);

const cases = [
  ['mrtr StateCodec (AES-GCM, all bindings)', oursPair],
  ['mrtr StateCodec, compression: true', oursDeflatePair],
  ['SDK createRequestStateCodec (awaited)', sdkPair],
  ['SDK envelope, sync node:crypto HMAC', sdkSyncPair],
];

const sdkCase = cases.findIndex(([, fn]) => fn === sdkPair);

console.log(
  `node ${process.version}, ${ROUNDS} rounds of ${SECONDS}s per case, cases interleaved; ` +
    'median seal+open pairs/s, ratio = median of per-round ratios to the SDK',
);
for (const [name, payload] of Object.entries(payloads)) {
  const json = JSON.stringify(payload).length;
  const oursTok = ours.seal(payload, binding);
  const deflatedTok = oursDeflate.seal(payload, binding);
  const sdkTok = await sdk.mint(payload, ctx);
  const syncTok = sdkSync.mint(payload, ctx);
  console.log(`\n${name} payload: ${json} bytes of JSON`);
  console.log(
    `  token bytes: mrtr ${oursTok.length} (encrypted; ${deflatedTok.length} with compression), ` +
      `SDK ${sdkTok.length} (signed only), sync ${syncTok.length}`,
  );
  for (const [, fn] of cases) for (let i = 0; i < 2000; i++) await fn(payload); // warm up
  const rates = cases.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    for (let c = 0; c < cases.length; c++) rates[c].push(await rate(cases[c][1], payload));
  }
  cases.forEach(([label], c) => {
    const ratio = median(rates[c].map((x, r) => x / rates[sdkCase][r]));
    console.log(`  ${label.padEnd(42)} ${fmt(median(rates[c]))} pairs/s  ${ratio.toFixed(2)}x SDK`);
  });
}
