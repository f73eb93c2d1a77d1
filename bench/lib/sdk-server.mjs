// Child process: the official TypeScript SDK (@modelcontextprotocol/server)
// serving the two-round `approve_change` tool, stateless, via
// `createMcpHandler`, the way an SDK user would write it.
//
// Usage: node bench/lib/sdk-server.mjs --port P   (0 = ephemeral)
// Prints `listening on http://127.0.0.1:P/mcp` when ready.

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

// One key for the process: every round of a flow is served by this process.
const codec = createRequestStateCodec({ key: randomBytes(32) });

const ApproveInput = z.object({ change: z.string() });
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
  return server;
}

const handler = createMcpHandler(() => buildServer(), {
  onerror: process.env.BENCH_DEBUG ? (e) => console.error('[sdk onerror]', e) : undefined,
});
const http = createServer(toNodeListener(handler.fetch));
listenAsBenchChild(http);
