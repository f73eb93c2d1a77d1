// Questions a 2025 client has not answered hold memory on the instance until their answer or timeout, even once the
// client has dropped the connection, and sessions cost nothing to open: the bridge bounds how many may wait, per
// session and in all, and refuses one more with an error that says so instead of growing without end.
import { describe, expect, it } from 'vitest';
import type { JsonRpcRequest, JsonRpcResponse } from '../../src/protocol/index.js';
import { LEGACY_DEFAULTS, LegacyBridge, type RequestHandler } from '../../src/server/index.js';

/** An inner handler whose every tool call asks the client one question, forever. */
const asksForever: RequestHandler = {
  handleRequest(request: JsonRpcRequest): JsonRpcResponse {
    const result =
      request.method === 'server/discover'
        ? { resultType: 'complete', capabilities: { tools: {} }, _meta: {} }
        : {
            resultType: 'input_required',
            inputRequests: {
              q: {
                method: 'elicitation/create',
                params: {
                  mode: 'form',
                  message: 'Name?',
                  requestedSchema: { type: 'object', properties: {} },
                },
              },
            },
          };
    return { jsonrpc: '2.0', id: request.id, result } as unknown as JsonRpcResponse;
  },
  headerParams: () => undefined,
};

const quiet = { info() {}, warn() {}, error() {} };

async function setUp(limits: { maxPendingAnswers?: number; maxPendingPerSession?: number }) {
  const bridge = new LegacyBridge(asksForever, {
    sessionKeys: [{ kid: 'k1', key: new Uint8Array(32).fill(7) }],
    logger: quiet,
    ...limits,
  });
  const open = async () => {
    const { session } = await bridge.initialize(
      {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: { elicitation: {} } },
      },
      { subject: 'mallory' },
    );
    return session!;
  };
  let n = 0;
  /** Start a tool call and resolve once its question went out (or its response came first). */
  const call = (session: Awaited<ReturnType<typeof open>>) =>
    new Promise<{ asked: boolean; response?: JsonRpcResponse }>((resolve) => {
      const response = bridge.handle(
        { jsonrpc: '2.0', id: ++n, method: 'tools/call', params: { name: 'x', arguments: {} } },
        session,
        { subject: 'mallory' },
        { send: () => resolve({ asked: true }), signal: new AbortController().signal },
      );
      void response.then((r) => resolve({ asked: false, response: r }));
    });
  return { bridge, open, call };
}

describe('questions waiting for a 2025 client’s answer are bounded', () => {
  it('one session may have at most maxPendingPerSession waiting; one more is refused with a clear error', async () => {
    const { bridge, open, call } = await setUp({ maxPendingPerSession: 3 });
    const session = await open();
    for (let i = 0; i < 3; i++) expect((await call(session)).asked).toBe(true);
    const refused = await call(session);
    expect(refused.asked).toBe(false);
    expect(refused.response).toMatchObject({
      error: { code: -32600, message: expect.stringContaining('already has 3 questions waiting') },
    });
    // Another session is not held back by this one.
    expect((await call(await open())).asked).toBe(true);
    await bridge.close();
  });

  it('all sessions together may have at most maxPendingAnswers waiting on the instance', async () => {
    const { bridge, open, call } = await setUp({ maxPendingAnswers: 4 });
    for (let i = 0; i < 4; i++) expect((await call(await open())).asked).toBe(true);
    const refused = await call(await open());
    expect(refused.asked).toBe(false);
    expect(refused.response).toMatchObject({
      error: { message: expect.stringContaining('Server busy: 4 questions already wait') },
    });
    await bridge.close();
  });

  it('the defaults docs/compatibility.md names: 100 per session, 10,000 per instance', () => {
    expect(LEGACY_DEFAULTS).toMatchObject({ maxPendingPerSession: 100, maxPendingAnswers: 10_000 });
  });
});
