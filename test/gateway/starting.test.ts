// Upstreams start with the gateway, not at the first call: one slow to come up (npx fetching the filesystem
// server) is already being listed when callers connect, and until it answers a listing says it is starting and a
// call to its tools gets a clear error with a time to retry. The upstream answers on the test's signal, never a sleep.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChangingUpstream, startChangingUpstream } from './fixtures/changing-upstream.js';
import { type Loose, textOf, useGateway } from './fixtures/gateway-under-test.js';

const RULES = `  - name: anyone reads
    tools: ["up/read"]
    roles: ["*"]
`;

let up: ChangingUpstream;
beforeAll(async () => {
  up = await startChangingUpstream({ read: { description: 'Read a file' } });
});
afterAll(() => up?.close());

describe('an upstream that starts slowly', () => {
  it('is started with the gateway; callers are told it is starting, then hear of its tools', async () => {
    const hold = up.holdListings();
    const g = await useGateway({ upstreamUrl: up.url, rules: RULES, whileUpstreamsStart: true });
    // Nobody has called yet: the gateway itself started listing the upstream.
    await hold.asked;

    const listed = (await g.request('alice', 'tools/list')).response.result as Loose;
    expect(listed.tools).toEqual([]);
    expect(listed.ttlMs).toBe(0);
    expect(listed._meta).toMatchObject({
      'dev.mrtr/upstreamsStarting': ['up'],
      'dev.mrtr/notice':
        'up is still starting: its tools are not listed yet; notifications/tools/list_changed follows when they are',
    });

    const call = await g.call('alice', 'up__read', { path: '/srv/a' });
    expect(call.response.error).toEqual({
      code: -32603,
      message: 'Upstream up is still starting: its tools are not available yet; try again in 2 s',
      data: { upstream: 'up', retryAfterSeconds: 2 },
    });
    expect(up.callsOf('read')).toBe(0);
    // A tool the caller could never see is unknown, starting or not.
    const hidden = (await g.call('alice', 'up__write', {})).response as Loose;
    const nowhere = (await g.call('alice', 'nowhere__write', {})).response as Loose;
    expect(JSON.stringify(hidden.error).replaceAll('up__write', 'X')).toBe(
      JSON.stringify(nowhere.error).replaceAll('nowhere__write', 'X'),
    );

    hold.release();
    await g.gateway.started;
    const after = (await g.request('alice', 'tools/list')).response.result as Loose;
    expect(after.tools.map((t: Loose) => t.name)).toEqual(['up__read']);
    expect(after._meta?.['dev.mrtr/upstreamsStarting']).toBeUndefined();
    expect(after._meta?.['dev.mrtr/notice']).toBeUndefined();
    expect(after.ttlMs).toBeGreaterThan(0);
    expect(textOf(await g.call('alice', 'up__read', { path: '/srv/a' }))).toBe(
      'read ran with {"path":"/srv/a"}',
    );
  });
});
