// Any instance can serve: two `mrtr serve` processes share one SQLite store and one keyring. Alice asks on the
// first, Bob approves on the second's inbox API, Alice's retry lands on the second and completes.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { mcp } from '../helpers/mcp-http.js';
import { serveCli } from '../helpers/serve-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'mrtr-controls-fleet-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const KEYS = `k1:${Buffer.alloc(32, 3).toString('base64url')}`;
const tokens = join(dir, 'tokens.json');
writeFileSync(
  tokens,
  JSON.stringify({
    'alice-dev-token': { sub: 'alice', roles: [] },
    'bob-dev-token': { sub: 'bob', roles: ['approver'] },
  }),
);

// biome-ignore lint/suspicious/noExplicitAny: replies are read as loose JSON, checked by the expectations
type Loose = any;

describe('approvals on a shared store', () => {
  it('a request made on one instance is decided and redeemed on another', async () => {
    const store = `sqlite:${join(dir, 'shared.db')}`;
    const start = async () => {
      const port = await freePort();
      return serveCli([
        '--state-keys',
        KEYS,
        '--fixture',
        'example',
        '--port',
        String(port),
        '--tokens',
        tokens,
        '--store',
        store,
      ]);
    };
    const a = await start();
    const b = await start();
    const alice = { headers: { authorization: 'Bearer alice-dev-token' } };
    const call = { name: 'request_access', arguments: { resource: 'ledger', reason: 'month end' } };
    const first = (await mcp(a.url, 'tools/call', call, alice)).response.result as Record<string, Loose>;
    const id = new URL(first.inputRequests.approval.params.url).pathname.split('/')[3];
    const originB = new URL(b.url).origin;
    const listed = (await (
      await fetch(`${originB}/mrtr/approvals`, { headers: { authorization: 'Bearer bob-dev-token' } })
    ).json()) as { approvals: Array<{ id: string }> };
    expect(listed.approvals.map((x) => x.id)).toEqual([id]);
    const vote = await fetch(`${originB}/mrtr/approvals/${id}`, {
      method: 'POST',
      headers: { authorization: 'Bearer bob-dev-token', 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve', comment: 'month end' }),
    });
    expect(vote.status).toBe(200);
    const done = (
      await mcp(
        b.url,
        'tools/call',
        { ...call, requestState: first.requestState, inputResponses: { approval: { action: 'accept' } } },
        alice,
      )
    ).response.result as Record<string, Loose>;
    expect(done.content[0].text).toBe('Access to ledger granted to alice (approved by bob)');
  });
});
