// The README's tour: a helpdesk tool that asks two to four questions, and the server that serves it.
// Importing it starts the server (PORT=0 picks a free port); test/docs/tour.test.ts makes a call to it.
// #region tour
import { McpServer, text } from 'mrtr/server';
import { z } from 'zod';

const server = new McpServer({ name: 'helpdesk', version: '1.0.0' }); // keys from MRTR_STATE_KEYS

server.tool(
  { name: 'resolve_bug', description: 'Resolve a bug', input: z.object({ id: z.number() }) },
  async ({ id }, { ask }) => {
    const { resolution } = await ask.form(
      `How was bug ${id} resolved?`,
      z.object({ resolution: z.enum(['Fixed', 'Duplicate']) }),
    );
    if (resolution === 'Duplicate') {
      const { original } = await ask.form(
        'Duplicate of which bug?',
        z.object({ original: z.number().int() }),
      );
      if (!(await ask.confirm(`Close ${id} as a duplicate of ${original}?`))) return text('Left open');
      return text(`Bug ${id} closed as a duplicate of ${original}`);
    }
    return text(`Bug ${id} resolved as ${resolution}`);
  },
);

// Streamable HTTP on 127.0.0.1; or serve stdio instead: await server.stdio()
export const endpoint = await server.listen({ port: Number(process.env.PORT ?? 3000) });
// #endregion
