// Test helpers: tiny raw node:http MCP servers that misbehave on purpose, and access to the built CLI.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI = join(ROOT, 'dist/cli/main.js');

export interface Seen {
  headers: IncomingMessage['headers'];
  // biome-ignore lint/suspicious/noExplicitAny: test fixtures read arbitrary JSON bodies
  body: any;
  raw: string;
  /** The client's port: equal across requests when the connection was kept alive. */
  remotePort: number | undefined;
}

export interface FakeServer {
  url: string;
  seen: Seen[];
  /** Requests for one method only. */
  calls(method: string): Seen[];
  close(): Promise<void>;
}

/**
 * A raw HTTP server. `handle` answers each POST itself, or returns 'default' for a plain complete result
 * (`tools/list` gets an empty list).
 */
/** A fake server whose handler sees only tools/call; every other method gets the default answer. */
export function toolCallServer(
  handle: (
    seen: Seen & { body: { id: number; method: string } },
    res: ServerResponse,
    index: number,
  ) => unknown,
): Promise<FakeServer> {
  return fakeServer((s, res, i) =>
    (s.body as { method?: unknown } | undefined)?.method === 'tools/call'
      ? handle(s as never, res, i)
      : 'default',
  );
}

/** Answer with one more round: a confirmation under `key`, carrying `requestState` (whatever its type). */
export function askAgain(res: ServerResponse, id: unknown, requestState: unknown, key = 'ok'): void {
  json(
    res,
    result(id, { resultType: 'input_required', inputRequests: { [key]: confirmForm() }, requestState }),
  );
}

/** A tools/call server that asks `inputRequests`, then completes with the inputResponses it got, as JSON text. */
export function askThenEchoServer(inputRequests: Record<string, unknown>): Promise<FakeServer> {
  return toolCallServer((s, res) => {
    const { inputResponses } = (s.body as { params: { inputResponses?: unknown } }).params;
    if (inputResponses)
      return json(
        res,
        result(s.body.id, {
          resultType: 'complete',
          content: [{ type: 'text', text: JSON.stringify(inputResponses) }],
        }),
      );
    json(res, result(s.body.id, { resultType: 'input_required', inputRequests }));
  });
}

export async function fakeServer(
  handle: (seen: Seen, res: ServerResponse, index: number) => unknown,
): Promise<FakeServer> {
  const seen: Seen[] = [];
  const sockets = new Set<import('node:net').Socket>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      const s: Seen = { headers: req.headers, body, raw, remotePort: req.socket.remotePort };
      seen.push(s);
      const r = handle(s, res, seen.length - 1);
      if (r === 'default') {
        const b = body as { id: number; method: string };
        if (b.method === 'tools/list')
          json(res, { jsonrpc: '2.0', id: b.id, result: { resultType: 'complete', tools: [] } });
        else json(res, { jsonrpc: '2.0', id: b.id, result: { resultType: 'complete' } });
      }
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    seen,
    calls: (method) => seen.filter((s) => s.body?.method === method),
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

export function json(res: ServerResponse, body: unknown, status = 200): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function result(id: unknown, r: Record<string, unknown>) {
  return { jsonrpc: '2.0', id, result: r };
}

export function sse(res: ServerResponse, events: unknown[], end = true): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  // A string is written as is (comments, broken frames); anything else as one data event.
  for (const e of events) res.write(typeof e === 'string' ? `${e}\n\n` : `data: ${JSON.stringify(e)}\n\n`);
  if (end) res.end();
}

export const confirmForm = (message = 'Confirm?') => ({
  method: 'elicitation/create',
  params: {
    mode: 'form',
    message,
    requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
  },
});

function newest(dir: string): number {
  let t = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    t = Math.max(t, entry.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

/** Tests that run the built `dist/` fail clearly when it is missing or older than any source (all of it is built). */
export function requireBuiltCli(): void {
  const build = 'run `npx tsc -p tsconfig.build.json` (npm run build) before these tests';
  if (!existsSync(CLI)) throw new Error(`dist/cli/main.js is missing: ${build}`);
  const built = statSync(join(ROOT, 'dist/client/index.js'), { throwIfNoEntry: false });
  if (!built || built.mtimeMs + 1000 < newest(join(ROOT, 'src')))
    throw new Error(`dist/ is older than src/: ${build}`);
}
