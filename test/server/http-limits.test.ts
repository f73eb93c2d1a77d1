// Slow and greedy clients: a stalled head or body gets 408 and loses its connection; a connection cap holds; the
// server keeps answering everyone else meanwhile. Small limits keep every case well under a second.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpEndpoint } from '../../src/server/index.js';
import { META, mcp, rawPost } from '../helpers/mcp-http.js';
import { testServer } from './test-server.js';

let endpoint: HttpEndpoint;
let port: number;
beforeAll(async () => {
  endpoint = await testServer().listen({ port: 0, headersTimeoutMs: 200, requestTimeoutMs: 400 });
  port = Number(new URL(endpoint.url).port);
});
afterAll(() => endpoint.close());

/** Open a raw connection, write `text`, and collect what the server sends until it closes (or `giveUpMs`). */
function stall(
  text: string,
  giveUpMs = 3_000,
): Promise<{ received: string; closedAfterMs: number | undefined }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
    });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ received, closedAfterMs: undefined });
    }, giveUpMs);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ received, closedAfterMs: Date.now() - started });
    });
    socket.on('error', () => {});
  });
}

async function expectStillServing(url = endpoint.url) {
  const reply = await mcp(url, 'tools/list');
  expect(reply.status).toBe(200);
}

describe('slow clients', () => {
  it('answers a head that never finishes with 408 and closes, while serving others', async () => {
    const stalled = stall('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n');
    await expectStillServing();
    const { received, closedAfterMs } = await stalled;
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAfterMs).toBeGreaterThanOrEqual(150);
    expect(closedAfterMs).toBeLessThan(2_000);
  });

  it('answers a body that stops short of its Content-Length with 408 and closes', async () => {
    const head =
      'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
      'Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n';
    const { received, closedAfterMs } = await stall(`${head}{"jsonrpc":`);
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAfterMs).toBeGreaterThanOrEqual(350);
    expect(closedAfterMs).toBeLessThan(2_500);
    await expectStillServing();
  });

  it('closes a connection that never sends a request once the head limit passes', async () => {
    const { received, closedAfterMs } = await stall('');
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAfterMs).toBeLessThan(2_000);
  });

  it('leaves a keep-alive connection idle between requests alone (a client thinking between rounds)', async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: { _meta: META },
    });
    const request =
      'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
      'Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n' +
      `Mcp-Method: tools/list\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    // Four times the head limit and twice the request limit, with no new request started.
    const { received, closedAfterMs } = await stall(request, 900);
    expect(received).toMatch(/^HTTP\/1\.1 200 /);
    expect(closedAfterMs).toBeUndefined();
  });
});

describe('slow handlers', () => {
  it('never cuts a response that takes longer than the request limit (it limits receiving, not answering)', async () => {
    const reply = await mcp(endpoint.url, 'tools/call', { name: 'pause', arguments: { ms: 700 } });
    expect(reply.status).toBe(200);
    expect(reply.response.result?.content).toEqual([{ type: 'text', text: 'paused 700' }]);
  });
});

describe('connection cap', () => {
  it('drops connections beyond maxConnections and accepts again once one closes', async () => {
    const capped = await testServer().listen({ port: 0, maxConnections: 2 });
    const cappedPort = Number(new URL(capped.url).port);
    const open = (): Promise<net.Socket> =>
      new Promise((resolve) => {
        const s = net.connect(cappedPort, '127.0.0.1', () => resolve(s));
        s.on('error', () => {});
      });
    try {
      const a = await open();
      const b = await open();
      const third = await open();
      const dropped = await new Promise<boolean>((resolve) => {
        third.on('close', () => resolve(true));
        setTimeout(() => resolve(false), 1_000);
      });
      expect(dropped).toBe(true);
      a.destroy();
      b.destroy();
      await new Promise((r) => setTimeout(r, 50));
      await expectStillServing(capped.url);
    } finally {
      await capped.close();
    }
  });
});

describe('closing with a grace period', () => {
  it('lets a request in progress finish, refuses new connections, and resolves once it is answered', async () => {
    const ep = await testServer().listen({ port: 0 });
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'pause', arguments: { ms: 300 }, _meta: META },
    });
    const inFlight = rawPost(ep.url, body, {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'pause',
    });
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    const closed = ep.close({ graceMs: 5_000 });
    const reply = await inFlight;
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.text).result.content).toEqual([{ type: 'text', text: 'paused 300' }]);
    // The client is told not to send its next round here: another instance takes it.
    expect(reply.headers.connection).toBe('close');
    await closed;
    // Well before the grace period: it waited for the request, not for the clock.
    expect(Date.now() - started).toBeLessThan(2_000);
    await expect(mcp(ep.url, 'tools/list')).rejects.toThrow(/ECONNREFUSED/);
  });

  it('cuts what is still running when the grace period ends', async () => {
    const ep = await testServer().listen({ port: 0 });
    const stuck = mcp(ep.url, 'tools/call', { name: 'slow', arguments: { tag: 'grace' } }).then(
      () => 'answered',
      () => 'cut',
    );
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    await ep.close({ graceMs: 200 });
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(150);
    expect(took).toBeLessThan(2_000);
    expect(await stuck).toBe('cut');
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
