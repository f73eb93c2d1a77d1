// Child process: the official TypeScript SDK (@modelcontextprotocol/server) in its stateful mode, as a 2025 client
// meets it: one McpServer and one WebStandardStreamableHTTPServerTransport per session (Mcp-Session-Id), and the
// same approve_change tool written the 2025 way, asking with a server-to-client elicitation/create
// (ctx.mcpReq.elicitInput) on the call's SSE stream and waiting for the answer the client POSTs.
//
// Usage: node bench/lib/sdk-stateful-server.mjs --port P   (0 = ephemeral)
// Prints `listening on http://127.0.0.1:P/mcp` when ready.

import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { McpServer, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { listenAsBenchChild } from './child-listen.mjs';
import { toNodeListener } from './node-adapter.mjs';

function buildServer() {
  const server = new McpServer(
    { name: 'sdk-stateful-bench', version: '1.0.0' },
    { capabilities: { tools: {} } },
  );
  server.registerTool(
    'approve_change',
    {
      description: 'Ask the user to approve a change, then apply it.',
      inputSchema: z.object({ change: z.string() }),
    },
    async ({ change }, ctx) => {
      const answer = await server.server.elicitInput(
        {
          message: `Approve change "${change}"?`,
          requestedSchema: {
            type: 'object',
            properties: { approve: { type: 'boolean', description: 'Approve the change' } },
            required: ['approve'],
          },
        },
        { relatedRequestId: ctx.mcpReq.id },
      );
      const ok = answer.action === 'accept' && answer.content?.approve === true;
      return { content: [{ type: 'text', text: `${ok ? 'approved' : 'rejected'} ${change}` }] };
    },
  );
  return server;
}

const sessions = new Map();

async function handle(request) {
  const id = request.headers.get('mcp-session-id');
  if (id) {
    const transport = sessions.get(id);
    if (!transport)
      return new Response('{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"}}', {
        status: 404,
      });
    return transport.handleRequest(request);
  }
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (sid) => sessions.set(sid, transport),
    onsessionclosed: (sid) => sessions.delete(sid),
  });
  await buildServer().connect(transport);
  return transport.handleRequest(request);
}

listenAsBenchChild(createServer(toNodeListener(handle)));
