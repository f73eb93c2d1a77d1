// A 2025-11-25 server over Streamable HTTP that asks on each call's own stream (as the spec allows and some servers
// do; the official SDK's elicitInput uses the session's GET stream instead): tools/call opens an SSE response that
// carries one elicitation/create and, once its answer comes back, the result, which names the path and the answer.
// Calls held at once are then told apart by their streams, so a test can hold several. A call of `/silent` hangs.
import type { ServerResponse } from 'node:http';
import { type FakeServer, fakeServer, json } from './helpers.js';

export interface LegacyStreamServer extends FakeServer {
  /** requestIds the client cancelled (notifications/cancelled). */
  cancelled: unknown[];
  /** Resolves with the first requestId the client cancels. */
  firstCancel: Promise<unknown>;
  /** Resolves with the id of the first tools/call. */
  firstCall: Promise<unknown>;
}

export async function startLegacyStreamServer(): Promise<LegacyStreamServer> {
  const open = new Map<string, { res: ServerResponse; id: unknown; path: string }>();
  const cancelled: unknown[] = [];
  let onCancel: (id: unknown) => void = () => {};
  const firstCancel = new Promise<unknown>((resolve) => {
    onCancel = resolve;
  });
  let onCall: (id: unknown) => void = () => {};
  const firstCall = new Promise<unknown>((resolve) => {
    onCall = resolve;
  });
  const server = await fakeServer((seen, res) => {
    if (seen.body === undefined) {
      res.writeHead(405).end(); // no standalone GET stream
      return;
    }
    const body = seen.body as { id?: unknown; method?: string; params?: Record<string, unknown> };
    const accepted = () => res.writeHead(202).end();
    switch (body.method) {
      case 'server/discover':
        return json(
          res,
          { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Bad Request: no session' } },
          400,
        );
      case 'initialize':
        res.setHeader('mcp-session-id', 'session-1');
        return json(res, {
          jsonrpc: '2.0',
          id: body.id,
          result: {
            protocolVersion: '2025-11-25',
            capabilities: { tools: {} },
            serverInfo: { name: 'asks-on-stream', version: '1' },
          },
        });
      case 'notifications/initialized':
        return accepted();
      case 'notifications/cancelled':
        cancelled.push(body.params?.requestId);
        onCancel(body.params?.requestId);
        return accepted();
      case 'tools/list':
        return json(res, { jsonrpc: '2.0', id: body.id, result: { tools: [] } });
      case 'tools/call': {
        const path = String((body.params?.arguments as { path?: unknown } | undefined)?.path);
        const ask = `ask-${String(body.id)}`;
        open.set(ask, { res, id: body.id, path });
        onCall(body.id);
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        // A call of `/silent` neither asks nor answers: it runs until the client gives up on it.
        if (path === '/silent') return;
        const question = {
          jsonrpc: '2.0',
          id: ask,
          method: 'elicitation/create',
          params: {
            mode: 'form',
            message: `Delete ${path}?`,
            requestedSchema: { type: 'object', properties: {} },
          },
        };
        res.write(`data: ${JSON.stringify(question)}\n\n`);
        return;
      }
      case undefined: {
        // The client's answer to a question: the call it belongs to ends with it.
        accepted();
        const call = open.get(String(body.id));
        if (!call) return;
        open.delete(String(body.id));
        const answer =
          (seen.body as { result?: unknown; error?: unknown }).result ??
          (seen.body as { error?: unknown }).error;
        const result = { content: [{ type: 'text', text: `${call.path}: ${JSON.stringify(answer)}` }] };
        call.res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id: call.id, result })}\n\n`);
        return;
      }
      default:
        return json(res, {
          jsonrpc: '2.0',
          id: body.id,
          error: { code: -32601, message: 'Method not found' },
        });
    }
  });
  return Object.assign(server, { cancelled, firstCancel, firstCall });
}
