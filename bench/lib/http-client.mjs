// Keep-alive HTTP/1.1 POST client for the load generator (node:http only;
// undici is present in node_modules only as a transitive dependency of the
// conformance kit, so the bench does not rely on it).
import http from 'node:http';

/**
 * @param {string} url          MCP endpoint, e.g. http://127.0.0.1:1234/mcp
 * @param {number} maxSockets   connection pool size (= concurrency)
 */
export function createClient(url, maxSockets) {
  const u = new URL(url);
  const agent = new http.Agent({
    keepAlive: true,
    maxSockets,
    maxFreeSockets: maxSockets,
    scheduling: 'fifo',
    noDelay: true,
  });
  const base = { agent, host: u.hostname, port: Number(u.port), path: u.pathname + u.search, method: 'POST' };

  /**
   * POST `body` (a string) with `headers`; resolves with status, content type
   * and the full response text. Rejects on network errors or timeout.
   */
  function post(headers, body, timeoutMs = 30_000) {
    return new Promise((resolve, reject) => {
      const req = http.request(
        { ...base, headers: { ...headers, 'content-length': Buffer.byteLength(body) } },
        (res) => {
          res.setEncoding('utf8');
          let text = '';
          res.on('data', (c) => {
            text += c;
          });
          res.on('end', () =>
            resolve({ status: res.statusCode, contentType: res.headers['content-type'] ?? '', text }),
          );
          res.on('error', reject);
        },
      );
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`timeout after ${timeoutMs} ms`)));
      req.on('error', reject);
      req.end(body);
    });
  }

  return { post, close: () => agent.destroy(), agent };
}
