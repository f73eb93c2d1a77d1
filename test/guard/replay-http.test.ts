// The replay guard over real HTTP: a retry after a dropped connection completes the flow with one execution, a
// throttled principal gets 429 with Retry-After, and a state replayed on a second instance sharing the store is
// caught there — on SQLite and on Redis.
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type HttpEndpoint, HttpServerTransport } from '../../src/server/index.js';
import { MemoryStore, RedisStore, type SharedStore, SqliteStore } from '../../src/stores/index.js';
import { META, mcp, rawPost } from '../helpers/mcp-http.js';
import { deferred } from '../helpers/signals.js';
import { replayServer } from './replay-fixture.js';
import { tempDir, testRedis } from './stores.js';

const endpoints: HttpEndpoint[] = [];
afterEach(async () => {
  await Promise.all(endpoints.splice(0).map((e) => e.close()));
});

async function serve(
  store: SharedStore,
  options: Parameters<typeof replayServer>[1] = {},
  authenticate?: () => { subject: string },
) {
  const { core, counters } = replayServer(store, options);
  const endpoint = await new HttpServerTransport(core, {
    port: 0,
    ...(authenticate ? { authenticate } : {}),
  }).listen();
  endpoints.push(endpoint);
  return { url: endpoint.url, counters };
}

const who = (name: string) => ({ who: { action: 'accept', content: { name } } });

describe('replay guard over HTTP', () => {
  it('a retry after the connection dropped mid-round completes the flow with exactly one execution', async () => {
    const { url, counters } = await serve(new MemoryStore());
    const first = await mcp(url, 'tools/call', { name: 'slow', arguments: {} });
    const state = first.response.result!.requestState as string;
    counters.gate = deferred();
    const reached = deferred();
    counters.onGate = () => reached.resolve();
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: {
        name: 'slow',
        arguments: {},
        requestState: state,
        inputResponses: who('Ada'),
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
        },
      },
    });
    const dropped = httpRequest(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'slow',
      },
    });
    const closed = new Promise<void>((resolve) => dropped.on('close', () => resolve()));
    dropped.on('error', () => undefined);
    dropped.end(body);
    await reached.promise;
    dropped.destroy(); // the socket goes before the answer is read
    await closed;
    counters.gate.resolve();
    const retry = await mcp(
      url,
      'tools/call',
      { name: 'slow', arguments: {}, requestState: state, inputResponses: who('Ada') },
      { meta: { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } } },
    );
    expect((retry.response.result!.content as Array<{ text: string }>)[0]!.text).toBe('slow hello Ada');
    expect(counters.completed('slow')).toBe(1);
  });

  it('a principal past its refusal limit gets HTTP 429 with Retry-After and a JSON-RPC error naming the limit', async () => {
    const { url } = await serve(
      new MemoryStore(),
      { replay: { refusals: { maxRefusals: 2, windowMs: 60_000 } } },
      () => ({
        subject: 'looping-agent',
      }),
    );
    for (let i = 0; i < 2; i++) {
      const bad = await mcp(url, 'tools/call', {
        name: 'greet',
        arguments: {},
        requestState: 'garbage',
        inputResponses: who('x'),
      });
      expect(bad.status).toBe(400);
    }
    const throttled = await mcp(url, 'tools/call', { name: 'greet', arguments: {} });
    expect(throttled.status).toBe(429);
    expect(throttled.response.error!.message).toMatch(
      /Too many refused requests: 2 in the current 60 s window \(limit 2\)/,
    );
    const raw = await rawPost(
      url,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'greet', arguments: {}, _meta: META },
      }),
      {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'greet',
      },
    );
    expect(raw.status).toBe(429);
    expect(Number(raw.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(raw.headers['retry-after'])).toBeLessThanOrEqual(60);
  });

  describe.each([
    [
      'SQLite',
      async () => {
        const path = join(tempDir(), 'fleet.db');
        return [new SqliteStore(path), new SqliteStore(path)] as const;
      },
    ],
    [
      'Redis',
      async () => {
        const { url } = await testRedis();
        return [await RedisStore.connect(url), await RedisStore.connect(url)] as const;
      },
    ],
  ])('two instances sharing one %s store', (_name, openPair) => {
    it('a state answered on one instance is replayed on the other: identical retry served from the record, other answers refused', async () => {
      const [storeA, storeB] = await openPair();
      const a = await serve(storeA);
      const b = await serve(storeB);
      const state = (await mcp(a.url, 'tools/call', { name: 'greet', arguments: {} })).response.result!
        .requestState as string;
      const onA = await mcp(a.url, 'tools/call', {
        name: 'greet',
        arguments: {},
        requestState: state,
        inputResponses: who('Ada'),
      });
      const retryOnB = await mcp(b.url, 'tools/call', {
        name: 'greet',
        arguments: {},
        requestState: state,
        inputResponses: who('Ada'),
      });
      expect(JSON.stringify(retryOnB.response.result)).toBe(JSON.stringify(onA.response.result));
      const replayOnB = await mcp(b.url, 'tools/call', {
        name: 'greet',
        arguments: {},
        requestState: state,
        inputResponses: who('Eve'),
      });
      expect(replayOnB.response.error).toEqual({
        code: -32602,
        message: 'Invalid params: invalid requestState',
      });
      expect(a.counters.completed('greet') + b.counters.completed('greet')).toBe(1);
      await storeA.close();
      await storeB.close();
    });

    it('simultaneous presentations split across both instances: one execution in the fleet, one answer', async () => {
      const [storeA, storeB] = await openPair();
      const a = await serve(storeA);
      const b = await serve(storeB);
      const state = (await mcp(a.url, 'tools/call', { name: 'slow', arguments: {} })).response.result!
        .requestState as string;
      const gate = deferred();
      const reached = deferred();
      for (const c of [a.counters, b.counters]) {
        c.gate = gate;
        c.onGate = () => reached.resolve();
      }
      const presentations = Array.from({ length: 16 }, (_, i) =>
        mcp(i % 2 ? a.url : b.url, 'tools/call', {
          name: 'slow',
          arguments: {},
          requestState: state,
          inputResponses: who('Ada'),
        }),
      );
      await reached.promise;
      gate.resolve();
      const replies = await Promise.all(presentations);
      expect(new Set(replies.map((r) => JSON.stringify(r.response.result)))).toHaveLength(1);
      expect(a.counters.completed('slow') + b.counters.completed('slow')).toBe(1);
      await storeA.close();
      await storeB.close();
    });
  });
});

describe('replay guard with a real Redis that goes away', () => {
  it('rounds fail closed with -32603 while Redis is down and work again once it is back', async () => {
    const redis = await testRedis();
    const store = await RedisStore.connect(redis.url);
    const { url, counters } = await serve(store);
    const state = (await mcp(url, 'tools/call', { name: 'greet', arguments: {} })).response.result!
      .requestState as string;
    await redis.kill();
    const down = await mcp(url, 'tools/call', {
      name: 'greet',
      arguments: {},
      requestState: state,
      inputResponses: who('Ada'),
    });
    expect(down.response.error).toEqual({
      code: -32603,
      message: 'Internal error: replay store unavailable',
    });
    expect(counters.completed('greet')).toBe(0);
    await redis.resume();
    await store.whenReady();
    const back = await mcp(url, 'tools/call', {
      name: 'greet',
      arguments: {},
      requestState: state,
      inputResponses: who('Ada'),
    });
    expect((back.response.result!.content as Array<{ text: string }>)[0]!.text).toBe('hello Ada');
    expect(counters.completed('greet')).toBe(1);
    await store.close();
  });
});
