// Issue 37, item 7, through a real client: the official TypeScript SDK Client in 2026 mode (no tasks) calls the
// workflows server's grant_role (a 5 s handler deadline). It answers each link with accept at once, then its person
// takes 20 s for the second factor and the approver 12 s to decide. Each wait is held off the handler's clock, so
// the call completes instead of ending with "grant_role did not finish within 5000 ms". Time is fake; the people
// act once the control reports the hold (its `waiting` event).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { workflowsServer } from '../../examples/workflows/index.js';
import { BearerAuth, DevTokens, parseDevTokens } from '../../src/auth/index.js';
import type { ControlEvent } from '../../src/controls/index.js';
import { stepUpKey } from '../../src/controls/step-up.js';
import { generateKeySpec } from '../../src/state/index.js';
import { MemoryStore } from '../../src/stores/index.js';
import { freePort } from '../helpers/free-port.js';
import { TOKENS_FILE } from './workflows-server.js';

const quiet = { info() {}, warn() {}, error() {} };
const HOLD_MS = 20_000;

afterEach(() => {
  vi.useRealTimers();
});

async function workflowsWithSdkClient() {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'mrtr-wf-held-'));
  const store = new MemoryStore();
  const tokens = new DevTokens(parseDevTokens(JSON.parse(readFileSync(TOKENS_FILE, 'utf8'))));
  const listeners: Array<(e: ControlEvent) => void> = [];
  const server = workflowsServer({
    dataDir,
    stateKeys: generateKeySpec(),
    auth: new BearerAuth({ verifier: tokens, resource: `${origin}/mcp` }),
    signIn: { devTokens: tokens },
    logger: quiet as never,
    controls: {
      store,
      onEvent: (e) => {
        for (const l of listeners) l(e);
      },
    },
  });
  const endpoint = await server.http({ port }).listen();
  const client = new Client(
    { name: 'sdk-2026', version: '1.0.0' },
    { capabilities: { elicitation: { form: {}, url: {} } }, versionNegotiation: { mode: 'auto' } },
  );
  const asked: string[] = [];
  client.setRequestHandler('elicitation/create', async (request) => {
    const mode = String((request.params as { mode?: string }).mode);
    asked.push(mode);
    // The consent is a yes/no form; each link is accepted at once, before the person is done.
    return (
      mode === 'url' ? { action: 'accept' } : { action: 'accept', content: { confirm: true } }
    ) as never;
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), {
      requestInit: { headers: { authorization: 'Bearer alice-dev-token' } },
    }),
  );
  onTestFinished(async () => {
    vi.useRealTimers();
    await client.close();
    await endpoint.close();
    server.close();
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return {
    client,
    asked,
    store,
    origin,
    /** Resolves at the first control event `match` accepts (from now on). */
    next: (match: (e: ControlEvent) => boolean) =>
      new Promise<ControlEvent>((resolve) => listeners.push((e) => match(e) && resolve(e))),
  };
}

/** The control's hold, or a failure naming how the call ended if it ends first (it must not, while pending). */
function holdOf<T>(held: Promise<T>, call: Promise<unknown>): Promise<T> {
  const endedFirst = call.then(
    (r) => Promise.reject(new Error(`the call ended before the hold: ${JSON.stringify(r)}`)),
    (e: unknown) => Promise.reject(new Error(`the call failed before the hold: ${String(e)}`)),
  );
  return Promise.race([held, endedFirst]);
}

describe('the official SDK Client in 2026 mode on the workflows server (5 s handler deadline)', () => {
  it('grant_role: accept at once, the second factor after 20 s, the approval after 12 s: granted', async () => {
    const s = await workflowsWithSdkClient();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const stepUpHeld = s.next((e) => e.control === 'step_up' && e.action === 'waiting');
    const call = s.client.callTool({ name: 'grant_role', arguments: { subject: 'carol', role: 'on-call' } });
    // How the call ended, if it has: it must not end while a person is still at it.
    let ended: unknown;
    call.then(
      (r) => {
        ended = r;
      },
      (e: unknown) => {
        ended = String(e);
      },
    );
    const stepUp = await holdOf(stepUpHeld, call);
    // Alice enters her code on another instance's page (it cannot wake this one): the hold runs its 20 s.
    await vi.advanceTimersByTimeAsync(12_000);
    expect(ended).toBeUndefined();
    const entry = await s.store.get(stepUpKey(stepUp.id));
    const done = JSON.stringify({ ...JSON.parse(entry!.value), state: 'done', doneAt: Date.now() });
    expect(await s.store.replace(stepUpKey(stepUp.id), entry!.version, done, 60_000)).toBe(true);
    const approvalHeld = s.next((e) => e.control === 'approval' && e.action === 'waiting');
    await vi.advanceTimersByTimeAsync(HOLD_MS - 12_000);
    const approval = await holdOf(approvalHeld, call);
    // Bob takes 12 s, past the handler's 5 s, then approves over the JSON API.
    await vi.advanceTimersByTimeAsync(12_000);
    expect(ended).toBeUndefined();
    const vote = await fetch(`${s.origin}/mrtr/approvals/${approval.id}`, {
      method: 'POST',
      headers: { authorization: 'Bearer bob-dev-token', 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve', comment: 'ok' }),
    });
    expect(vote.status).toBe(200);
    const result = await call;
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: 'text', text: 'Granted on-call to carol (approved by bob)' }]);
    expect(s.asked).toEqual(['form', 'url', 'url']);
  });
});
