// A fetch handler behind node:http, as Node's adapters for fetch handlers do it: the request becomes a web Request
// (its body streamed), the Response's body is streamed back chunk by chunk (SSE reaches the client as it is written).
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import type { McpFetchHandler } from '../../src/server/index.js';
import type { RuntimeChild } from './child-runtime.js';

function requestOf(req: IncomingMessage, signal: AbortSignal): Request {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2)
    headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  return new Request(new URL(req.url ?? '/', `http://${req.headers.host ?? '127.0.0.1'}`), {
    method: req.method,
    headers,
    signal,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream, duplex: 'half' } : {}),
  } as RequestInit);
}

export async function serveOnNode(app: McpFetchHandler): Promise<RuntimeChild> {
  const server = createServer(async (req, res) => {
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    const response = await app.fetch(requestOf(req, gone.signal));
    res.writeHead(response.status, [...response.headers].flat());
    if (response.body) for await (const chunk of response.body) res.write(chunk);
    res.end();
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((closed) => {
        server.closeAllConnections();
        server.close(() => closed());
      }),
  };
}
