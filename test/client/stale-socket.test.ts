// A pooled keep-alive socket the server closed while it sat idle: the request written on it is sent once more on
// another socket, and only then. (Under load the client's sign-in took longer than the server's keep-alive, and
// the conformance runner's step-up scenario failed on "closed the connection (reset)".)
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClientTransport } from '../../src/client/http-transport.js';

type Behaviour = (req: http.IncomingMessage, res: http.ServerResponse, nth: number, id: number) => void;

interface Fixture {
  url: string;
  /** Requests seen per socket, in the order the sockets connected. */
  perSocket: number[];
  close: () => Promise<void>;
}

const open: Fixture[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((f) => f.close()));
});

/** A server whose `behaviour` is told how many requests the socket carried before this one (0 on a fresh socket). */
async function server(behaviour: Behaviour): Promise<Fixture> {
  const perSocket: number[] = [];
  const index = new WeakMap<Socket, number>();
  const s = http.createServer((req, res) => {
    const i = index.get(req.socket) as number;
    const nth = perSocket[i] ?? 0;
    perSocket[i] = nth + 1;
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => behaviour(req, res, nth, (JSON.parse(body) as { id: number }).id));
  });
  s.on('connection', (socket) => {
    index.set(socket, perSocket.length);
    perSocket.push(0);
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const f: Fixture = {
    url: `http://127.0.0.1:${(s.address() as AddressInfo).port}/mcp`,
    perSocket,
    close: () =>
      new Promise<void>((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  };
  open.push(f);
  return f;
}

function answer(res: http.ServerResponse, id: number): void {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ jsonrpc: '2.0', id, result: { resultType: 'complete', tools: [] } }));
}

const list = (id: number) => ({ message: { jsonrpc: '2.0' as const, id, method: 'tools/list' } });

describe('HTTP client transport, a pooled socket the server closed', () => {
  it('sends the request again on a fresh socket, and the call succeeds', async () => {
    const f = await server((req, res, nth, id) => {
      // The second request on a socket meets a socket the server has given up: reset, nothing answered.
      if (nth === 1) req.socket.resetAndDestroy();
      else answer(res, id);
    });
    const t = new HttpClientTransport({ url: f.url });
    try {
      await expect(t.send(list(1))).resolves.toMatchObject({ id: 1 });
      await expect(t.send(list(2))).resolves.toMatchObject({ id: 2 });
      // First socket: the first call, then the reset; the second socket: the call sent again.
      expect(f.perSocket).toEqual([2, 1]);
    } finally {
      await t.close();
    }
  });

  it('does not send again when a fresh socket is reset: the call fails, naming the reset', async () => {
    const f = await server((req) => req.socket.resetAndDestroy());
    const t = new HttpClientTransport({ url: f.url });
    try {
      await expect(t.send(list(1))).rejects.toThrow(/closed the connection \(reset\)/);
      expect(f.perSocket).toEqual([1]);
    } finally {
      await t.close();
    }
  });

  it('does not send again once the answer has begun, even on a pooled socket', async () => {
    const f = await server((req, res, nth, id) => {
      if (nth === 0) return answer(res, id);
      // Headers and half a body, then the socket dies: the server did act on this request.
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"jsonrpc":"2.0",');
      setImmediate(() => req.socket.resetAndDestroy());
    });
    const t = new HttpClientTransport({ url: f.url });
    try {
      await t.send(list(1));
      await expect(t.send(list(2))).rejects.toThrow(/cut off|broke|reset/);
      expect(f.perSocket).toEqual([2]);
    } finally {
      await t.close();
    }
  });
});
