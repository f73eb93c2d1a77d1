// The official SDK's server (@modelcontextprotocol/server 2.4.0) in its legacy stateful mode (2025-11-25): one
// WebStandardStreamableHTTPServerTransport per session (initialize + Mcp-Session-Id), and a tool that asks its
// question the 2025 way, with an elicitation/create request to the client in the middle of the call (and one that
// asks twice). Each tool notes when its call is cancelled, so a test can see a dropped call reach the server.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { toRequest, writeResponse } from './sdk-server.js';

/** The calls the server saw cancelled (their `path`), and a wait for one. */
class Cancellations {
  readonly paths: string[] = [];
  readonly #waiters = new Map<string, () => void>();
  add(path: string): void {
    this.paths.push(path);
    this.#waiters.get(path)?.();
  }
  of(path: string): Promise<void> {
    if (this.paths.includes(path)) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.set(path, resolve));
  }
}

function build(cancelled: Cancellations): McpServer {
  const server = new McpServer({ name: 'sdk-legacy', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.registerTool(
    'confirm_delete',
    { description: 'Delete a file after asking', inputSchema: z.object({ path: z.string() }) },
    async ({ path }, ctx) => {
      ctx.mcpReq.signal.addEventListener('abort', () => cancelled.add(path), { once: true });
      const r = await ctx.mcpReq.elicitInput({
        message: `Delete ${path}?`,
        requestedSchema: {
          type: 'object',
          properties: { confirm: { type: 'boolean' } },
          required: ['confirm'],
        },
      });
      const yes = r.action === 'accept' && r.content?.confirm === true;
      return { content: [{ type: 'text', text: yes ? `deleted ${path}` : `kept ${path} (${r.action})` }] };
    },
  );
  server.registerTool(
    'rename_file',
    {
      description: 'Rename a file: asks the new name, then to confirm',
      inputSchema: z.object({ path: z.string() }),
    },
    async ({ path }, ctx) => {
      ctx.mcpReq.signal.addEventListener('abort', () => cancelled.add(path), { once: true });
      const named = await ctx.mcpReq.elicitInput({
        message: `New name for ${path}?`,
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      });
      const name = named.action === 'accept' ? String(named.content?.name) : '';
      if (!name) return { content: [{ type: 'text', text: `kept ${path}` }] };
      const sure = await ctx.mcpReq.elicitInput({
        message: `Rename ${path} to ${name}?`,
        requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
      });
      const yes = sure.action === 'accept' && sure.content?.ok === true;
      return { content: [{ type: 'text', text: yes ? `renamed ${path} to ${name}` : `kept ${path}` }] };
    },
  );
  return server;
}

export interface LegacySdkServer {
  url: string;
  /** "METHOD jsonrpc-method session?" per HTTP request, in order. */
  requests: string[];
  sessions: () => number;
  /** Paths of the tool calls the server saw cancelled (notifications/cancelled), and a wait for one. */
  cancelled: Cancellations;
  close: () => Promise<void>;
}

export async function startLegacySdkServer(): Promise<LegacySdkServer> {
  const transports = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const requests: string[] = [];
  const cancelled = new Cancellations();
  let port = 0;
  const http = createServer((req, res) => {
    toRequest(req, port)
      .then(async (request) => {
        const sid = req.headers['mcp-session-id'];
        const body = request.method === 'POST' ? await request.clone().text() : '';
        let method = '';
        try {
          method = String((JSON.parse(body) as { method?: unknown }).method ?? 'response');
        } catch {}
        requests.push(`${req.method} ${method} ${sid ? 'session' : 'none'}`.trim());
        let transport = typeof sid === 'string' ? transports.get(sid) : undefined;
        if (!transport && method === 'initialize') {
          const t = new WebStandardStreamableHTTPServerTransport({
            sessionIdGenerator: () => randomUUID(),
            onsessioninitialized: (id) => {
              transports.set(id, t);
            },
            onsessionclosed: (id) => {
              transports.delete(id);
            },
          });
          await build(cancelled).connect(t);
          transport = t;
        }
        if (!transport) {
          // What the SDK's own examples answer for a request outside any session.
          res.writeHead(400, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              jsonrpc: '2.0',
              error: { code: -32000, message: 'Bad Request: No valid session ID provided' },
              id: null,
            }),
          );
          return;
        }
        await writeResponse(await transport.handleRequest(request), res);
      })
      .catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500);
        res.end(String(error));
      });
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  port = (http.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    sessions: () => transports.size,
    cancelled,
    close: async () => {
      for (const t of transports.values()) await t.close();
      await new Promise<void>((r) => {
        http.closeAllConnections();
        http.close(() => r());
      });
    },
  };
}
