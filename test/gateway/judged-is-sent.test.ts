// A gateway round resolves its tool once and prepares its arguments once: the policy judges the very arguments the
// upstream is sent, by construction (one preparation, carried), not because two preparations happen to agree.
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { normalizePathArguments } from '../../src/gateway/paths.js';
import { type ChangingUpstream, startChangingUpstream } from './fixtures/changing-upstream.js';
import { answering, type Loose, textOf, useGateway, YES } from './fixtures/gateway-under-test.js';

// The gateway's path preparation, watched: every call counted, and a test may make it stamp each result.
vi.mock('../../src/gateway/paths.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/gateway/paths.js')>();
  return { ...actual, normalizePathArguments: vi.fn(actual.normalizePathArguments) };
});
const prepare = vi.mocked(normalizePathArguments);

const PATH_SCHEMA = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
const RULES = `  - tools: ["up/read"]
    roles: [requester]
  - tools: ["up/write"]
    roles: [requester]
    require: [consent]
`;

async function setUp(): Promise<{ up: ChangingUpstream; g: Awaited<ReturnType<typeof useGateway>> }> {
  const up = await startChangingUpstream({
    read: { description: 'Read a file', inputSchema: PATH_SCHEMA },
    write: { description: 'Write a file', inputSchema: PATH_SCHEMA },
  });
  onTestFinished(() => up.close());
  const g = await useGateway({ upstreamUrl: up.url, rules: RULES });
  prepare.mockClear();
  return { up, g };
}

describe('a gateway round', () => {
  it('looks its tool up once, and prepares its arguments once', async () => {
    const { up, g } = await setUp();
    const route = vi.spyOn(g.gateway.catalog, 'route');
    const reply = await g.call('alice', 'up__read', { path: '/srv//share/./a.txt' });
    expect(textOf(reply)).toBe('read ran with {"path":"/srv/share/a.txt"}');
    expect(up.calls).toEqual([{ tool: 'read', args: { path: '/srv/share/a.txt' } }]);
    expect(route).toHaveBeenCalledTimes(1);
    expect(prepare).toHaveBeenCalledTimes(1);
  });

  it('of a call with consent: once per round, each round', async () => {
    const { up, g } = await setUp();
    const route = vi.spyOn(g.gateway.catalog, 'route');
    const args = { path: 'x/../report.txt' };
    const first = (await g.call('alice', 'up__write', args)).response.result as Loose;
    expect(first.resultType).toBe('input_required');
    expect(route).toHaveBeenCalledTimes(1);
    expect(prepare).toHaveBeenCalledTimes(1);
    const second = await g.call('alice', 'up__write', args, answering(first, YES));
    expect(textOf(second)).toBe('write ran with {"path":"report.txt"}');
    expect(route).toHaveBeenCalledTimes(2);
    expect(prepare).toHaveBeenCalledTimes(2);
    expect(up.callsOf('write')).toBe(1);
  });

  it('sends the upstream byte for byte what the policy judged, even from a preparation that never repeats itself', async () => {
    const { up, g } = await setUp();
    const actual = prepare.getMockImplementation()!;
    let n = 0;
    // Each preparation stamps its result: two preparations could never agree.
    prepare.mockImplementation((args, options) => {
      const prepared = actual(args, options);
      return { ...prepared, path: `${prepared.path}#${++n}` };
    });
    onTestFinished(() => {
      prepare.mockImplementation(actual);
    });
    const decide = vi.spyOn(g.gateway.policy, 'decide');
    const reply = await g.call('alice', 'up__read', { path: '/srv/a.txt' });
    expect(reply.response.result).toMatchObject({ content: [{ type: 'text' }] });
    expect(decide).toHaveBeenCalledTimes(1);
    const judged = decide.mock.calls[0]![2];
    expect(judged).toEqual({ path: '/srv/a.txt#1' });
    expect(up.calls).toHaveLength(1);
    expect(JSON.stringify(up.calls[0]!.args)).toBe(JSON.stringify(judged));
  });

  it('with a NUL in a path is a tool error naming it; neither the policy nor the upstream hears of it', async () => {
    const { up, g } = await setUp();
    const decide = vi.spyOn(g.gateway.policy, 'decide');
    const reply = await g.call('alice', 'up__read', { path: '/srv/share/public\0/../secret' });
    expect(reply.response.result).toMatchObject({
      isError: true,
      content: [
        { type: 'text', text: 'Invalid arguments: argument "path" contains a NUL character; no path may' },
      ],
    });
    expect(decide).not.toHaveBeenCalled();
    expect(up.calls).toEqual([]);
  });
});
