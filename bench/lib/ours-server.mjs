// Child process: this repository's server (the built dist/, so `npm run build` first) serving the two-round
// `approve_change` tool with the explicit inputRequired() API: round 1 asks for approval, round 2 completes.
// test/fixtures/approval-server.ts is the same tool for the tests.
//
// Usage: node bench/lib/ours-server.mjs --port P [--root DIR]   (0 = ephemeral; DIR: another checkout, built,
// for `npm run bench -- --baseline DIR`). Prints `listening on http://127.0.0.1:P/mcp` when ready. Keys come
// from MRTR_STATE_KEYS, else a per-process key.
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const arg = (name) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const root = resolve(arg('--root') ?? join(import.meta.dirname, '..', '..'));
// zod from the same checkout as the server: schemas are checked by the copy of zod that built them.
const zodPath = createRequire(join(root, 'package.json')).resolve('zod');
const { z } = await import(pathToFileURL(zodPath).href);
const { inputRequired, McpServer, text } = await import(
  pathToFileURL(join(root, 'dist', 'server', 'index.js')).href
);

const server = new McpServer({ name: 'mrtr-bench', version: '0.1.0' }).tool(
  {
    name: 'approve_change',
    description: 'Asks for approval, then applies a change',
    input: z.object({ change: z.string() }),
  },
  ({ change }, ctx) => {
    const answer = ctx.inputResponses.confirm;
    if (answer?.action === 'accept' && answer.content?.approve === true) return text(`approved ${change}`);
    return inputRequired({
      inputRequests: {
        confirm: {
          method: 'elicitation/create',
          params: {
            mode: 'form',
            message: `Approve ${change}?`,
            requestedSchema: {
              type: 'object',
              properties: { approve: { type: 'boolean' } },
              required: ['approve'],
            },
          },
        },
      },
    });
  },
);

const port = Number(arg('--port') ?? 0);
// listen(), not a bare node:http server: the benchmark measures the transport users get, slow-client limits included.
const endpoint = await server.listen({ host: '127.0.0.1', port });
const stop = () => endpoint.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
console.log(`listening on ${endpoint.url}`);
