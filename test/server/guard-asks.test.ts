// Guards that ask: a round guard's `ask` puts its own questions before the handler's — sealed, journaled, checked by
// kind and observed like the handler's — so a policy can inject a consent round the tool's code knows nothing of.
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { FlowEnded } from '../../src/flow/index.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../../src/protocol/index.js';
import {
  inputRequired,
  McpServer,
  type RoundEvent,
  type RoundGuard,
  RoundRefused,
  text,
} from '../../src/server/index.js';
import { Keyring } from '../../src/state/index.js';
import { META } from '../helpers/mcp-http.js';
import { deferred } from '../helpers/signals.js';

const quiet = { info() {}, warn() {}, error() {} };
const env = { principal: undefined, signal: new AbortController().signal, notify() {} };
const KEYS = Keyring.fromSpec(`k1:${Buffer.alloc(32, 9).toString('base64url')}`);

/** A policy: every call to a tool named `delete_*` needs the caller's yes, asked by the guard, not by the tool. */
const consentPolicy = (seen: string[] = []): RoundGuard => ({
  name: 'consent-policy',
  async ask(round, ctx) {
    if (!round.target.startsWith('delete_')) return;
    seen.push(`ask round ${round.round}`);
    const yes = await ctx.ask.confirm(`Really ${round.target} ${JSON.stringify(round.arguments)}?`, {
      key: 'policy_consent',
      humanRequired: 'consent',
    });
    if (!yes) return { content: [{ type: 'text', text: 'refused by policy: no consent' }], isError: true };
  },
});

function server(guards: RoundGuard[], runs: string[], events: RoundEvent[] = []) {
  return new McpServer({
    name: 'asks',
    version: '1',
    stateKeys: KEYS,
    logger: quiet,
    guards,
    observers: [{ observe: (e) => void events.push(e) }],
  })
    .tool(
      { name: 'delete_file', description: 'Deletes', input: z.object({ path: z.string() }) },
      ({ path }) => {
        runs.push(`deleted ${path}`);
        return text(`deleted ${path}`);
      },
    )
    .tool({ name: 'delete_twice', description: 'Asks its own question too' }, async (_a, { ask }) => {
      const { why } = await ask.form('Why?', z.object({ why: z.string() }), { key: 'why' });
      runs.push(`why ${why}`);
      return text(`because ${why}`);
    })
    .tool({ name: 'delete_by_hand', description: 'Asks with inputRequired()' }, (_a, ctx) => {
      const answer = ctx.inputResponses.note as { content?: { note?: string } } | undefined;
      if (!answer)
        return inputRequired({
          inputRequests: {
            note: {
              method: 'elicitation/create',
              params: {
                mode: 'form',
                message: 'Note?',
                requestedSchema: { type: 'object', properties: { note: { type: 'string' } } },
              },
            },
          },
          state: { by: 'hand' },
        });
      runs.push(`note ${answer.content?.note} state ${JSON.stringify(ctx.state)}`);
      return text('noted');
    })
    .tool({ name: 'list_files', description: 'Needs no consent' }, () => {
      runs.push('listed');
      return text('a b');
    }).core;
}

const CAPS = { elicitation: { form: {} } };
const call = (
  name: string,
  extra: Record<string, unknown> = {},
  args: object = { path: '/x' },
): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: {
    _meta: { ...META, 'io.modelcontextprotocol/clientCapabilities': CAPS },
    name,
    arguments: args,
    ...extra,
  },
});
type Answered = {
  result: Record<string, unknown> & { requestState?: string; inputRequests?: Record<string, unknown> };
};
const result = (r: JsonRpcResponse) => (r as unknown as Answered).result;
const confirm = (ok: boolean) => ({ action: 'accept', content: { confirm: ok } });

