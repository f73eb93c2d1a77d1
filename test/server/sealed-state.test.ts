// requestState sealed by the default codec, end to end over HTTP: a fleet shares a keyring, every rejection is the
// same -32602 on the wire, and the precise reason reaches the log without the token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpEndpoint, Logger } from '../../src/server/index.js';
import { generateKeySpec } from '../../src/state/index.js';
import { approvalServer } from '../fixtures/approval-server.js';
import { accept, mcp } from '../helpers/mcp-http.js';

const keys = generateKeySpec({ kid: 'fleet1' });
const logged: Array<Record<string, unknown>> = [];
const capture: Logger = { info() {}, warn: (fields) => void logged.push(fields), error() {} };
const byUser = (req: { headers: Record<string, string | string[] | undefined> }) => {
  const user = req.headers['x-user'];
  return typeof user === 'string' ? { subject: user, issuer: 'https://idp.example' } : undefined;
};

let a: HttpEndpoint;
let b: HttpEndpoint;
let other: HttpEndpoint;
beforeAll(async () => {
  [a, b, other] = await Promise.all([
    approvalServer({ stateKeys: keys, logger: capture }).listen({ port: 0, authenticate: byUser }),
    approvalServer({ stateKeys: keys, logger: capture }).listen({ port: 0, authenticate: byUser }),
    approvalServer({ stateKeys: keys, audience: 'another-server', logger: capture }).listen({
      port: 0,
      authenticate: byUser,
    }),
  ]);
});
afterAll(() => Promise.all([a.close(), b.close(), other.close()]));

const call = (url: string, extra: Record<string, unknown>, user = 'alice', change = 'c1') =>
  mcp(
    url,
    'tools/call',
    { name: 'approve_change', arguments: { change }, ...extra },
    { headers: { 'x-user': user } },
  );
const approve = { confirm: accept({ approve: true }) };

async function mint(user = 'alice'): Promise<string> {
  const r1 = await call(a.url, {}, user);
  return r1.response.result?.requestState as string;
}

describe('sealed requestState across a fleet', () => {
  it('lets any instance with the shared keyring take the next round', async () => {
    const state = await mint();
    const r2 = await call(b.url, { requestState: state, inputResponses: approve });
    expect(r2.response.result?.content).toEqual([{ type: 'text', text: 'approved c1' }]);
  });

  it('keeps the payload unreadable: the token does not contain the question or the tool name', async () => {
    const state = await mint();
    const decoded = Buffer.from(state, 'base64url').toString('latin1');
    expect(decoded).not.toContain('confirm');
    expect(decoded).not.toContain('approve_change');
  });

  const rejections: Array<[string, () => ReturnType<typeof call>, string]> = [
    [
      'another principal',
      async () => call(b.url, { requestState: await mint(), inputResponses: approve }, 'mallory'),
      'wrong_principal',
    ],
    [
      'changed arguments',
      async () => call(b.url, { requestState: await mint(), inputResponses: approve }, 'alice', 'c2'),
      'wrong_request',
    ],
    [
      'another audience',
      async () => call(other.url, { requestState: await mint(), inputResponses: approve }),
      'wrong_audience',
    ],
    [
      'an anonymous caller',
      async () =>
        mcp(b.url, 'tools/call', {
          name: 'approve_change',
          arguments: { change: 'c1' },
          requestState: await mint(),
          inputResponses: approve,
        }),
      'wrong_principal',
    ],
    [
      'an oversized token',
      async () => call(b.url, { requestState: 'A'.repeat(9000), inputResponses: approve }),
      'too_large',
    ],
    [
      'garbage',
      async () => call(b.url, { requestState: 'not a token!', inputResponses: approve }),
      'malformed',
    ],
  ];
  for (const [what, send, reason] of rejections) {
    it(`rejects a state replayed by ${what} with the fixed -32602 and logs "${reason}"`, async () => {
      logged.length = 0;
      const reply = await send();
      expect(reply.status).toBe(400);
      expect(reply.response.error).toEqual({ code: -32602, message: 'Invalid params: invalid requestState' });
      expect(logged.map((l) => l.reason)).toEqual([reason]);
      for (const fields of logged) expect(JSON.stringify(fields).length).toBeLessThan(300);
    });
  }

  it('never logs the token itself', async () => {
    logged.length = 0;
    const state = await mint();
    await call(b.url, { requestState: state, inputResponses: approve }, 'mallory');
    expect(JSON.stringify(logged)).not.toContain(state.slice(0, 40));
  });
});
