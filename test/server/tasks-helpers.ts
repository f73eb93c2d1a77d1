// Requests for the tasks tests, sent straight to a server's core (no transport): with or without the extension
// declared, as one principal or another. Waiting for a task waits on the event loop turning, never on the clock.
import type { JsonRpcRequest, JsonRpcResponse } from '../../src/protocol/index.js';
import type { McpServer, Principal, RequestEnvironment } from '../../src/server/index.js';

export const TASKS = { 'io.modelcontextprotocol/tasks': {} };

// biome-ignore lint/suspicious/noExplicitAny: replies are read as loose JSON, checked by the expectations
export type Loose = any;

export const ALICE: Principal = { subject: 'alice', issuer: 'https://issuer.test' };
export const MALLORY: Principal = { subject: 'mallory', issuer: 'https://issuer.test' };

let nextId = 1;

export function request(method: string, params: Record<string, unknown>, tasks = true): JsonRpcRequest {
  return {
    jsonrpc: '2.0',
    id: nextId++,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'tasks-tests', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {
          elicitation: { form: {}, url: {} },
          ...(tasks ? { extensions: TASKS } : {}),
        },
      },
    },
  };
}

export function env(principal?: Principal): RequestEnvironment {
  return { principal, signal: new AbortController().signal, notify: () => undefined };
}

/** Send one request as `who`; the JSON-RPC response. */
export function send(
  server: McpServer,
  method: string,
  params: Record<string, unknown>,
  o: { who?: Principal; tasks?: boolean } = {},
): Promise<JsonRpcResponse & Loose> {
  return server.core.handle(request(method, params, o.tasks ?? true), env(o.who)) as Promise<Loose>;
}

/** tasks/get until `done(task)` holds, turning the event loop between polls (bounded, so a hang fails the test). */
export async function pollUntil(
  server: McpServer,
  taskId: string,
  done: (task: Loose) => boolean,
  who?: Principal,
): Promise<Loose> {
  for (let i = 0; i < 5000; i++) {
    const reply = await send(server, 'tasks/get', { taskId }, { who });
    if (reply.error) throw new Error(`tasks/get failed: ${JSON.stringify(reply.error)}`);
    if (done(reply.result)) return reply.result;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`task ${taskId} never reached the expected state`);
}

export const ended = (t: Loose) => ['completed', 'failed', 'cancelled'].includes(t.status);
