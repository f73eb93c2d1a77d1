// A fleet of gateways (docs/gateway.md, "Running several gateways"): three `mrtr gateway` instances behind Debian's
// nginx (docs/deploy.md's block), sharing one state keyring, Redis (replay guard, approvals, wake-ups, rate limits)
// and a PostgreSQL audit trail, in front of one upstream that counts its effects. Callers run consent and approval
// flows whose rounds land on any instance; a reviewer votes through the balancer, so a caller held on one instance is
// woken by a vote recorded on another. One instance is SIGKILLed mid-run and restarted. Every call completes, no
// call's effect runs twice (one idempotency key per call, as the upstream saw it), and `mrtr audit verify` passes.
// `npm run test:fleet` runs it with the server's fleet test.
import { AsyncLocalStorage } from 'node:async_hooks';

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type InputQuestion, type InputResolver, McpClient, type MrtrOutcome } from 'mrtr/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpServer, mcpHttp, text } from '../../src/server/index.js';
import { freePort } from '../helpers/free-port.js';
import { TestPostgres } from '../helpers/postgres-server.js';
import { TestRedis } from '../helpers/redis-server.js';
import { runCommand } from '../helpers/run-cli.js';
import { type ServedCli, serveCli } from '../helpers/serve-cli.js';
import { nginxBlockFromDoc, pointAt, TestNginx } from './nginx.js';

const KEYS = `k1:${Buffer.alloc(32, 7).toString('base64url')}`;
const INSTANCES = ['gw-a', 'gw-b', 'gw-c'];
const CALLERS = Array.from({ length: 6 }, (_, i) => `caller${i}`);
const IDEMPOTENCY = 'dev.mrtr/idempotencyKey';
/** Resends while a round gets no answer: enough to outlast a dead instance's lease (--call-timeout 5s + 10 s). */
const RETRY = { attempts: 60, initialMs: 50, maxMs: 500 };

let dir: string;
let redis: TestRedis;
let pg: TestPostgres;
let nginx: TestNginx;
let upstream: Server;
let balancer: string;
let ports: number[];
let env: Record<string, string>;
let vkey: string;
const gateways: ServedCli[] = [];
const VICTIM = 1;
let restarted: Promise<ServedCli> | undefined;

/** What the upstream saw: every tools/call it ran, and each call's effect under its idempotency key. */
const seen = { requests: 0, repeats: 0 };
const effects = new Map<string, { tool: string; mark: string }>();
const keyOfRequest = new AsyncLocalStorage<string | undefined>();

/** The upstream: an mrtr server behind a small node:http front that reads each call's idempotency key. */
async function startUpstream(): Promise<string> {
  const server = new McpServer({
    name: 'ledger',
    version: '1.0.0',
    logger: { info() {}, warn() {}, error() {} },
  });
  const effect = (tool: string) => (args: Record<string, unknown>) => {
    seen.requests++;
    const key = keyOfRequest.getStore();
    if (key === undefined) return text('refused: no idempotency key');
    // A call run again under the same key (its gateway instance died after sending it) is answered, not re-run.
    if (effects.has(key)) seen.repeats++;
    else effects.set(key, { tool, mark: String(args.mark) });
    return text(`${tool} ${effects.get(key)!.mark} done`);
  };
  server.tool({ name: 'note', description: 'Write a note in the ledger' }, effect('note'));
  server.tool({ name: 'transfer', description: 'Move money between accounts' }, effect('transfer'));
  const handler = mcpHttp(server);
  const port = await freePort();
  upstream = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    let key: string | undefined;
    try {
      key = JSON.parse(body.toString()).params?._meta?.[IDEMPOTENCY];
    } catch {
      key = undefined;
    }
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers))
      if (typeof value === 'string') headers.set(name, value);
    const request = new Request(`http://127.0.0.1:${port}${req.url}`, {
      method: req.method,
      headers,
      ...(req.method === 'GET' || req.method === 'HEAD' ? {} : { body }),
    });
    const response = await keyOfRequest.run(key, () => handler.fetch(request));
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) for await (const chunk of response.body) res.write(chunk);
    res.end();
  });
  await new Promise<void>((resolve) => upstream.listen(port, '127.0.0.1', resolve));
  return `http://127.0.0.1:${port}/mcp`;
}

