// Consent bound to the effect: the person is shown the effect and says yes to it; the question is marked
// humanRequired so an agent's policy never answers it; a changed effect — between rounds or between the yes and
// the execution — is refused; a consent runs its effect once.
import { describe, expect, it } from 'vitest';
import { vms } from '../../examples/human-controls.js';
import { DevTokens, parseDevTokens } from '../../src/auth/index.js';
import { agentPolicyResolver } from '../../src/client/index.js';
import { parseInputRequired } from '../../src/client/input.js';
import { HumanControls } from '../../src/controls/index.js';
import { McpServer, text } from '../../src/server/index.js';
import { generateKeySpec } from '../../src/state/index.js';
import { MemoryStore } from '../../src/stores/index.js';
import { freePort } from '../helpers/free-port.js';
import { mcp } from '../helpers/mcp-http.js';
import { PEOPLE, textOf, useControls } from './fixture.js';

const VM = { memoryGb: 64, state: 'running', owner: 'bob' };

describe('consent bound to the effect (delete_vm)', () => {
  it('shows the effect with its facts, marked humanRequired consent; yes deletes, once', async () => {
    vms.set('prod-db-7', { ...VM });
    const f = await useControls();
    const first = await f.call('alice-token', 'delete_vm', { id: 'prod-db-7' });
    const q = first.result.inputRequests.consent;
    expect(q.params._meta['dev.mrtr/humanRequired']).toBe('consent');
    expect(q.params.message).toBe(
      'Delete VM prod-db-7?\n  tool: delete_vm\n  vm: prod-db-7\n  memoryGb: 64\n  state: running\n  owner: bob',
    );
    const done = await f.call(
      'alice-token',
      'delete_vm',
      { id: 'prod-db-7' },
      {
        requestState: first.result.requestState,
        inputResponses: { consent: { action: 'accept', content: { confirm: true } } },
      },
    );
    expect(textOf(done)).toBe('VM prod-db-7 deleted');
    expect(vms.has('prod-db-7')).toBe(false);
  });

  it('no is a clear refusal and nothing happens', async () => {
    vms.set('prod-db-7', { ...VM });
    const f = await useControls();
    const first = await f.call('alice-token', 'delete_vm', { id: 'prod-db-7' });
    const no = await f.call(
      'alice-token',
      'delete_vm',
      { id: 'prod-db-7' },
      {
        requestState: first.result.requestState,
        inputResponses: { consent: { action: 'accept', content: { confirm: false } } },
      },
    );
    expect(no.result.isError).toBe(true);
    expect(textOf(no)).toBe('declined by the user');
    expect(vms.has('prod-db-7')).toBe(true);
  });

  it('a VM that changed between the question and the yes is refused (time of check, time of use)', async () => {
    vms.set('prod-db-7', { ...VM });
    const f = await useControls();
    const first = await f.call('alice-token', 'delete_vm', { id: 'prod-db-7' });
    vms.set('prod-db-7', { ...VM, owner: 'carol' });
    const yes = await f.call(
      'alice-token',
      'delete_vm',
      { id: 'prod-db-7' },
      {
        requestState: first.result.requestState,
        inputResponses: { consent: { action: 'accept', content: { confirm: true } } },
      },
    );
    expect(yes.result.isError).toBe(true);
    expect(textOf(yes)).toContain('refused: the effect changed after you consented');
    expect(vms.has('prod-db-7')).toBe(true);
  });

  it('an agent policy resolver never answers step-up or approval questions (URL mode, humanRequired)', async () => {
    const f = await useControls();
    const agent = agentPolicyResolver({
      kinds: ['elicitation.url', 'elicitation.form'],
      rules: [{ answer: { action: 'accept' } }],
    });
    for (const [tool, args, key, why] of [
      ['request_access', { resource: 'r', reason: 'x' }, 'approval', 'approval'],
      ['show_recovery_codes', {}, 'step_up', 'second_factor'],
    ] as const) {
      const first = await f.call('alice-token', tool, args);
      const question = parseInputRequired(
        first.result,
        new Set(['elicitation.url', 'elicitation.form']) as never,
      ).questions[0]!;
      expect(question.key).toBe(key);
      expect(question.personRequired).toBe(why);
      expect(agent.accepts(question, {} as never)).toBe(false);
    }
  });

  it('an agent policy resolver never answers the consent question, whatever its rules say', () => {
    const agent = agentPolicyResolver({
      rules: [{ answer: { action: 'accept', content: { confirm: true } } }],
    });
    const asked = parseInputRequired(
      {
        resultType: 'input_required',
        inputRequests: {
          consent: {
            method: 'elicitation/create',
            params: {
              mode: 'form',
              message: 'Delete?',
              requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } } },
              _meta: { 'dev.mrtr/humanRequired': 'consent' },
            },
          },
        },
        requestState: 'x',
      } as never,
      new Set(['elicitation.form']) as never,
    );
    const question = asked.questions[0]!;
    expect(question.personRequired).toBe('consent');
    expect(agent.accepts(question, {} as never)).toBe(false);
  });
});

