// Minimal node:http <-> Web Fetch adapter for a `(Request) => Promise<Response>`
// handler. Written for the benchmark because `@modelcontextprotocol/node`
// (the SDK's own `toNodeHandler`) is not installed in this repository.
//
// It does what an adapter has to do and nothing more: buffer the request
// body, build a `Request`, await the handler, copy status + headers, and
// either write the buffered body (JSON) or stream it (SSE).

import { Readable } from 'node:stream';

const MAX_BODY = 4 * 1024 * 1024;

/** Read an IncomingMessage body into one Buffer (rejects above `limit`). */
function readBody(req, limit = MAX_BODY) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size > limit) {
        reject(Object.assign(new Error('body too large'), { status: 413 }));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function toHeaders(raw) {
  const h = new Headers();
  // rawHeaders keeps duplicates in order: [name, value, name, value, ...]
  for (let i = 0; i < raw.length; i += 2) h.append(raw[i], raw[i + 1]);
  return h;
}

/**
 * Wrap a fetch-shaped handler for node:http.
 * @param {(req: Request) => Promise<Response>} fetchHandler
 */
export function toNodeListener(fetchHandler) {
  return async (req, res) => {
    try {
      const method = req.method ?? 'GET';
      const url = `http://${req.headers.host ?? '127.0.0.1'}${req.url ?? '/'}`;
      const init = { method, headers: toHeaders(req.rawHeaders) };
      if (method !== 'GET' && method !== 'HEAD') init.body = await readBody(req);
      const ac = new AbortController();
      res.on('close', () => {
        if (!res.writableFinished) ac.abort();
      });
      init.signal = ac.signal;
      const response = await fetchHandler(new Request(url, init));

      const headers = {};
      for (const [k, v] of response.headers) {
        if (k === 'set-cookie') continue;
        headers[k] = v;
      }
      const cookies = response.headers.getSetCookie?.() ?? [];
      if (cookies.length) headers['set-cookie'] = cookies;

      const ct = response.headers.get('content-type') ?? '';
      if (!response.body) {
        res.writeHead(response.status, headers).end();
      } else if (ct.startsWith('text/event-stream')) {
        res.writeHead(response.status, headers);
        res.flushHeaders();
        Readable.fromWeb(response.body).pipe(res);
      } else {
        const buf = Buffer.from(await response.arrayBuffer());
        headers['content-length'] = String(buf.length);
        res.writeHead(response.status, headers).end(buf);
      }
    } catch (err) {
      if (!res.headersSent) {
        const status = err?.status ?? 500;
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: String(err?.message ?? err) } }),
        );
      } else {
        res.destroy(err);
      }
    }
  };
}
