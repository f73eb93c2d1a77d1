// The 2025 bridge keeps session state (ended sessions, log levels) in a shared store. A store that stops answering
// must not hold 2025 clients' requests open for ever: every operation is bounded by the server's hookTimeoutMs, as a
// guard's store is for 2026 rounds, and past it the request fails closed with -32603 naming the store.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { JsonRpcRequest, JsonRpcResponse } from '../../src/protocol/index.js';
import { LegacyBridge, type RequestHandler } from '../../src/server/index.js';
import { MemoryStore } from '../../src/stores/index.js';
import { track } from '../helpers/signals.js';

const quiet = { info() {}, warn() {}, error() {} };
const answers: RequestHandler = {
  handleRequest(request: JsonRpcRequest): JsonRpcResponse {
    const result =
      request.method === 'server/discover'
        ? { resultType: 'complete', capabilities: { tools: {} }, _meta: {} }
        : { resultType: 'complete', content: [{ type: 'text', text: 'done' }] };
    return { jsonrpc: '2.0', id: request.id, result } as unknown as JsonRpcResponse;
  },
  headerParams: () => undefined,
};

/** A store that works until told to hang, then never answers again. */
class HangingStore extends MemoryStore {
  hanging = false;
  override get(key: string) {
    return this.hanging ? new Promise<never>(() => {}) : super.get(key);
  }
}

afterEach(() => {
  vi.useRealTimers();
});

describe('the 2025 bridge on a store that hangs', () => {
  it('answers -32603 naming the store at the bound, instead of holding the request open', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const store = new HangingStore();
    const bridge = new LegacyBridge(answers, {
      sessionKeys: [{ kid: 'k1', key: new Uint8Array(32).fill(7) }],
      logger: quiet,
      store,
      storeTimeoutMs: 3_000,
    });
    const principal = { subject: 'ada' };
    const { session } = await bridge.initialize(
      {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {} },
      },
      principal,
    );
    store.hanging = true;
    const answer = track(
      bridge.handle(
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x' } },
        session!,
        principal,
        {
          send: () => {},
          signal: new AbortController().signal,
        },
      ),
    );
    await vi.advanceTimersByTimeAsync(2_999);
    expect(answer.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    for (let turn = 0; turn < 100 && !answer.settled; turn++) await new Promise((next) => setImmediate(next));
    expect(answer.value).toMatchObject({
      error: {
        code: -32603,
        message: "Internal error: the 2025 bridge's session store did not answer within 3000 ms",
      },
    });
    await bridge.close();
  });
});
