// The driver's `retry` option: a round that got no answer (connection reset, a gateway's 502) is sent again exactly
// as it was, at most `attempts` times; against a server with a replay guard the retry gets the lost answer and the
// step behind it runs once. A real mrtr server behind a real HTTP proxy that misbehaves on cue.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type DriverTarget,
  driveMrtr,
  McpClient,
  type MrtrEvent,
  scriptedResolver,
} from '../../src/client/index.js';
import type { JsonRpcResponse } from '../../src/protocol/index.js';
import { McpServer, text } from '../../src/server/index.js';
import { openStore } from '../../src/stores/index.js';

let effects = 0;
const server = new McpServer({
  name: 'retry',
  version: '1.0.0',
  replayStore: await openStore('memory'),
}).tool({ name: 'pay' }, async (_args, { ask }) => {
  await ask.confirm('Pay?', { key: 'ok' });
  const receipt = await ask.step('pay', () => ++effects);
  return text(`receipt ${receipt}`);
});

/** What the proxy does to the next requests, in order; then it forwards faithfully. */
type Fault = 'reset-before' | 'reset-after' | '502';
const faults: Fault[] = [];
let forwarded = 0;
let upstream: { url: string; close: () => Promise<void> };
let proxy: Server;
let proxyUrl: string;

beforeAll(async () => {
  const endpoint = await server.listen({ port: 0 });
  upstream = { url: endpoint.url, close: () => endpoint.close() };
  proxy = createServer((req, res) => {
    // Faults hit rounds only, not the client's server/discover.
    const fault = req.headers['mcp-method'] === 'tools/call' ? faults.shift() : undefined;
    if (fault === 'reset-before') return req.socket.destroy();
    if (fault === '502') {
      res.writeHead(502, { 'content-type': 'text/html' });
      return res.end('<html>502 Bad Gateway</html>');
    }
    const body: Buffer[] = [];
    req.on('data', (c: Buffer) => body.push(c));
    req.on('end', () => {
      if (req.headers['mcp-method'] === 'tools/call') forwarded++;
      const up = request(upstream.url, { method: 'POST', headers: req.headers }, (upRes) => {
        const chunks: Buffer[] = [];
        upRes.on('data', (c: Buffer) => chunks.push(c));
        // The round ran upstream; its answer is lost on the way back.
        upRes.on('end', () => {
          if (fault === 'reset-after') return req.socket.destroy();
          res.writeHead(upRes.statusCode ?? 500, upRes.headers);
          res.end(Buffer.concat(chunks));
        });
      });
      up.end(Buffer.concat(body));
    });
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;
});
afterAll(async () => {
  await new Promise((r) => proxy.close(r));
  await upstream.close();
});

const client = () =>
  new McpClient({ server: proxyUrl, resolvers: [scriptedResolver({}, { confirmDefault: true })] });

describe('driver retry', () => {
  it('resends a lost round: the replay guard answers it again and the step runs once', async () => {
    effects = 0;
    const events: MrtrEvent[] = [];
    // Round 1 never reaches the server; round 2 runs the step, then its answer is lost on the way back.
    faults.push('reset-before', 'reset-after');
    const outcome = await client().callTool(
      'pay',
      {},
      { retry: { attempts: 3, initialMs: 1 }, onEvent: (e) => events.push(e) },
    );
    expect(outcome.status).toBe('complete');
    if (outcome.status === 'complete')
      expect(outcome.result.content).toEqual([{ type: 'text', text: 'receipt 1' }]);
    expect(outcome.rounds).toBe(2); // rounds count the call's rounds, not the resends
    expect(effects).toBe(1);
    expect(events.filter((e) => e.type === 'retrying' && e.reason === 'no_answer')).toHaveLength(2);
  });

  it("retries a gateway's 502 without a JSON-RPC answer", async () => {
    faults.push('502', '502');
    const outcome = await client().callTool('pay', {}, { retry: { attempts: 2, initialMs: 1 } });
    expect(outcome.status).toBe('complete');
  });

  it('is bounded: past `attempts` resends the call ends as a transport error', async () => {
    const before = forwarded;
    faults.push('reset-before', 'reset-before', 'reset-before');
    const outcome = await client().callTool('pay', {}, { retry: { attempts: 2, initialMs: 1 } });
    expect(outcome).toMatchObject({ status: 'transport_error' });
    expect(faults).toEqual([]); // exactly 1 + 2 sends, all reset
    expect(forwarded).toBe(before);
  });

  it('is off by default: a lost answer ends the call', async () => {
    faults.push('reset-before');
    const outcome = await client().callTool('pay', {});
    expect(outcome).toMatchObject({ status: 'transport_error', rounds: 1 });
    faults.length = 0;
  });

  it('refuses a negative or fractional attempt count', async () => {
    await expect(client().callTool('pay', {}, { retry: { attempts: -1 } })).rejects.toThrow(
      'retry.attempts must be an integer >= 0',
    );
    await expect(client().callTool('pay', {}, { retry: { attempts: 1.5 } })).rejects.toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_OPTION' }),
    );
  });
});

describe('driver retry of a round still running elsewhere', () => {
  it("resends the replay guard's 503 'still running' answer until the round's own answer comes", async () => {
    const still = {
      jsonrpc: '2.0' as const,
      id: 1,
      error: {
        code: -32603,
        message:
          'Internal error: this round is still running for an earlier identical request; retry it shortly',
      },
    };
    const done = {
      jsonrpc: '2.0' as const,
      id: 1,
      result: { resultType: 'complete', content: [{ type: 'text', text: 'ok' }] },
    };
    const answers: JsonRpcResponse[] = [still, still, done];
    const sent: unknown[] = [];
    const target: DriverTarget = {
      method: 'tools/call',
      params: { name: 'pay', arguments: {} },
      target: 'pay',
      declared: new Set(),
      resolvers: [],
      server: 'test',
      send: async (params) => {
        sent.push(params);
        return answers.shift()!;
      },
    };
    const outcome = await driveMrtr(target, { retry: { attempts: 5, initialMs: 1 } });
    expect(outcome).toMatchObject({ status: 'complete', rounds: 1 });
    expect(sent).toHaveLength(3);
    // Any other server error is an answer, not a lost round: it ends the call at once.
    answers.push({ ...still, error: { code: -32603, message: 'Internal error' } });
    const failed = await driveMrtr(target, { retry: { attempts: 5, initialMs: 1 } });
    expect(failed).toMatchObject({ status: 'server_error' });
    expect(sent).toHaveLength(4);
  });
});
