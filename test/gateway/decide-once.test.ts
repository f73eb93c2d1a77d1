// A gateway call is decided once: the one pass over the rules that found its tool for this caller (visibility) is
// the pass its decision is made on, and that decision is the one the guard acts on and the audit note records.
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { compilePolicy } from '../../src/gateway/policy/index.js';
import { startChangingUpstream } from './fixtures/changing-upstream.js';
import { answering, type Loose, textOf, useGateway, YES } from './fixtures/gateway-under-test.js';

const SCHEMA = { type: 'object', properties: { path: { type: 'string' } } };
const RULES = `  - tools: ["up/read"]
    roles: [requester]
  - tools: ["up/write"]
    roles: [requester]
    require: [consent]
`;

const DENY_ALL = compilePolicy([{ tools: ['up/*'], deny: true, reason: 'nobody reads now' }], {
  file: 'new.yaml',
});

async function setUp() {
  const up = await startChangingUpstream({
    read: { description: 'Read a file', inputSchema: SCHEMA },
    write: { description: 'Write a file', inputSchema: SCHEMA },
  });
  onTestFinished(() => up.close());
  const g = await useGateway({ upstreamUrl: up.url, rules: RULES });
  const policy = g.gateway.policy;
  return {
    g,
    screen: vi.spyOn(policy, 'screen'),
    visible: vi.spyOn(policy, 'visible'),
    decide: vi.spyOn(policy, 'decide'),
  };
}

describe('a gateway call', () => {
  it('walks the rules once and decides once', async () => {
    const { g, screen, visible, decide } = await setUp();
    const reply = await g.call('alice', 'up__read', { path: 'a' });
    expect(textOf(reply)).toBe('read ran with {"path":"a"}');
    expect(screen).toHaveBeenCalledTimes(1);
    expect(visible).not.toHaveBeenCalled();
    expect(decide).toHaveBeenCalledTimes(1);
    // Decided on the very pass that found the tool.
    expect(decide.mock.calls[0]![3]).toBe(screen.mock.results[0]!.value);
  });

  it('once per round, each round, and the audit note holds that decision', async () => {
    const { g, screen, visible, decide } = await setUp();
    const first = (await g.call('alice', 'up__write', { path: 'a' })).response.result as Loose;
    expect(first.resultType).toBe('input_required');
    await g.call('alice', 'up__write', { path: 'a' }, answering(first, YES));
    expect(screen).toHaveBeenCalledTimes(2);
    expect(visible).not.toHaveBeenCalled();
    expect(decide).toHaveBeenCalledTimes(2);
    const decided = decide.mock.results.map((r) => r.value);
    const notes = g.events.slice(-2).map((e) => (e as Loose).notes.gateway.decision);
    expect(notes).toEqual(decided.map(({ rules, require }) => ({ allow: true, rules, require })));
  });

  it('after a reload between finding the tool and deciding, is decided by the new policy', async () => {
    const { g } = await setUp();
    const catalog = g.gateway.catalog;
    const route = catalog.route.bind(catalog);
    // The reload lands just after the request found its tool (and was screened under the old policy).
    vi.spyOn(catalog, 'route').mockImplementation(async (name, caller) => {
      const found = await route(name, caller);
      g.gateway.reload({ ...g.gateway.config, policy: DENY_ALL });
      return found;
    });
    const reply = await g.call('alice', 'up__read', { path: 'a' });
    expect(reply.response.result).toMatchObject({ isError: true });
    expect(textOf(reply)).toBe('nobody reads now');
  });
});
