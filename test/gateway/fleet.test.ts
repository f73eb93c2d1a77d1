// A fleet: two `mrtr gateway` processes behind one load balancer would share nothing but their state keys, one Redis
// (replay guard, approvals, rate-limit buckets), the config and the lock file. A caller's rounds may land on either:
// a consent asked by one is answered on the other, an approval asked on one is decided through the other's JSON API
// and wakes the caller held on the first, a final round replayed on the other instance does not reach the upstream again, and a
// rate limit counts the calls of both.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpEndpoint, McpServer, text } from '../../src/server/index.js';
import { freePort } from '../helpers/free-port.js';
import { mcp } from '../helpers/mcp-http.js';
import { TestRedis } from '../helpers/redis-server.js';
import { type ServedCli, serveCli } from '../helpers/serve-cli.js';

const KEYS = `k1:${Buffer.alloc(32, 3).toString('base64url')}`;

// biome-ignore lint/suspicious/noExplicitAny: replies are read as loose JSON, checked by the expectations
type Loose = any;

let dir: string;
let redis: TestRedis;
let upstream: HttpEndpoint;
let a: ServedCli;
let b: ServedCli;
/** How many times the upstream ran each tool. */
const ran = new Map<string, number>();
const count = (tool: string) => ran.set(tool, (ran.get(tool) ?? 0) + 1);

