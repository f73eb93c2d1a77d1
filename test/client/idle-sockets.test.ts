// A pooled keep-alive socket is closed once it has sat idle past the client's limit, so no request is written on a
// socket the server is closing. (Under load, a sign-in outlasted the conformance runner's 5 s keep-alive while the
// client's event loop was busy; the next call went out on the closing socket and failed with "closed the
// connection (reset)".) A socket in use is never cut by the limit.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClientTransport } from '../../src/client/http-transport.js';
import { deferred } from '../helpers/signals.js';

interface Fixture {
  url: string;
  /** Requests seen per connection, in the order the connections came. */
  perSocket: number[];
  /** Settles when the server sees connection `i` close. */
  closed(i: number): Promise<void>;
  close(): Promise<void>;
}

const open: Fixture[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((f) => f.close()));
});

type Answer = (res: http.ServerResponse, id: number) => void;
const json: Answer = (res, id) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ jsonrpc: '2.0', id, result: { resultType: 'complete', tools: [] } }));
};

async function server(answer: Answer = json): Promise<Fixture> {
  const perSocket: number[] = [];
  const closes: Array<ReturnType<typeof deferred<void>>> = [];
  const index = new WeakMap<Socket, number>();
  const s = http.createServer((req, res) => {
    const i = index.get(req.socket) as number;
    perSocket[i] = (perSocket[i] ?? 0) + 1;
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => answer(res, (JSON.parse(body) as { id: number }).id));
  });
  // The server itself keeps idle sockets far longer than any test: a close it sees came from the client.
  s.keepAliveTimeout = 600_000;
  s.on('connection', (socket) => {
    index.set(socket, perSocket.length);
    perSocket.push(0);
    const closed = deferred<void>();
    closes.push(closed);
    socket.on('close', () => closed.resolve());
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const f: Fixture = {
    url: `http://127.0.0.1:${(s.address() as AddressInfo).port}/mcp`,
    perSocket,
    closed: (i) => closes[i]?.promise ?? Promise.reject(new Error(`no connection ${i}`)),
    close: () =>
      new Promise<void>((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  };
  open.push(f);
  return f;
}

const list = (id: number) => ({ message: { jsonrpc: '2.0' as const, id, method: 'tools/list' } });

describe('HTTP client transport, pooled sockets', () => {
  it('closes a socket idle past the limit; the next call takes a fresh one and succeeds', async () => {
    const f = await server();
    const t = new HttpClientTransport({ url: f.url, idleSocketMs: 30 });
    try {
      await expect(t.send(list(1))).resolves.toMatchObject({ id: 1 });
      await f.closed(0); // the client let go of it, idle
      await expect(t.send(list(2))).resolves.toMatchObject({ id: 2 });
      expect(f.perSocket).toEqual([1, 1]);
    } finally {
      await t.close();
    }
  });

  it('reuses a socket within the limit (the default, 4 s)', async () => {
    const f = await server();
    const t = new HttpClientTransport({ url: f.url });
    try {
      await t.send(list(1));
      await t.send(list(2));
      expect(f.perSocket).toEqual([2]);
    } finally {
      await t.close();
    }
  });

  it('never cuts a socket in use: an answer slower than the limit arrives', async () => {
    const held = deferred<void>();
    const f = await server((res, id) => void held.promise.then(() => json(res, id)));
    const t = new HttpClientTransport({ url: f.url, idleSocketMs: 30 });
    // The limit fired on the socket carrying the call: only then does the server answer.
    const agent = (t as unknown as { agent: http.Agent }).agent;
    const create = agent.createConnection.bind(agent);
    agent.createConnection = ((...args: Parameters<typeof create>) => {
      const socket = create(...args) as Socket;
      socket.once('timeout', () => held.resolve());
      return socket;
    }) as typeof agent.createConnection;
    try {
      await expect(t.send(list(1))).resolves.toMatchObject({ id: 1 });
      expect(f.perSocket).toEqual([1]);
    } finally {
      await t.close();
    }
  });

  it('refuses an idle limit that is not a whole number of ms above 0, naming it', () => {
    for (const bad of [0, -1, 1.5, Number.NaN])
      expect(() => new HttpClientTransport({ url: 'http://127.0.0.1:1/mcp', idleSocketMs: bad })).toThrow(
        /idleSocketMs must be a whole number of ms above 0/,
      );
  });
});