describe('a guard that asks', () => {
  it("asks its question before the tool runs, and the tool runs once it has the caller's yes", async () => {
    const runs: string[] = [];
    const events: RoundEvent[] = [];
    const core = server([consentPolicy()], runs, events);
    const first = result(await core.handle(call('delete_file'), env));
    expect(first.resultType).toBe('input_required');
    expect(Object.keys(first.inputRequests ?? {})).toEqual(['policy_consent']);
    expect(JSON.stringify(first.inputRequests)).toContain('Really delete_file {\\"path\\":\\"/x\\"}?');
    expect(runs).toEqual([]);
    const second = result(
      await core.handle(
        call('delete_file', {
          requestState: first.requestState,
          inputResponses: { policy_consent: confirm(true) },
        }),
        env,
      ),
    );
    expect(second).toMatchObject({ resultType: 'complete', content: [{ text: 'deleted /x' }] });
    expect(runs).toEqual(['deleted /x']);
    // Observed like any round: the guard's question in the first event, its answer in the second.
    expect(events.map((e) => e.outcome)).toEqual(['input_required', 'complete']);
    expect(Object.keys(events[0]?.inputRequests ?? {})).toEqual(['policy_consent']);
    expect(events[1]?.inputResponses).toHaveProperty('policy_consent');
  });

  it("answers in the tool's place when the caller says no: the tool never runs, the guard is named", async () => {
    const runs: string[] = [];
    const events: RoundEvent[] = [];
    const core = server([consentPolicy()], runs, events);
    const first = result(await core.handle(call('delete_file'), env));
    const second = result(
      await core.handle(
        call('delete_file', {
          requestState: first.requestState,
          inputResponses: { policy_consent: confirm(false) },
        }),
        env,
      ),
    );
    expect(second).toMatchObject({
      resultType: 'complete',
      isError: true,
      content: [{ text: 'refused by policy: no consent' }],
    });
    expect(runs).toEqual([]);
    expect(events[1]).toMatchObject({ outcome: 'tool_error', decidedBy: 'consent-policy' });
  });

  it('binds its question to the arguments: a yes cannot be carried over to other arguments', async () => {
    const runs: string[] = [];
    const core = server([consentPolicy()], runs);
    const first = result(await core.handle(call('delete_file'), env));
    const moved = await core.handle(
      call(
        'delete_file',
        { requestState: first.requestState, inputResponses: { policy_consent: confirm(true) } },
        { path: '/etc/passwd' },
      ),
      env,
    );
    expect(moved).toMatchObject({ error: { code: -32602 } });
    expect(runs).toEqual([]);
  });

  it("puts its questions before the tool's own; the tool's follow in the next round, the guard is not asked again", async () => {
    const runs: string[] = [];
    const seen: string[] = [];
    const core = server([consentPolicy(seen)], runs);
    const first = result(await core.handle(call('delete_twice'), env));
    expect(Object.keys(first.inputRequests ?? {})).toEqual(['policy_consent']);
    const second = result(
      await core.handle(
        call('delete_twice', {
          requestState: first.requestState,
          inputResponses: { policy_consent: confirm(true) },
        }),
        env,
      ),
    );
    expect(Object.keys(second.inputRequests ?? {})).toEqual(['why']);
    const third = result(
      await core.handle(
        call('delete_twice', {
          requestState: second.requestState,
          inputResponses: { why: { action: 'accept', content: { why: 'cleanup' } } },
        }),
        env,
      ),
    );
    expect(third).toMatchObject({ resultType: 'complete', content: [{ text: 'because cleanup' }] });
    expect(runs).toEqual(['why cleanup']);
    // The guard re-runs each round (as a handler does) but its answer comes from the sealed journal.
    expect(seen).toEqual(['ask round 0', 'ask round 1', 'ask round 2']);
  });

  it("checks the guard's answer by kind: a malformed answer is refused, the tool does not run", async () => {
    const runs: string[] = [];
    const core = server([consentPolicy()], runs);
    const first = result(await core.handle(call('delete_file'), env));
    const bad = await core.handle(
      call('delete_file', {
        requestState: first.requestState,
        inputResponses: { policy_consent: { action: 'maybe' } },
      }),
      env,
    );
    expect(bad).toMatchObject({
      error: { code: -32602, message: expect.stringContaining('policy_consent') },
    });
    expect(runs).toEqual([]);
  });

  it('leaves a tool that asks by hand (inputRequired) working: its state and the guard journal travel together', async () => {
    const runs: string[] = [];
    const core = server([consentPolicy()], runs);
    const first = result(await core.handle(call('delete_by_hand'), env));
    const second = result(
      await core.handle(
        call('delete_by_hand', {
          requestState: first.requestState,
          inputResponses: { policy_consent: confirm(true) },
        }),
        env,
      ),
    );
    expect(Object.keys(second.inputRequests ?? {})).toEqual(['note']);
    const third = result(
      await core.handle(
        call('delete_by_hand', {
          requestState: second.requestState,
          inputResponses: { note: { action: 'accept', content: { note: 'ok' } } },
        }),
        env,
      ),
    );
    expect(third).toMatchObject({ resultType: 'complete' });
    expect(runs).toEqual(['note ok state {"by":"hand"}']);
  });

  it('does not ask where its policy has nothing to ask: the tool runs on the first round', async () => {
    const runs: string[] = [];
    const core = server([consentPolicy()], runs);
    expect(result(await core.handle(call('list_files', {}, {}), env))).toMatchObject({
      resultType: 'complete',
    });
    expect(runs).toEqual(['listed']);
  });

  it('may refuse from its ask: the refusal is sent, named in the event, and told to every guard', async () => {
    const runs: string[] = [];
    const events: RoundEvent[] = [];
    const told: string[] = [];
    const refuser: RoundGuard = {
      name: 'refuser',
      ask() {
        throw new RoundRefused('policy_denied', { code: -32600, message: 'Denied by policy' });
      },
      refused: (_round, reason) => void told.push(reason),
    };
    const core = server([refuser], runs, events);
    expect(await core.handle(call('delete_file'), env)).toMatchObject({
      error: { code: -32600, message: 'Denied by policy' },
    });
    expect(runs).toEqual([]);
    expect(events[0]).toMatchObject({ outcome: 'refused', reason: 'policy_denied', decidedBy: 'refuser' });
    expect(told).toEqual(['policy_denied']);
  });

  it('may end the call as a decline (FlowEnded): a tool error the model can read', async () => {
    const runs: string[] = [];
    const ender: RoundGuard = {
      name: 'ender',
      ask() {
        throw new FlowEnded('declined by policy', 'declined');
      },
    };
    const core = server([ender], runs);
    expect(result(await core.handle(call('delete_file'), env))).toMatchObject({
      isError: true,
      content: [{ text: 'declined by policy' }],
    });
    expect(runs).toEqual([]);
  });

  it('keeps the tool from starting once the round was answered while a guard was still deciding', async () => {
    vi.useFakeTimers();
    try {
      const runs: string[] = [];
      const lookup = deferred<void>();
      const slow: RoundGuard = {
        name: 'slow-lookup',
        ask: () => lookup.promise, // a store that takes its time, asking nothing
      };
      const core = new McpServer({
        name: 'slow',
        version: '1',
        stateKeys: KEYS,
        logger: quiet,
        guards: [slow],
      }).tool({ name: 'pay', description: 'Pays', timeoutMs: 100 }, () => {
        runs.push('paid');
        return text('paid');
      }).core;
      const answered = core.handle(call('pay', {}, {}), env);
      await vi.advanceTimersByTimeAsync(100);
      expect(result(await answered)).toMatchObject({
        isError: true,
        content: [{ text: 'pay did not finish within 100 ms' }],
      });
      lookup.resolve();
      await vi.runAllTimersAsync();
      expect(runs).toEqual([]);
    } finally {
      vi.useRealTimers();
    }
  });
});