/** `mrtr …` as a child, without blocking this process (the upstream it may talk to is served from here). */
function mrtr(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['dist/cli/main.js', ...args], { timeout: 30_000 }, (error, stdout, stderr) =>
      resolve({ status: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mrtr-gw-fleet-'));
  redis = await TestRedis.start();
  upstream = await new McpServer({
    name: 'ledger',
    version: '1.0.0',
    logger: { info() {}, warn() {}, error() {} },
  })
    .tool({ name: 'note', description: 'Write a note in the ledger' }, (args: Loose) => {
      count('note');
      return text(`noted ${args.text} (#${ran.get('note')})`);
    })
    .tool({ name: 'transfer', description: 'Move money between accounts' }, (args: Loose) => {
      count('transfer');
      return text(`moved ${args.amount} (#${ran.get('transfer')})`);
    })
    .tool({ name: 'ping', description: 'Answer pong' }, () => {
      count('ping');
      return text('pong');
    })
    .listen({ port: 0 });
  writeFileSync(
    join(dir, 'tokens.json'),
    JSON.stringify({
      'alice-dev-token': { sub: 'alice', roles: ['requester'] },
      'bob-dev-token': { sub: 'bob', roles: ['approver'] },
    }),
  );
  writeFileSync(
    join(dir, 'gateway.yaml'),
    `upstreams:
  - name: ledger
    url: ${upstream.url}
rules:
  - tools: ["ledger/note"]
    roles: [requester]
    require: [consent]
  - tools: ["ledger/transfer"]
    roles: [requester]
    require: [approval]
    approval: { role: approver, approvals: 1 }
  - tools: ["ledger/ping"]
    roles: ["*"]
    rateLimit: { requests: 2, per: 1h }
`,
  );
  // The operator pins the upstream's tools once; every instance serves exactly what the lock file lists.
  const pinned = await mrtr(['gateway', 'pin', '--config', join(dir, 'gateway.yaml'), '--all']);
  expect(pinned.status, pinned.stderr).toBe(0);
  const instance = async () =>
    serveCli(
      [
        '--config',
        join(dir, 'gateway.yaml'),
        '--locked',
        '--port',
        String(await freePort()),
        '--tokens',
        join(dir, 'tokens.json'),
        '--state-keys',
        KEYS,
        '--store',
        redis.url,
      ],
      'gateway',
    );
  [a, b] = await Promise.all([instance(), instance()]);
  // Upstreams start with each gateway: the tests begin once both have listed theirs.
  await Promise.all([a.saidOnStderr('upstreams started:'), b.saidOnStderr('upstreams started:')]);
}, 90_000);

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await upstream?.close({ graceMs: 0 });
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const as = (who: string) => ({ headers: { authorization: `Bearer ${who}-dev-token` } });
const call = (
  on: ServedCli,
  who: string,
  name: string,
  args: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) => mcp(on.url, 'tools/call', { name, arguments: args, ...extra }, as(who));
const result = async (reply: ReturnType<typeof call>) => (await reply).response.result as Loose;

describe('two mrtr gateway instances on one Redis, one config, one lock file', () => {
  it('both list the same tools from the lock file', async () => {
    const lock = JSON.parse(readFileSync(join(dir, 'gateway.lock.json'), 'utf8'));
    expect(JSON.stringify(lock)).toContain('transfer');
    for (const on of [a, b]) {
      const listed = (await mcp(on.url, 'tools/list', {}, as('alice'))).response.result as Loose;
      expect(listed.tools.map((t: Loose) => t.name).sort()).toEqual([
        'ledger__note',
        'ledger__ping',
        'ledger__transfer',
      ]);
    }
  });

  it('a consent asked by instance A is answered on instance B, and the upstream runs once', async () => {
    const args = { text: 'fleet consent' };
    const first = await result(call(a, 'alice', 'ledger__note', args));
    expect(first.resultType).toBe('input_required');
    const [key, question] = Object.entries(first.inputRequests)[0] as [string, Loose];
    expect(question.params.message).toContain('Allow note on ledger, exactly as below?');
    expect(ran.get('note') ?? 0).toBe(0);
    const done = await result(
      call(b, 'alice', 'ledger__note', args, {
        requestState: first.requestState,
        inputResponses: { [key]: { action: 'accept', content: { confirm: true } } },
      }),
    );
    expect(done).toMatchObject({ resultType: 'complete', content: [{ text: 'noted fleet consent (#1)' }] });
    expect(ran.get('note')).toBe(1);
  });

  it("an approval asked on A is decided through B's JSON API and redeemed on A", async () => {
    const args = { amount: 250 };
    const first = await result(call(a, 'alice', 'ledger__transfer', args));
    expect(first.resultType).toBe('input_required');
    const [key, question] = Object.entries(first.inputRequests)[0] as [string, Loose];
    const id = new URL(question.params.url).pathname.split('/')[3];
    expect(ran.get('transfer') ?? 0).toBe(0);
    // Alice's client checks on A and is held there; B's vote wakes it (Redis pub/sub): the held round completes.
    const held = result(
      call(a, 'alice', 'ledger__transfer', args, {
        requestState: first.requestState,
        inputResponses: { [key]: { action: 'accept' } },
      }),
    );
    await a.saidOnStderr(`"action":"waiting","id":"${id}"`);
    const inbox = (await (await fetch(`${new URL(b.url).origin}/mrtr/approvals`, as('bob'))).json()) as Loose;
    expect(inbox.approvals.map((x: Loose) => x.id)).toContain(id);
    const vote = await fetch(`${new URL(b.url).origin}/mrtr/approvals/${id}`, {
      method: 'POST',
      headers: { authorization: 'Bearer bob-dev-token', 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve', comment: 'ok from B' }),
    });
    expect(vote.status).toBe(200);
    const done = await held;
    expect(done).toMatchObject({ resultType: 'complete', content: [{ text: 'moved 250 (#1)' }] });
    expect(ran.get('transfer')).toBe(1);
    expect(b.stderr()).toMatch(/approval \{"control":"approval","action":"approve","id":"[\w-]+","by":"bob"/);
  });

  it('a final round replayed on the other instance gets the recorded answer, not a second upstream call', async () => {
    const args = { text: 'exactly once' };
    const first = await result(call(b, 'alice', 'ledger__note', args));
    const key = Object.keys(first.inputRequests)[0] as string;
    const final = {
      requestState: first.requestState,
      inputResponses: { [key]: { action: 'accept', content: { confirm: true } } },
    };
    const before = ran.get('note') ?? 0;
    const done = await result(call(b, 'alice', 'ledger__note', args, final));
    expect(done.resultType).toBe('complete');
    expect(ran.get('note')).toBe(before + 1);
    const replayed = await result(call(a, 'alice', 'ledger__note', args, final));
    expect(replayed).toEqual(done);
    expect(ran.get('note')).toBe(before + 1);
  });

  it("a rate limit counts both instances' calls: two on A and one on B is a 429", async () => {
    const ping = (on: ServedCli) => call(on, 'bob', 'ledger__ping', {});
    expect((await ping(a)).response.result).toMatchObject({ content: [{ text: 'pong' }] });
    expect((await ping(a)).response.result).toMatchObject({ content: [{ text: 'pong' }] });
    const third = await ping(b);
    expect(third.status).toBe(429);
    expect(Number(third.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(third.response.error?.message).toContain('Rate limit: 2 calls of ledger__ping');
    expect(ran.get('ping')).toBe(2);
    // The bucket is per caller: alice, on either instance, still has her own two.
    expect((await call(b, 'alice', 'ledger__ping', {})).response.result).toMatchObject({
      content: [{ text: 'pong' }],
    });
  });
});
