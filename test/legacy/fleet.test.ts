// A fleet of two real `mrtr serve` processes sharing a keyring and a Redis store, with 2025 clients whose POSTs a
// load balancer spreads over both: the session opened on one instance is valid on the other (it is sealed in its
// id), DELETE on one ends it on both (the shared store), and an answer that reaches the instance not holding the
// waiting request is handed to the one that does over Redis pub/sub. No sticky sessions anywhere.

import { type ChildProcess, spawn } from 'node:child_process';
import { Client, type FetchLike, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeySpec } from '../../src/state/index.js';
import { LegacyWire } from '../helpers/legacy-wire.js';
import { TestRedis } from '../helpers/redis-server.js';

const children: ChildProcess[] = [];
/** One `mrtr serve` instance; resolves with its URL once it prints "listening on". */
function instance(args: string[]): Promise<string> {
  const child = spawn(process.execPath, ['dist/cli/main.js', 'serve', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (c: Buffer) => {
      const m = /listening on (\S+)/.exec(c.toString());
      if (m) resolve(m[1]!);
    });
    child.once('exit', () => reject(new Error(`serve exited early: ${stderr}`)));
  });
}

let redis: TestRedis;
let a: string;
let b: string;
beforeAll(async () => {
  redis = await TestRedis.start();
  const keys = generateKeySpec();
  const args = ['--fixture', 'example', '--port', '0', '--store', redis.url, '--state-keys', keys];
  [a, b] = await Promise.all([instance(args), instance(args)]);
}, 30_000);
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await redis?.stop();
});

/** A load balancer without affinity: every request goes to the next instance in turn. */
function roundRobin(urls: readonly string[], sent: string[]): FetchLike {
  let next = 0;
  return (_input, init) => {
    const target = urls[next++ % urls.length]!;
    sent.push(`${init?.method ?? 'GET'} ${target}`);
    return fetch(target, init);
  };
}

describe('2025 clients on a fleet of two instances (shared keyring and Redis)', () => {
  it('the SDK Client with default options completes a three-round flow through a round-robin balancer', async () => {
    const sent: string[] = [];
    const client = new Client({ name: 'fleet', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler('elicitation/create', async (request) => {
      const m = String(request.params.message);
      const content: Record<string, string | number | boolean> = m.startsWith('How was')
        ? { resolution: 'Duplicate' }
        : m.includes('duplicates which')
          ? { original: 7 }
          : { confirm: true };
      return { action: 'accept' as const, content };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(a), { fetch: roundRobin([a, b], sent) }));
    const result = await client.callTool({ name: 'resolve_bug', arguments: { id: 12 } });
    await client.close();
    expect(result.content).toEqual([{ type: 'text', text: 'Bug 12 resolved as Duplicate (duplicate of 7)' }]);
    // Both instances served this client's POSTs: answers were relayed to the instance holding the call.
    const posts = sent.filter((s) => s.startsWith('POST'));
    expect(posts.some((s) => s.endsWith(a))).toBe(true);
    expect(posts.some((s) => s.endsWith(b))).toBe(true);
  });

  it('at the wire: the call waits on A, every answer is POSTed to B (202), the questions and the result come on A', async () => {
    const onA = new LegacyWire(a);
    await onA.initialize({ elicitation: {} });
    const onB = new LegacyWire(b);
    onB.sessionId = onA.sessionId;
    expect((await onB.call('tools/list')).body).toMatchObject({ result: { tools: expect.any(Array) } });

    const { events } = await onA.stream('tools/call', { name: 'resolve_bug', arguments: { id: 3 } }, 'r1');
    const q1 = await events.nextMessage();
    expect(q1?.message).toMatchObject({
      method: 'elicitation/create',
      params: { message: 'How was bug 3 resolved?' },
    });
    expect(
      (await onB.answer(q1!.message.id, { action: 'accept', content: { resolution: 'Fixed' } })).status,
    ).toBe(202);
    const q2 = await events.nextMessage();
    expect(q2?.message).toMatchObject({ params: { message: 'Close bug 3 as Fixed?' } });
    expect((await onB.answer(q2!.message.id, { action: 'accept', content: { confirm: true } })).status).toBe(
      202,
    );
    expect((await events.nextMessage())?.message).toMatchObject({
      id: 'r1',
      result: { content: [{ type: 'text', text: 'Bug 3 resolved as Fixed' }] },
    });
  });

  it('an answer from another session is not accepted, even relayed; an answer for an instance nobody runs is 404', async () => {
    const owner = new LegacyWire(a);
    await owner.initialize({ elicitation: {} });
    const other = new LegacyWire(b);
    await other.initialize({ elicitation: {} });
    const { events } = await owner.stream('tools/call', { name: 'resolve_bug', arguments: { id: 5 } }, 'r2');
    const q = await events.nextMessage();
    // B relays it (A listens), but A refuses it for the wrong session; the question still waits for its owner.
    await other.answer(q!.message.id, { action: 'accept', content: { resolution: 'Fixed' } });
    expect((await other.answer('nosuchinstance.1', { action: 'accept', content: {} })).status).toBe(404);
    expect(
      (await owner.answer(q!.message.id, { action: 'accept', content: { resolution: "Won't fix" } })).status,
    ).toBe(202);
    expect((await events.nextMessage())?.message).toMatchObject({
      params: { message: "Close bug 5 as Won't fix?" },
    });
  });

  it('DELETE on one instance ends the session on the other', async () => {
    const wire = new LegacyWire(a);
    await wire.initialize();
    const del = await fetch(b, { method: 'DELETE', headers: wire.headers() });
    expect(del.status).toBe(200);
    expect((await wire.call('tools/list')).status).toBe(404);
  });
});