describe('consent at the point of execution', () => {
  const facts = { size: 'small' };
  let runs = 0;
  async function server() {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const store = new MemoryStore();
    const tokens = new DevTokens(parseDevTokens(PEOPLE));
    const { BearerAuth } = await import('../../src/auth/index.js');
    const s = new McpServer({
      name: 't',
      version: '1',
      stateKeys: generateKeySpec(),
      auth: new BearerAuth({ verifier: tokens, resource: `${origin}/mcp` }),
      signIn: { devTokens: tokens },
      replayStore: store,
      logger: { info() {}, warn() {}, error() {} } as never,
    });
    const controls = new HumanControls({ store }).attach(s);
    s.tool({ name: 'resize', description: 'x' }, async (_a, ctx) => {
      const consent = await controls.consent(ctx, { effect: { tool: 'resize', size: facts.size } });
      // Something changes the facts after the check at the top of this round and before the effect runs.
      if (ctx.round === 1 && facts.size === 'race') facts.size = 'huge';
      return consent.execute({ tool: 'resize', size: facts.size }, () => {
        runs++;
        return text(`resized to ${facts.size}`);
      });
    });
    s.tool({ name: 'twice', description: 'x' }, async (_a, ctx) => {
      const consent = await controls.consent(ctx, { effect: { tool: 'twice' } });
      await consent.execute({ tool: 'twice' }, () => 1);
      await consent.execute({ tool: 'twice' }, () => 2);
      return text('ran twice');
    });
    const endpoint = await s.http({ port }).listen();
    return { endpoint, store };
  }
  const call = (url: string, name: string, round: Record<string, unknown> = {}) =>
    mcp(
      url,
      'tools/call',
      { name, arguments: {}, ...round },
      { headers: { authorization: 'Bearer alice-token' } },
    );

  it('facts that change between the yes and the execution refuse the call; the effect does not run', async () => {
    facts.size = 'race';
    runs = 0;
    const { endpoint, store } = await server();
    try {
      const first = await call(endpoint.url, 'resize');
      const yes = await call(endpoint.url, 'resize', {
        requestState: first.response.result?.requestState,
        inputResponses: { consent: { action: 'accept', content: { confirm: true } } },
      });
      expect(yes.response.result?.isError).toBe(true);
      expect(JSON.stringify(yes.response.result?.content)).toContain('refused: the effect changed');
      expect(runs).toBe(0);
    } finally {
      await endpoint.close();
      await store.close();
    }
  });

  it('one execution per consent: the same final round sent again does not run the effect again', async () => {
    facts.size = 'small';
    runs = 0;
    const { endpoint, store } = await server();
    try {
      const first = await call(endpoint.url, 'resize');
      const round = {
        requestState: first.response.result?.requestState,
        inputResponses: { consent: { action: 'accept', content: { confirm: true } } },
      };
      const once = await call(endpoint.url, 'resize', round);
      expect(JSON.stringify(once.response.result?.content)).toContain('resized to small');
      await call(endpoint.url, 'resize', round);
      expect(runs).toBe(1);
      // A second execute() of one consent in a handler is a bug, reported as such.
      const t1 = await call(endpoint.url, 'twice');
      const t2 = await call(endpoint.url, 'twice', {
        requestState: t1.response.result?.requestState,
        inputResponses: { consent: { action: 'accept', content: { confirm: true } } },
      });
      expect(t2.response.error).toMatchObject({ code: -32603 });
    } finally {
      await endpoint.close();
      await store.close();
    }
  });
});
