// Slow and greedy clients: a stalled head or body gets 408 and loses its connection; a connection cap holds; the
// server keeps answering everyone else meanwhile. The limits are small, and every test waits for events (the 408,
// a close, a handler starting), never for a guessed time: node checks these limits on its own timer.
import { once } from 'node:events';
import net from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type HttpEndpoint, type McpServer, text } from '../../src/server/index.js';
import { META, mcp, rawPost } from '../helpers/mcp-http.js';
import { type Deferred, deferred, Happenings, track } from '../helpers/signals.js';
import { slowCalls, testServer } from './test-server.js';

/** `held` calls record `<tag>:started` and answer once the test resolves `release` (fresh for every test). */
const heldCalls = new Happenings();
let release: Deferred<void>;
beforeEach(() => {
  release = deferred();
});
afterEach(() => release.resolve());

function limitsServer(): McpServer {
  return testServer().tool(
    { name: 'held', description: 'Answers once the test releases it', input: z.object({ tag: z.string() }) },
    async ({ tag }) => {
      const gate = release;
      heldCalls.record(`${tag}:started`);
      await gate.promise;
      return text(`released ${tag}`);
    },
  );
}

let endpoint: HttpEndpoint;
let port: number;
beforeAll(async () => {
  endpoint = await limitsServer().listen({ port: 0, headersTimeoutMs: 200, requestTimeoutMs: 400 });
  port = Number(new URL(endpoint.url).port);
});
afterAll(() => endpoint.close());

const HEAD = 'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n';
/** A complete head announcing 100 bytes of body, of which only a few follow. */
const SHORT_BODY =
  `${HEAD}Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n` + '{"jsonrpc":';

