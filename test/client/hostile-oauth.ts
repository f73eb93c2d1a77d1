// A protected MCP endpoint and an authorization server on 127.0.0.1, both under the test's control: each route's
// answer can be replaced (a document naming another server, a huge or never-ending body), and every request is
// recorded with its body, so a test can tell which credentials reached whom.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface Request {
  method: string;
  path: string;
  body: string;
  headers: IncomingMessage['headers'];
}

export type Route = (req: Request, res: ServerResponse) => void;

export interface Host {
  origin: string;
  requests: Request[];
  /** Set or replace the answer for a path (without the query). */
  route(path: string, handler: Route): void;
  /** Called with each request as it arrives (for a test that waits on one). */
  onRequest?: (req: Request) => void;
  close(): Promise<void>;
}

export async function host(): Promise<Host> {
  const routes = new Map<string, Route>();
  const requests: Request[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '/').replace(/\?.*/, '');
      const seen = {
        method: req.method ?? 'GET',
        path,
        body: Buffer.concat(chunks).toString('utf8'),
        headers: req.headers,
      };
      requests.push(seen);
      h.onRequest?.(seen);
      const handler = routes.get(path);
      if (handler) handler(seen, res);
      else {
        res.writeHead(404);
        res.end();
      }
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const h: Host = {
    origin,
    requests,
    route: (path, handler) => void routes.set(path, handler),
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
  return h;
}

export function sendJson(res: ServerResponse, body: unknown, status = 200): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(text);
}

/** A JSON body of `bytes` bytes, streamed in 64 KiB pieces of one reused buffer (no length header). */
export function hugeJson(res: ServerResponse, bytes: number): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  const piece = Buffer.alloc(64 * 1024, 0x20);
  res.write('{"x":"');
  let sent = 6;
  const more = (): void => {
    while (sent < bytes - 2) {
      const n = Math.min(piece.length, bytes - 2 - sent);
      sent += n;
      if (!res.write(n === piece.length ? piece : piece.subarray(0, n))) {
        res.once('drain', more);
        return;
      }
    }
    res.end('"}');
  };
  res.on('error', () => {});
  more();
}

/** Headers and the first byte of a document, then nothing more: the body never ends. */
export function neverEnding(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{');
}

/** An MCP endpoint at /mcp that answers every POST 401, pointing at its protected resource metadata. */
export function protectedResource(rs: Host, metadata: (rs: Host) => Record<string, unknown>): string {
  const prm = `${rs.origin}/.well-known/oauth-protected-resource/mcp`;
  rs.route('/mcp', (_req, res) => {
    res.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${prm}"` });
    res.end();
  });
  rs.route('/.well-known/oauth-protected-resource/mcp', (_req, res) => sendJson(res, metadata(rs)));
  return `${rs.origin}/mcp`;
}

/**
 * An authorization server at `as`: metadata (with `overrides`), dynamic registration and a token endpoint that
 * hands out `token-<n>` access tokens. Every request, refresh grants included, is in `as.requests`.
 */
export function authorizationServer(as: Host, overrides: Record<string, unknown> = {}): void {
  as.route('/.well-known/oauth-authorization-server', (_req, res) =>
    sendJson(res, {
      issuer: as.origin,
      authorization_endpoint: `${as.origin}/authorize`,
      token_endpoint: `${as.origin}/token`,
      registration_endpoint: `${as.origin}/register`,
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      ...overrides,
    }),
  );
  as.route('/register', (_req, res) =>
    sendJson(res, { client_id: `client-of-${as.origin}`, token_endpoint_auth_method: 'none' }, 201),
  );
  let n = 0;
  as.route('/token', (_req, res) =>
    sendJson(res, { access_token: `token-${++n}`, token_type: 'Bearer', expires_in: 3600 }),
  );
}
