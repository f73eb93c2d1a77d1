// Child process: this repository's server (the built dist/, so `npm run build` first) serving the two-round
// `approve_change` tool with the explicit inputRequired() API: round 1 asks for approval, round 2 completes.
// test/fixtures/approval-server.ts is the same tool for the tests.
//
// Usage: node bench/lib/ours-server.mjs --port P [--root DIR] [--store memory|sqlite|redis] [--tracing OTLP_URL]
//        [--auth dev|jwt|jwt-uncached] [--audit sqlite|sqlite-full|postgres] [--questions-tool]
// (0 = ephemeral; DIR:
// another checkout, built, for `npm run bench -- --baseline DIR`). Prints `listening on http://127.0.0.1:P/mcp`
// when ready. Keys come from MRTR_STATE_KEYS, else a per-process key. --store turns the replay guard on: sqlite is a
// fresh file in a temp dir; redis starts its own redis-server as a child of this process, so the benchmark's
// "server CPU" includes Redis's. --audit turns the audit trail on, durable before each answer: sqlite is a fresh
// file in a temp dir (synchronous=NORMAL, the default: through a process crash), sqlite-full the same with an fsync
// per batch (through a power cut); postgres starts its own throwaway cluster, whose CPU counts too.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const arg = (name) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const root = resolve(arg('--root') ?? join(import.meta.dirname, '..', '..'));
// zod from the same checkout as the server: schemas are checked by the copy of zod that built them.
const zodPath = createRequire(join(root, 'package.json')).resolve('zod');
const { z } = await import(pathToFileURL(zodPath).href);
const { inputRequired, McpServer, text } = await import(
  pathToFileURL(join(root, 'dist', 'server', 'index.js')).href
);

const cleanup = [];
async function startRedis() {
  const port = await new Promise((done) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => done(port));
    });
  });
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  cleanup.push(() => child.kill('SIGKILL'));
  await new Promise((ready, fail) => {
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
      if (/Ready to accept connections/.test(out)) ready();
    });
    child.once('exit', (code) => fail(new Error(`redis-server exited (${code})`)));
  });
  return `redis://127.0.0.1:${port}/0`;
}

async function openReplayStore(kind) {
  if (!kind) return undefined;
  const { openStore } = await import(pathToFileURL(join(root, 'dist', 'stores', 'index.js')).href);
  if (kind === 'memory') return openStore('memory');
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'mrtr-bench-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    return openStore(`sqlite:${join(dir, 'replay.db')}`);
  }
  if (kind === 'redis') return openStore(await startRedis());
  throw new Error(`--store must be memory, sqlite or redis, got ${kind}`);
}

/**
 * --auth dev: a development token; --auth jwt: JWT access tokens checked against a JWKS served on a local port (the
 * public key comes in MRTR_BENCH_JWK); --auth jwt-uncached: the same with every signature checked.
 */
async function openAuth(kind) {
  if (!kind) return undefined;
  const auth = await import(pathToFileURL(join(root, 'dist', 'auth', 'index.js')).href);
  const resource = 'http://127.0.0.1/mcp';
  if (kind === 'dev') {
    const verifier = new auth.DevTokens(auth.parseDevTokens({ 'bench-dev-token': { sub: 'bench-user' } }));
    return new auth.BearerAuth({ verifier, resource });
  }
  if (kind !== 'jwt' && kind !== 'jwt-uncached')
    throw new Error(`--auth must be dev, jwt or jwt-uncached, got ${kind}`);
  const jwks = JSON.stringify({ keys: [JSON.parse(process.env.MRTR_BENCH_JWK)] });
  const { createServer: createHttpServer } = await import('node:http');
  const keysServer = createHttpServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(jwks),
  );
  await new Promise((done) => keysServer.listen(0, '127.0.0.1', done));
  cleanup.push(() => keysServer.close());
  const verifier = new auth.JwtVerifier({
    issuer: 'https://bench-issuer.invalid',
    audience: 'urn:mrtr:bench',
    jwksUri: `http://127.0.0.1:${keysServer.address().port}/jwks`,
    ...(kind === 'jwt-uncached' ? { verifiedTokenCacheMs: 0 } : {}),
  });
  return new auth.BearerAuth({ verifier, resource });
}