function listRequest(id: number): string {
  const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list', params: { _meta: META } });
  return (
    `${HEAD}Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n` +
    `Mcp-Method: tools/list\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

/** Statuses of the complete responses in `received` (each with a Content-Length body). */
function statuses(received: string): number[] {
  const found: number[] = [];
  let rest = received;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) return found;
    const head = rest.slice(0, end);
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
    if (rest.length < end + 4 + length) return found;
    found.push(Number(head.split(' ')[1]));
    rest = rest.slice(end + 4 + length);
  }
}

/** A raw connection that writes `text`: what it received, when it closes, and a wait for its nth response. */
function connection(text: string, to = port) {
  const socket = net.connect(to, '127.0.0.1', () => socket.write(text));
  let received = '';
  let onChange = () => {};
  socket.on('data', (chunk) => {
    received += chunk.toString('latin1');
    onChange();
  });
  socket.on('error', () => {});
  const closed = new Promise<string>((resolve) =>
    socket.on('close', () => {
      onChange();
      resolve(received);
    }),
  );
  return {
    socket,
    /** Everything received, once the server has closed the connection. */
    closed,
    /** The statuses once `n` complete responses have arrived; rejects if the connection closes first. */
    responses(n: number): Promise<number[]> {
      return new Promise((resolve, reject) => {
        onChange = () => {
          const got = statuses(received);
          if (got.length >= n) resolve(got);
          else if (socket.destroyed) reject(new Error(`connection closed after ${JSON.stringify(received)}`));
        };
        onChange();
      });
    },
  };
}

async function expectStillServing(url = endpoint.url) {
  const reply = await mcp(url, 'tools/list');
  expect(reply.status).toBe(200);
}

describe('slow clients', () => {
  it('answers a head that never finishes with 408 and closes, while serving others', async () => {
    const stalled = connection(HEAD);
    await expectStillServing();
    expect(await stalled.closed).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('answers a body that stops short of its Content-Length with 408 and closes', async () => {
    expect(await connection(SHORT_BODY).closed).toMatch(/^HTTP\/1\.1 408 /);
    await expectStillServing();
  });

  it('closes a connection that never sends a request once the head limit passes', async () => {
    expect(await connection('').closed).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('leaves a keep-alive connection idle between requests alone (a client thinking between rounds)', async () => {
    const idle = connection(listRequest(1));
    expect(await idle.responses(1)).toEqual([200]);
    // A body stalled after the idle connection's answer is cut once both limits have passed since then...
    expect(await connection(SHORT_BODY).closed).toMatch(/^HTTP\/1\.1 408 /);
    // ...yet the idle connection was left open, and serves its next request.
    idle.socket.write(listRequest(2));
    expect(await idle.responses(2)).toEqual([200, 200]);
    idle.socket.destroy();
  });
});

describe('slow handlers', () => {
  it('never cuts a response that takes longer than the request limit (it limits receiving, not answering)', async () => {
    const reply = mcp(endpoint.url, 'tools/call', { name: 'held', arguments: { tag: 'long' } });
    await heldCalls.seen('long:started');
    // A body stalled after ours was received is cut by the request limit: ours has outlived that limit by then.
    expect(await connection(SHORT_BODY).closed).toMatch(/^HTTP\/1\.1 408 /);
    release.resolve();
    const answered = await reply;
    expect(answered.status).toBe(200);
    expect(answered.response.result?.content).toEqual([{ type: 'text', text: 'released long' }]);
  });
});

describe('connection cap', () => {
  it('drops connections beyond maxConnections and accepts again once one closes', async () => {
    const capped = await limitsServer().listen({ port: 0, maxConnections: 2 });
    const cappedPort = Number(new URL(capped.url).port);
    const accepted: net.Socket[] = [];
    const bothAccepted = deferred();
    capped.server.on('connection', (s: net.Socket) => {
      accepted.push(s);
      if (accepted.length === 2) bothAccepted.resolve();
    });
    const dropped = once(capped.server, 'drop');
    try {
      const a = connection('', cappedPort);
      const b = connection('', cappedPort);
      // The server counts both before the third arrives.
      await bothAccepted.promise;
      const third = connection('', cappedPort);
      await dropped;
      expect(await third.closed).toBe('');
      a.socket.destroy();
      b.socket.destroy();
      // The server counts a connection out when its own side closes.
      await Promise.all(accepted.map((s) => (s.closed ? undefined : once(s, 'close'))));
      await expectStillServing(capped.url);
    } finally {
      await capped.close();
    }
  });
});

describe('closing with a grace period', () => {
  it('lets a request in progress finish, refuses new connections, and resolves once it is answered', async () => {
    const ep = await limitsServer().listen({ port: 0 });
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'held', arguments: { tag: 'drain' }, _meta: META },
    });
    const inFlight = rawPost(ep.url, body, {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'held',
    });
    await heldCalls.seen('drain:started');
    // Longer than the test may run: close() must resolve because the request was answered, not by the clock.
    const closing = ep.close({ graceMs: 60_000 });
    const closed = track(closing);
    await expect(mcp(ep.url, 'tools/list')).rejects.toThrow(/ECONNREFUSED/);
    expect(closed.settled).toBe(false);
    release.resolve();
    const reply = await inFlight;
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.text).result.content).toEqual([{ type: 'text', text: 'released drain' }]);
    // The client is told not to send its next round here: another instance takes it.
    expect(reply.headers.connection).toBe('close');
    await closing;
  });

  it('cuts what is still running when the grace period ends', async () => {
    const ep = await limitsServer().listen({ port: 0 });
    const stuck = mcp(ep.url, 'tools/call', { name: 'slow', arguments: { tag: 'grace' } }).then(
      () => 'answered',
      () => 'cut',
    );
    await slowCalls.seen('grace:started');
    await ep.close({ graceMs: 200 });
    expect(await stuck).toBe('cut');
    await slowCalls.seen('grace:cancelled');
  });
});

describe('closing options', () => {
  it('refuses a negative or fractional grace period, naming it', async () => {
    const ep = await testServer().listen({ port: 0 });
    expect(() => ep.close({ graceMs: -1 })).toThrow('close: graceMs must be an integer from 0 to 2147483647');
    expect(() => ep.close({ graceMs: 0.5 })).toThrow(/graceMs/);
    await ep.close({ graceMs: 0 });
  });
});

describe('options', () => {
  it('refuses a limit that is not a positive integer, naming it', () => {
    const server = testServer();
    expect(() => server.http({ headersTimeoutMs: 0 })).toThrow(
      'HttpServerTransport: headersTimeoutMs must be an integer from 1 to 2147483647, got 0',
    );
    expect(() => server.http({ requestTimeoutMs: 2 ** 31 })).toThrow(/requestTimeoutMs must be an integer/);
    expect(() => server.http({ maxConnections: 1.5 })).toThrow(/maxConnections must be an integer/);
    expect(() => server.http({ maxBodyBytes: Number.NaN })).toThrow(
      /maxBodyBytes must be an integer.*got NaN/,
    );
  });

  it('refuses a head limit longer than the request limit, and shortens the default head limit to fit', () => {
    const server = testServer();
    expect(() => server.http({ headersTimeoutMs: 5_000, requestTimeoutMs: 1_000 })).toThrow(
      /headersTimeoutMs \(5000\) must not exceed requestTimeoutMs \(1000\)/,
    );
    expect(() => server.http({ requestTimeoutMs: 1_000 })).not.toThrow();
  });
});
