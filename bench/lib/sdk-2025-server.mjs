// Child process: a 2025-era HTTP upstream for the gateway bench, on the official TypeScript SDK 1.x
// (@modelcontextprotocol/sdk), stateless, as its README writes one: a new McpServer and a new
// StreamableHTTPServerTransport (no session ids) for every request. One tool, `echo`. It counts the POSTs it receives
// (lib/request-counter.mjs): a gateway that opens a session for every call shows here as several requests per call.
// The transport reads a body the server has already read only when it is handed over, so this server reads it.
//
// Usage: node bench/lib/sdk-2025-server.mjs --port P   (0 = ephemeral)
// Prints `listening on http://127.0.0.1:P/mcp` when ready.
import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import * as z from 'zod';
import { listenAsBenchChild } from './child-listen.mjs';
import { requestCounter } from './request-counter.mjs';

async function readJson(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

function buildServer() {
  const server = new McpServer({ name: 'sdk-2025-bench', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Echo the message back.', inputSchema: { message: z.string() } },
    ({ message }) => ({ content: [{ type: 'text', text: message }] }),
  );
  return server;
}

const counter = requestCounter();
const http = createServer(async (req, res) => {
  if (counter.answered(req, res)) return;
  try {
    // Read here, so it is counted by its method; the transport takes the parsed body as it is.
    const body = req.method === 'POST' ? await readJson(req) : undefined;
    if (req.method === 'POST') counter.note(body?.method);
    const server = buildServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  } catch (error) {
    if (!res.headersSent)
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: String(error) } }));
  }
});
listenAsBenchChild(http);
