// Attack: whose bucket a task is counted in. A person evading tasks.maxPerPrincipal by calling through another
// client registration (a new client_id is one dynamic registration away); anonymous callers on a server without
// authentication (one shared bucket, as the refusal limit's); and what a refused caller sees over HTTP.

import { describe, expect, it, onTestFinished } from 'vitest';
import { McpServer, type Principal, text } from '../../src/server/index.js';
import { generateKeySpec } from '../../src/state/index.js';
import { mcp } from '../helpers/mcp-http.js';
import { deferred } from '../helpers/signals.js';
import { ALICE, type Loose, MALLORY, send, TASKS } from '../server/tasks-helpers.js';

function bounded(limit: number) {
  const release = deferred();
  const server = new McpServer({
    name: 'bounded',
    version: '1',
    stateKeys: generateKeySpec(),
    logger: { info() {}, warn() {}, error() {} },
    tasks: { maxPerPrincipal: limit },
  }).tool({ name: 'held', description: 'waits for the test', task: 'required' }, async () => {
    await release.promise;
    return text('released');
  });
  onTestFinished(() => release.resolve());
  return { server, release };
}

const call = (server: McpServer, who?: Principal): Promise<Loose> =>
  send(server, 'tools/call', { name: 'held', arguments: {} }, who ? { who } : {});

describe('attack: evading the limit with another client registration', () => {
  it('the same person through another client_id shares the one limit', async () => {
    const { server } = bounded(2);
    const viaA: Principal = { ...ALICE, clientId: 'client-a' };
    const viaB: Principal = { ...ALICE, clientId: 'client-b' };
    expect((await call(server, viaA)).result.resultType).toBe('task');
    expect((await call(server, viaA)).result.resultType).toBe('task');
    expect((await call(server, viaA)).error?.code).toBe(-32600);
    expect((await call(server, viaB)).error?.code).toBe(-32600);
    // A task stays its principal's (client included): the other registration cannot see or steer it.
    expect((await call(server, MALLORY)).result.resultType).toBe('task');
  });

  it("a task that ends frees the person's place whichever client made it", async () => {
    const { server } = bounded(1);
    const viaA: Principal = { ...ALICE, clientId: 'client-a' };
    const viaB: Principal = { ...ALICE, clientId: 'client-b' };
    const first = (await call(server, viaA)).result;
    expect((await call(server, viaB)).error?.code).toBe(-32600);
    // Client b cannot cancel client a's task ...
    expect((await send(server, 'tasks/cancel', { taskId: first.taskId }, { who: viaB })).error?.code).toBe(
      -32602,
    );
    // ... client a can, and then b may start one.
    await send(server, 'tasks/cancel', { taskId: first.taskId }, { who: viaA });
    expect((await call(server, viaB)).result.resultType).toBe('task');
  });
});

describe('anonymous callers (a server without authentication)', () => {
  it('share one bucket: the limit still bounds what everyone together may leave unfinished', async () => {
    const { server } = bounded(2);
    expect((await call(server)).result.resultType).toBe('task');
    expect((await call(server)).result.resultType).toBe('task');
    expect((await call(server)).error?.code).toBe(-32600);
    // An authenticated principal is not in that bucket.
    expect((await call(server, ALICE)).result.resultType).toBe('task');
  });
});

describe('the refusal over HTTP', () => {
  it('is 429 with Retry-After, -32600, and data naming the wait and the limit; nothing else leaks', async () => {
    const { server } = bounded(1);
    const endpoint = await server.http({ port: 0 }).listen();
    onTestFinished(() => endpoint.close());
    const meta = {
      'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} }, extensions: TASKS },
    };
    const first = await mcp(endpoint.url, 'tools/call', { name: 'held', arguments: {} }, { meta });
    expect(first.response.result?.resultType).toBe('task');
    const refused = await mcp(endpoint.url, 'tools/call', { name: 'held', arguments: {} }, { meta });
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('30');
    expect(refused.response.error).toMatchObject({ code: -32600, data: { retryAfterSeconds: 30, limit: 1 } });
    // The message names the count and the limit, never a task id.
    expect(refused.response.error?.message).not.toContain(String(first.response.result?.taskId));
  });
});
