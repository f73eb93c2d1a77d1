// Child process: the official TypeScript SDK (@modelcontextprotocol/server)
// serving the two-round `approve_change` tool, stateless, via
// `createMcpHandler`, the way an SDK user would write it.
//
// Usage: node bench/lib/sdk-server.mjs --port P [--echo]   (0 = ephemeral)
// Prints `listening on http://127.0.0.1:P/mcp` when ready. --echo (the gateway bench's HTTP upstream) adds a one-round
// `echo` tool and counts the POSTs it receives, by JSON-RPC method: `GET /bench-count` answers the counts.

import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import {
  acceptedContent,
  createMcpHandler,
  createRequestStateCodec,
  inputRequired,
  McpServer,
} from '@modelcontextprotocol/server';
import * as z from 'zod';
import { listenAsBenchChild } from './child-listen.mjs';
import { toNodeListener } from './node-adapter.mjs';
import { requestCounter } from './request-counter.mjs';

// One key for the process: every round of a flow is served by this process.
const codec = createRequestStateCodec({ key: randomBytes(32) });

const echoMode = process.argv.includes('--echo');
const ApproveInput = z.object({ change: z.string() });
const EchoInput = z.object({ message: z.string() });
const Confirmation = z.object({ approve: z.boolean() });

function buildServer() {
  const server = new McpServer(
    { name: 'sdk-bench', version: '1.0.0' },
    { capabilities: { tools: {} }, requestState: { verify: codec.verify } },
  );
  server.registerTool(
    'approve_change',
    { description: 'Ask the user to approve a change, then apply it.', inputSchema: ApproveInput },
    async ({ change }, ctx) => {
      const state = ctx.mcpReq.requestState(); // verified payload (seam ran codec.verify)
      const answer = acceptedContent(ctx.mcpReq.inputResponses, 'confirm', Confirmation);
      if (state && state.change === change && answer) {
        if (answer.approve === true) return { content: [{ type: 'text', text: `approved ${change}` }] };
        return { content: [{ type: 'text', text: `rejected ${change}` }] };
      }
      return inputRequired({
        inputRequests: {
          confirm: inputRequired.elicit({
            message: `Approve change "${change}"?`,
            requestedSchema: {
              type: 'object',
              properties: { approve: { type: 'boolean', description: 'Approve the change' } },
              required: ['approve'],
            },
          }),
        },
        requestState: await codec.mint({ step: 'confirm', change }),
      });
    },
  );
  if (echoMode)
    server.registerTool(
      'echo',
      { description: 'Echo the message back.', inputSchema: EchoInput },
      ({ message }) => ({
        content: [{ type: 'text', text: message }],
      }),
    );
  return server;
}

const handler = createMcpHandler(() => buildServer(), {
  onerror: process.env.BENCH_DEBUG ? (e) => console.error('[sdk onerror]', e) : undefined,
});
const listener = toNodeListener(handler.fetch);
const http = createServer(echoMode ? counting(listener) : listener);
listenAsBenchChild(http);

/** Count each POST by its Mcp-Method header (every 2026 request has one), else by the body's first "method". */
function counting(inner) {
  const counter = requestCounter();
  return (req, res) => {
    if (counter.answered(req, res)) return;
    if (req.method === 'POST') {
      const header = req.headers['mcp-method'];
      if (typeof header === 'string') counter.note(header);
      // The adapter attaches its own reader in this same tick, so it still sees every chunk.
      else req.once('data', (c) => counter.note(/"method"\s*:\s*"([^"]+)"/.exec(c.toString('latin1'))?.[1]));
    }
    inner(req, res);
  };
}
