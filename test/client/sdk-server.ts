// An official-SDK server (@modelcontextprotocol/server 2.4.0, stateless, `createMcpHandler`) with a 2-round and a
// 3-round MRTR tool, served on node:http for the interop tests.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  acceptedContent,
  createMcpHandler,
  createRequestStateCodec,
  inputRequired,
  McpServer,
} from '@modelcontextprotocol/server';
import * as z from 'zod';

const Approve = z.object({ approve: z.boolean() });
const Destination = z.object({ city: z.enum(['Lisbon', 'Oslo', 'Kyoto']) });
const Nights = z.object({ nights: z.number().int().min(1).max(30) });

type TripState = { step: 'nights'; city: string } | { step: 'city' };

function build(codec: ReturnType<typeof createRequestStateCodec>): McpServer {
  const server = new McpServer(
    { name: 'sdk-interop', version: '1.0.0' },
    { capabilities: { tools: {} }, requestState: { verify: codec.verify } },
  );
  // Two rounds: ask for approval, then apply.
  server.registerTool(
    'approve_change',
    { description: 'Ask to approve a change', inputSchema: z.object({ change: z.string() }) },
    async ({ change }, ctx) => {
      const state = ctx.mcpReq.requestState() as { change?: string } | undefined;
      const answer = acceptedContent(ctx.mcpReq.inputResponses, 'approve', Approve);
      if (state?.change === change && answer)
        return {
          content: [{ type: 'text', text: answer.approve ? `approved ${change}` : `rejected ${change}` }],
        };
      return inputRequired({
        inputRequests: {
          approve: inputRequired.elicit({
            message: `Approve "${change}"?`,
            requestedSchema: {
              type: 'object',
              properties: { approve: { type: 'boolean' } },
              required: ['approve'],
            },
          }),
        },
        requestState: await codec.mint({ change }),
      });
    },
  );
  // Three rounds: ask the city, then the nights, then book.
  server.registerTool(
    'book_trip',
    { description: 'Book a trip in two questions', inputSchema: z.object({ traveller: z.string() }) },
    async ({ traveller }, ctx) => {
      const state = ctx.mcpReq.requestState() as TripState | undefined;
      if (state?.step === 'nights') {
        const n = acceptedContent(ctx.mcpReq.inputResponses, 'nights', Nights);
        if (n)
          return { content: [{ type: 'text', text: `${traveller}: ${n.nights} nights in ${state.city}` }] };
      }
      const city = acceptedContent(ctx.mcpReq.inputResponses, 'city', Destination);
      if (state?.step === 'city' && city) {
        return inputRequired({
          inputRequests: {
            nights: inputRequired.elicit({
              message: `How many nights in ${city.city}?`,
              requestedSchema: {
                type: 'object',
                properties: { nights: { type: 'integer', minimum: 1, maximum: 30 } },
                required: ['nights'],
              },
            }),
          },
          requestState: await codec.mint({ step: 'nights', city: city.city } satisfies TripState),
        });
      }
      return inputRequired({
        inputRequests: {
          city: inputRequired.elicit({
            message: 'Where to?',
            requestedSchema: {
              type: 'object',
              properties: { city: { type: 'string', enum: ['Lisbon', 'Oslo', 'Kyoto'] } },
              required: ['city'],
            },
          }),
        },
        requestState: await codec.mint({ step: 'city' } satisfies TripState),
      });
    },
  );
  return server;
}

export async function toRequest(req: IncomingMessage, port: number): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (Array.isArray(v)) for (const x of v) headers.append(k, x);
    else if (v !== undefined) headers.set(k, v);
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  return new Request(`http://127.0.0.1:${port}${req.url ?? '/'}`, {
    method: req.method,
    headers,
    body: hasBody ? Buffer.concat(chunks) : undefined,
  });
}

export async function writeResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((v, k) => {
    headers[k] = v;
  });
  res.writeHead(response.status, headers);
  if (response.body) for await (const chunk of response.body) res.write(chunk);
  res.end();
}

export async function startSdkServer(): Promise<{
  url: string;
  requests: string[];
  close: () => Promise<void>;
}> {
  const codec = createRequestStateCodec({ key: randomBytes(32) });
  const handler = createMcpHandler(() => build(codec));
  const requests: string[] = [];
  let port = 0;
  const http = createServer((req, res) => {
    toRequest(req, port)
      .then(async (request) => {
        requests.push(String(req.headers['mcp-method']));
        await writeResponse(await handler.fetch(request), res);
      })
      .catch((error: unknown) => {
        res.writeHead(500);
        res.end(String(error));
      });
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  port = (http.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    close: () =>
      new Promise<void>((r) => {
        http.closeAllConnections();
        http.close(() => r());
      }),
  };
}