async function openAuditTrail(kind) {
  if (!kind) return undefined;
  const { AuditTrail, openAuditSink } = await import(
    pathToFileURL(join(root, 'dist', 'audit', 'index.js')).href
  );
  let url;
  if (kind === 'sqlite' || kind === 'sqlite-full') {
    const dir = mkdtempSync(join(tmpdir(), 'mrtr-bench-audit-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    url = `sqlite:${join(dir, 'audit.db')}${kind === 'sqlite-full' ? '?synchronous=full' : ''}`;
  } else if (kind === 'postgres') {
    const { startPostgres } = await import('./postgres.mjs');
    const pg = await startPostgres();
    cleanup.push(pg.stop);
    url = pg.url;
  } else throw new Error(`--audit must be sqlite, sqlite-full or postgres, got ${kind}`);
  return AuditTrail.open(await openAuditSink(url), { instance: 'bench' });
}

/**
 * --tracing URL: the OpenTelemetry SDK started the way `mrtr serve` starts it (dist/cli/tracing.js), every round
 * sampled (or as OTEL_TRACES_SAMPLER says), its spans sent over OTLP/HTTP JSON to URL. Before the server is made.
 */
async function startTracing(url) {
  if (url === undefined) return undefined;
  const { startTracing: start } = await import(pathToFileURL(join(root, 'dist', 'cli', 'tracing.js')).href);
  // The SDK reads process.env itself (the exporter's endpoint and protocol): set there, as an operator would.
  const env = Object.assign(process.env, {
    OTEL_EXPORTER_OTLP_ENDPOINT: url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    // Every round sampled, unless the bench's own environment names a sampler (to measure a lower rate).
    OTEL_TRACES_SAMPLER: process.env.OTEL_TRACES_SAMPLER ?? 'always_on',
    OTEL_METRICS_EXPORTER: 'none',
    OTEL_LOGS_EXPORTER: 'none',
    OTEL_SERVICE_NAME: 'mrtr-bench',
  });
  const tracing = await start('mrtr-bench', undefined, env);
  if (tracing === undefined) throw new Error('--tracing: the SDK did not start');
  return tracing;
}

const tracing = await startTracing(arg('--tracing'));
const replayStore = await openReplayStore(arg('--store'));
const auth = await openAuth(arg('--auth'));
let trail;
try {
  trail = await openAuditTrail(arg('--audit'));
} catch (error) {
  for (const undo of cleanup) undo();
  throw error;
}
const server = new McpServer({
  name: 'mrtr-bench',
  version: '0.1.0',
  ...(replayStore ? { replayStore } : {}),
  ...(auth ? { auth } : {}),
  ...(trail ? { observers: [trail] } : {}),
}).tool(
  {
    name: 'approve_change',
    description: 'Asks for approval, then applies a change',
    input: z.object({ change: z.string() }),
  },
  ({ change }, ctx) => {
    const answer = ctx.inputResponses.confirm;
    if (answer?.action === 'accept' && answer.content?.approve === true) return text(`approved ${change}`);
    return inputRequired({
      inputRequests: {
        confirm: {
          method: 'elicitation/create',
          params: {
            mode: 'form',
            message: `Approve ${change}?`,
            requestedSchema: {
              type: 'object',
              properties: { approve: { type: 'boolean' } },
              required: ['approve'],
            },
          },
        },
      },
    });
  },
);

// --questions-tool: the curves bench's n-question tool (lib/questions-tool.mjs) beside approve_change.
if (process.argv.includes('--questions-tool'))
  (await import('./questions-tool.mjs')).addQuestionsTool(server, { z, text });

const port = Number(arg('--port') ?? 0);
// listen(), not a bare node:http server: the benchmark measures the transport users get, slow-client limits included.
const endpoint = await server.listen({ host: '127.0.0.1', port });
const stop = () =>
  endpoint
    .close()
    .then(() => trail?.close())
    .then(() => replayStore?.close())
    .then(() => tracing?.shutdown())
    .finally(() => {
      for (const undo of cleanup) undo();
      process.exit(0);
    });
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
console.log(`listening on ${endpoint.url}`);
