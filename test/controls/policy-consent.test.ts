// A policy that injects consent bound to the effect: a round guard's `ask` calls HumanControls.consent with the
// guard's ctx, so a tool that knows nothing of consent is behind a yes to exactly what it will do.
import { describe, expect, it } from 'vitest';
import { HumanControls } from '../../src/controls/index.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../../src/protocol/index.js';
import { McpServer, type RoundGuard, text } from '../../src/server/index.js';
import { Keyring } from '../../src/state/index.js';
import { MemoryStore } from '../../src/stores/index.js';
import { META } from '../helpers/mcp-http.js';

const quiet = { info() {}, warn() {}, error() {} };
const env = { principal: { subject: 'alice' }, signal: new AbortController().signal, notify() {} };
const keys = Keyring.fromSpec(`k1:${Buffer.alloc(32, 3).toString('base64url')}`);

/** The facts the policy reads now, each round: who owns the bucket. */
const owners = new Map<string, string>();

function setUp() {
  const deleted: string[] = [];
  // The policy needs the controls, and the controls attach to the server the policy guards.
  let controls: HumanControls | undefined;
  const policy: RoundGuard = {
    name: 'consent-for-deletes',
    async ask(round, ctx) {
      if (round.target !== 'delete_bucket') return;
      const name = String((round.arguments as { name?: unknown }).name);
      await controls?.consent(ctx, {
        effect: { tool: round.target, bucket: name, owner: owners.get(name) ?? null },
        message: `Delete bucket ${name}?`,
      });
    },
  };
  const guarded = new McpServer({
    name: 'policy',
    version: '1',
    stateKeys: keys,
    logger: quiet,
    guards: [policy],
  });
  controls = new HumanControls({ store: new MemoryStore() }).attach(guarded);
  guarded.tool({ name: 'delete_bucket', description: 'Deletes a bucket' }, (args) => {
    deleted.push(String((args as { name?: unknown }).name));
    return text('deleted');
  });
  return { core: guarded.core, deleted };
}

const call = (extra: Record<string, unknown> = {}): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: {
    _meta: { ...META, 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } },
    name: 'delete_bucket',
    arguments: { name: 'logs' },
    ...extra,
  },
});
// biome-ignore lint/suspicious/noExplicitAny: replies are read as loose JSON, checked by the expectations
const result = (r: JsonRpcResponse): any => (r as unknown as { result: unknown }).result;
const yes = { consent: { action: 'accept', content: { confirm: true } } };

describe('a policy guard that asks consent bound to the effect', () => {
  it('shows the effect, marked humanRequired; the tool runs on yes', async () => {
    owners.set('logs', 'bob');
    const { core, deleted } = setUp();
    const first = result(await core.handle(call(), env));
    const q = first.inputRequests.consent;
    expect(q.params._meta['dev.mrtr/humanRequired']).toBe('consent');
    expect(q.params.message).toBe('Delete bucket logs?\n  tool: delete_bucket\n  bucket: logs\n  owner: bob');
    expect(deleted).toEqual([]);
    const done = result(
      await core.handle(call({ requestState: first.requestState, inputResponses: yes }), env),
    );
    expect(done).toMatchObject({ resultType: 'complete', content: [{ text: 'deleted' }] });
    expect(deleted).toEqual(['logs']);
  });

  it('refuses when the effect changed between the question and the yes; the tool does not run', async () => {
    owners.set('logs', 'bob');
    const { core, deleted } = setUp();
    const first = result(await core.handle(call(), env));
    owners.set('logs', 'carol');
    const changed = result(
      await core.handle(call({ requestState: first.requestState, inputResponses: yes }), env),
    );
    expect(changed).toMatchObject({
      isError: true,
      content: [{ text: expect.stringContaining('changed after you consented') }],
    });
    expect(deleted).toEqual([]);
  });
});