const argsOf = (i: number) => [
  '--config',
  join(dir, 'gateway.yaml'),
  '--port',
  String(ports[i]),
  // The public URL, the same on every instance: the pages and the approval links name the balancer.
  '--resource',
  balancer,
  '--tokens',
  join(dir, 'tokens.json'),
  '--state-keys',
  KEYS,
  '--store',
  redis.url,
  '--audit',
  pg.url,
  '--audit-instance',
  INSTANCES[i]!,
  // The upstream answers at once: a short limit, so a dead instance's rounds are taken over 15 s later.
  '--call-timeout',
  '5s',
];

async function startGateway(i: number): Promise<ServedCli> {
  const gateway = await serveCli(argsOf(i), 'gateway', { env });
  await gateway.saidOnStderr('upstreams started:');
  return gateway;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mrtr-gw-fleet-'));
  [redis, pg] = await Promise.all([TestRedis.start(), TestPostgres.start()]);
  const upstreamUrl = await startUpstream();
  writeFileSync(
    join(dir, 'tokens.json'),
    JSON.stringify({
      ...Object.fromEntries(CALLERS.map((c) => [`${c}-token`, { sub: c, roles: ['requester'] }])),
      'bob-token': { sub: 'bob', roles: ['approver'] },
    }),
  );
  writeFileSync(
    join(dir, 'gateway.yaml'),
    `upstreams:
  - name: ledger
    url: ${upstreamUrl}
rules:
  - tools: ["ledger/note"]
    roles: [requester]
    require: [consent]
  - tools: ["ledger/transfer"]
    roles: [requester]
    require: [approval]
    approval: { role: approver, approvals: 1 }
`,
  );
  const keygen = await runCommand(process.execPath, ['dist/cli/main.js', 'audit', 'keygen'], {
    encoding: 'utf8',
  });
  env = { MRTR_AUDIT_KEY: /MRTR_AUDIT_KEY=(\S+)/.exec(keygen.stdout)![1]! };
  vkey = /MRTR_AUDIT_VKEY=(\S+)/.exec(keygen.stdout)![1]!;
  ports = [await freePort(), await freePort(), await freePort()];
  const listen = await freePort();
  balancer = `http://127.0.0.1:${listen}/mcp`;
  nginx = TestNginx.start(pointAt(nginxBlockFromDoc(), listen, ports));
}, 50_000);

// One after another, with room: a gateway start is seconds of CPU, and a busy 2-core CI machine once took over 58 s
// for one of them.
beforeAll(async () => {
  for (const i of [0, 1, 2]) gateways.push(await startGateway(i));
}, 180_000);

