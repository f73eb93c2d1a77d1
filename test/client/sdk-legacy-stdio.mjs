import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';

const server = new McpServer({ name: 'sdk-legacy', version: '1.0.0' }, { capabilities: { tools: {} } });
server.registerTool(
  'confirm_delete',
  { description: 'Delete a file after asking', inputSchema: z.object({ path: z.string() }) },
  async ({ path }, ctx) => {
    const r = await ctx.mcpReq.elicitInput({
      message: `Delete ${path}?`,
      requestedSchema: {
        type: 'object',
        properties: { confirm: { type: 'boolean' } },
        required: ['confirm'],
      },
    });
    return {
      content: [
        {
          type: 'text',
          text:
            r.action === 'accept' && r.content?.confirm ? `deleted ${path}` : `kept ${path} (${r.action})`,
        },
      ],
    };
  },
);
await server.connect(new StdioServerTransport());
