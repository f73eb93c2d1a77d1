// A real 2026 client waiting for a person: the official TypeScript SDK Client in 2026 mode answers the approval's
// and the step-up's links with accept and retries at once, up to its own round cap (as the Python SDK does). The
// control holds each retry while the check is pending, so the person acts during a hold and the call completes
// well within the cap. The people act only once the control reports the hold (its `waiting` event): without the
// hold the SDK would spend its rounds in milliseconds and end the call before anyone could act.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { TOTP } from 'otpauth';
import { describe, expect, it, onTestFinished } from 'vitest';
import { enrolTotp } from '../../src/controls/index.js';
import { getPage, hiddenFields, postForm, sessionCookie } from '../helpers/page-sessions.js';
import { observedControls } from './observed.js';

type Observed = Awaited<ReturnType<typeof observedControls>>;

/** The SDK Client as an application makes it in 2026 mode, accepting every link, with its default round cap. */
async function sdkClient(s: Observed) {
  const client = new Client(
    { name: 'sdk-2026', version: '1.0.0' },
    { capabilities: { elicitation: { form: {}, url: {} } }, versionNegotiation: { mode: 'auto' } },
  );
  const asked: string[] = [];
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(String((request.params as { mode?: string }).mode));
    return { action: 'accept' } as never;
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${s.origin}/mcp`), {
      requestInit: { headers: { authorization: 'Bearer alice-token' } },
    }),
  );
  onTestFinished(() => client.close());
  return { client, asked };
}

const textOf = (r: { content?: unknown }) => (r.content as Array<{ text: string }>)[0]!.text;

/** The control's first hold, or a failure naming how the call ended if it ends first (it must not, while pending). */
function firstHold<T>(held: Promise<T>, call: Promise<unknown>): Promise<T> {
  const endedFirst = call.then(
    (r) => Promise.reject(new Error(`the call ended before any hold: ${JSON.stringify(r)}`)),
    (e: unknown) => Promise.reject(new Error(`the call failed before any hold: ${String(e)}`)),
  );
  return Promise.race([held, endedFirst]);
}

describe('the official SDK Client in 2026 mode waits for a person', () => {
  it('approval: its retry is held until bob approves, and the call completes within its round cap', async () => {
    const s = await observedControls({ pendingWaitMs: 60_000 });
    const { client, asked } = await sdkClient(s);
    const held = s.next((e) => e.control === 'approval' && e.action === 'waiting');
    const call = client.callTool({ name: 'deploy', arguments: {} });
    const { id } = await firstHold(held, call);
    const vote = await fetch(`${s.origin}/mrtr/approvals/${id}`, {
      method: 'POST',
      headers: { authorization: 'Bearer bob-token', 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve', comment: 'ok' }),
    });
    expect(vote.status).toBe(200);
    expect(textOf(await call)).toBe('deployed');
    expect(asked).toEqual(['url']);
    expect(s.rounds.map((r) => r.outcome)).toEqual(['input_required', 'complete']);
  });

  it('step-up: its retry is held until alice enters her code on the page, then the call completes', async () => {
    const s = await observedControls({ pendingWaitMs: 60_000 });
    const { secret } = enrolTotp(s.totpFile, 'alice');
    const { client, asked } = await sdkClient(s);
    const held = s.next((e) => e.control === 'step_up' && e.action === 'waiting');
    const call = client.callTool({ name: 'recovery', arguments: {} });
    const { id } = await firstHold(held, call);
    const url = `${s.origin}/mrtr/step-up/${id}`;
    const alice = await sessionCookie(s.origin, 'alice-token');
    const { csrf } = hiddenFields((await getPage(url, alice)).html);
    const code = new TOTP({ secret, algorithm: 'SHA1', digits: 6, period: 30 }).generate();
    expect((await postForm(url, alice, { csrf: csrf!, code }, s.origin)).html).toContain('Confirmed');
    expect(textOf(await call)).toBe('codes');
    expect(asked).toEqual(['url']);
  });
});