afterAll(async () => {
  nginx?.stop();
  await Promise.all(gateways.map((g) => g.stop()));
  await new Promise((resolve) => upstream?.close(resolve));
  await Promise.all([redis?.stop(), pg?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

/** Bob's vote through the balancer, sent again while the instance it reached is gone; a second vote is refused. */
async function vote(statusUrl: string): Promise<void> {
  const page = statusUrl.replace(/\/status$/, '');
  for (let attempt = 0; attempt < 60; attempt++) {
    const answer = await fetch(page, {
      method: 'POST',
      headers: { authorization: 'Bearer bob-token', 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    }).catch(() => undefined);
    if (answer && answer.status < 500) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * The person at each caller: confirms a consent at once; for an approval link, says "done" at once and has bob
 * vote meanwhile, so the caller's next round is often held on one instance while the vote lands on another.
 */
function person(): InputResolver {
  return {
    name: 'fleet-person',
    kinds: ['elicitation.form', 'elicitation.url'],
    person: true,
    accepts: () => true,
    async resolve(q: InputQuestion) {
      if (q.kind === 'elicitation.url') {
        void vote(String((q.request.params as { url: string }).url));
        return { action: 'accept' };
      }
      return { action: 'accept', content: { confirm: true } };
    },
  };
}

interface CallRun {
  tool: 'note' | 'transfer';
  mark: string;
  outcome: MrtrOutcome | { status: 'threw'; error: string };
  resends: number;
}

async function run(i: number, tag: string): Promise<CallRun> {
  const tool = i % 2 ? 'transfer' : 'note';
  const mark = `${tag}-${i}`;
  const client = new McpClient({
    server: balancer,
    token: `${CALLERS[i % CALLERS.length]}-token`,
    resolvers: [person()],
    protocol: '2026-07-28',
    // Rounds, not a task: the caller comes back to check and is held on whichever instance it reaches.
    tasks: false,
  });
  let resends = 0;
  try {
    const outcome = await client.callTool(
      `ledger__${tool}`,
      { mark },
      {
        retry: RETRY,
        timeoutMs: 50_000,
        onEvent: (e) => {
          if (e.type === 'retrying' && e.reason !== 'answered') resends++;
        },
      },
    );
    return { tool, mark, outcome, resends };
  } catch (error) {
    return { tool, mark, outcome: { status: 'threw', error: String(error) }, resends };
  } finally {
    await client.close();
  }
}

const completed = (r: CallRun) =>
  r.outcome.status === 'complete' &&
  !(r.outcome as { result?: { isError?: boolean } }).result?.isError &&
  JSON.stringify((r.outcome as { result?: unknown }).result).includes(`${r.tool} ${r.mark} done`);

describe('three gateways behind nginx, one of them SIGKILLed mid-run', () => {
  it('every call completes, and no call runs its effect twice', async () => {
    const count = 30;
    const killAfter = 5;
    let done = 0;
    const started = performance.now();
    const runs = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        run(i, 'kill').then((r) => {
          if (++done === killAfter) {
            gateways[VICTIM]!.signal('SIGKILL');
            // Back with the same flags; the audit test below waits for it (a start takes seconds on a busy machine).
            restarted = gateways[VICTIM]!.exited.then(() => startGateway(VICTIM));
          }
          return r;
        }),
      ),
    );
    const seconds = (performance.now() - started) / 1000;
    const failed = runs.filter((r) => !completed(r));
    expect(failed.map((r) => `${r.tool} ${r.mark}: ${JSON.stringify(r.outcome).slice(0, 300)}`)).toEqual([]);
    // Each call's effect once: one idempotency key per mark, and every completed call has its effect.
    const keysByMark = new Map<string, number>();
    for (const { mark } of effects.values())
      if (mark.startsWith('kill-')) keysByMark.set(mark, (keysByMark.get(mark) ?? 0) + 1);
    expect([...keysByMark.values()].every((n) => n === 1)).toBe(true);
    expect(keysByMark.size).toBe(runs.filter(completed).length);
    // The kill hit rounds in flight: their callers got no answer and sent them again.
    const resent = runs.filter((r) => r.resends > 0).length;
    expect(resent).toBeGreaterThan(0);
    process.stdout.write(
      `\n[gateway fleet] ${count} calls (consent, approval) through nginx, ${INSTANCES[VICTIM]} SIGKILLed after ${killAfter}: all completed in ${seconds.toFixed(1)} s; ${resent} calls resent a round; the upstream got ${seen.requests} calls, ${seen.repeats} of them a repeat of a known key\n`,
    );
  }, 58_000);

  it('the killed instance is back, and the audit trail in PostgreSQL has every instance and verifies', async () => {
    gateways[VICTIM] = await restarted!;
    // A drained instance seals its chain with a last checkpoint; the killed one's chain ends where it died.
    await Promise.all(gateways.map((g) => g.stop()));
    const verify = await runCommand(
      process.execPath,
      ['dist/cli/main.js', 'audit', 'verify', '--audit', pg.url, '--vkey', vkey],
      { encoding: 'utf8' },
    );
    expect(verify.stderr).toBe('');
    expect(verify.status).toBe(0);
    for (const instance of INSTANCES) expect(verify.stdout).toContain(instance);
    process.stdout.write(`[gateway fleet] mrtr audit verify: ${verify.stdout.trim().split('\n').at(-1)}\n`);
  }, 50_000);
});
