// A scripted tasks server for tests: every tools/call and tasks/* request waits until the test answers it, so a test
// says exactly when the next poll is answered (no sleeps, no time windows). server/discover and tools/list get the
// helpers' default answers.
import type { ServerResponse } from 'node:http';
import { type FakeServer, fakeServer, json, type Seen } from './helpers.js';

export interface HeldRequest {
  method: string;
  // biome-ignore lint/suspicious/noExplicitAny: the scripted server reads arbitrary JSON bodies
  params: any;
  headers: Seen['headers'];
  reply(result: Record<string, unknown>): void;
  fail(error: { code: number; message: string }): void;
}

export interface TaskServer extends FakeServer {
  /** The next request of `method` (waiting for it if it has not arrived); requests of other methods stay queued. */
  next(method: string): Promise<HeldRequest>;
}

const HELD = new Set(['tools/call', 'tasks/get', 'tasks/update', 'tasks/cancel']);

export const TIMES = {
  createdAt: '2026-01-01T00:00:00Z',
  lastUpdatedAt: '2026-01-01T00:00:00Z',
  ttlMs: 60_000,
};

export const taskState = (taskId: string, status: string, extra: Record<string, unknown> = {}) => ({
  taskId,
  status,
  ...TIMES,
  pollIntervalMs: 100,
  ...extra,
});

export async function taskServer(): Promise<TaskServer> {
  const queued: HeldRequest[] = [];
  const waiting: { method: string; take: (r: HeldRequest) => void }[] = [];
  const hold = (s: Seen, res: ServerResponse) => {
    const body = s.body as { id: number; method: string; params: unknown };
    const held: HeldRequest = {
      method: body.method,
      params: body.params,
      headers: s.headers,
      reply: (result) => json(res, { jsonrpc: '2.0', id: body.id, result }),
      fail: (error) => json(res, { jsonrpc: '2.0', id: body.id, error }),
    };
    const i = waiting.findIndex((w) => w.method === held.method);
    if (i >= 0) waiting.splice(i, 1)[0]?.take(held);
    else queued.push(held);
  };
  const server = await fakeServer((s, res) => {
    const method = (s.body as { method?: string } | undefined)?.method;
    if (method === undefined || !HELD.has(method)) return 'default';
    hold(s, res);
  });
  return {
    ...server,
    next: (method) => {
      const i = queued.findIndex((q) => q.method === method);
      if (i >= 0) return Promise.resolve(queued.splice(i, 1)[0] as HeldRequest);
      return new Promise((take) => waiting.push({ method, take }));
    },
  };
}
