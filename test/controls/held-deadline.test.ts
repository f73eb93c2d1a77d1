// Issue 37, item 7: on a server with a short handler deadline (the workflows server's 5 s), a client that answers the
// approval's or the step-up's link with "accept" at once is held while the person acts. That wait is the person's,
// not the handler's: it must not end the call with "did not finish within 5000 ms". After the held window the same
// question comes back, and the handler's own work still meets its deadline. Time is fake; people act by signals.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DevTokens, parseDevTokens } from '../../src/auth/index.js';
import { type ControlEvent, HumanControls } from '../../src/controls/index.js';
import { stepUpKey } from '../../src/controls/step-up.js';
import type { JsonRpcRequest } from '../../src/protocol/index.js';
import { McpServer, text } from '../../src/server/index.js';
import { generateKeySpec } from '../../src/state/index.js';
import { MemoryStore } from '../../src/stores/index.js';
import { META } from '../helpers/mcp-http.js';
import { PEOPLE } from './fixture.js';

// biome-ignore lint/suspicious/noExplicitAny: replies are read as loose JSON, checked by the expectations
type Loose = any;

const ORIGIN = 'http://127.0.0.1:9';
const ISSUER = `${ORIGIN}/mcp`;
const alice = { subject: 'alice', issuer: ISSUER, name: 'Alice', roles: ['requester'] };
const bob = { subject: 'bob', issuer: ISSUER, name: 'Bob' };
const quiet = { info() {}, warn() {}, error() {} };

/** The workflows server's limits: a 5 s handler deadline, and the controls' default 20 s hold. */
const DEADLINE_MS = 5_000;
const HOLD_MS = 20_000;

beforeEach(() => {
  // The deadline's and the hold's timers, and the clocks that measure what is left of the deadline.
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

function heldServer() {
  const store = new MemoryStore();
  const events: ControlEvent[] = [];
  const listeners: Array<(e: ControlEvent) => void> = [];
  const server = new McpServer({
    name: 'held',
    version: '1',
    stateKeys: generateKeySpec(),
    signIn: { origin: ORIGIN, devTokens: new DevTokens(parseDevTokens(PEOPLE)) },
    handlerTimeoutMs: DEADLINE_MS,
    logger: quiet as never,
  });
  const controls = new HumanControls({
    store,
    onEvent: (e) => {
      events.push(e);
      for (const l of listeners) l(e);
    },
  }).attach(server);
  /** Work the handler does itself around the approval: the test says how long it takes, in fake time. */
  const work = { before: 0, after: 0 };
  const busyFor = (ms: number) => (ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : undefined);
  const waits = { maxRounds: 20 };
  server.tool({ name: 'grant_role', description: 'x', ...waits }, async (_a, ctx) => {
    // Only the retry works before the check: the first round asks at once.
    if (ctx.round > 0) await busyFor(work.before);
    await controls.approval(ctx, {
      role: 'approver',
      reason: 'grant admin',
      effect: { tool: 'grant_role', role: 'admin' },
    });
    await busyFor(work.after);
    return text('granted');
  });
  server.tool({ name: 'recovery', description: 'x', ...waits }, async (_a, ctx) => {
    await controls.stepUp(ctx, { reason: 'Show the recovery codes' });
    return text('codes');
  });
  server.tool({ name: 'busy', description: 'x' }, async () => {
    await busyFor(DEADLINE_MS + 1_000);
    return text('done');
  });
  const core = server.core;
  let id = 0;
  const env = () => ({ principal: alice, signal: new AbortController().signal, notify() {} });
  return {
    store,
    controls,
    events,
    work,
    /** One round of `name`, as alice, from a 2026 client without tasks. */
    call: (name: string, round: Record<string, unknown> = {}): Promise<Loose> => {
      const request = {
        jsonrpc: '2.0',
        id: ++id,
        method: 'tools/call',
        params: { _meta: META, name, arguments: {}, ...round },
      } as JsonRpcRequest;
      return Promise.resolve(core.handle(request, env())).then((r: Loose) => r.result ?? r);
    },
    /** Resolves at the first control event `match` accepts (from now on). */
    next: (match: (e: ControlEvent) => boolean) =>
      new Promise<ControlEvent>((resolve) => listeners.push((e) => match(e) && resolve(e))),
  };
}

type Held = ReturnType<typeof heldServer>;

/** The first round's approval question, and the id of the request it created. */
async function askedForApproval(s: Held) {
  const first = await s.call('grant_role');
  expect(first.resultType).toBe('input_required');
  const question = first.inputRequests.approval;
  const id = new URL(question.params.url).pathname.split('/')[3]!;
  return { first, question, id };
}

/** Bob approves request `id`, as the review page or the console records it. */
const bobApproves = (s: Held, id: string) =>
  s.controls.decisions.vote(id, bob, ['approver'], { decision: 'approve', comment: 'ok', seen: 'x' }, 'test');

/**
 * The client's retry answering `key`'s link with accept at once. `held` resolves once the check holds it (its
 * `waiting` event); `answer` is the round's answer; `done` says whether it has come yet.
 */
function acceptAtOnce(s: Held, name: string, requestState: string, key: string) {
  const held = s.next((e) => e.action === 'waiting');
  const answer = s.call(name, { requestState, inputResponses: { [key]: { action: 'accept' } } });
  const box = { done: false, held, answer };
  answer.then(() => {
    box.done = true;
  });
  return box;
}

describe('waiting on a person does not count against the handler deadline (issue 37, item 7)', () => {
  it('approval: accept at once, bob decides after 12 s of the hold: the call completes, not a timeout', async () => {
    const s = heldServer();
    const { first, id } = await askedForApproval(s);
    const retry = acceptAtOnce(s, 'grant_role', first.requestState, 'approval');
    expect(await retry.held).toMatchObject({ control: 'approval', id, detail: { waitMs: HOLD_MS } });
    // Past the 5 s deadline, inside the 20 s hold: the round is still open for bob.
    await vi.advanceTimersByTimeAsync(12_000);
    expect(retry.done).toBe(false);
    await bobApproves(s, id);
    const done = await retry.answer;
    expect(done).toMatchObject({ content: [{ type: 'text', text: 'granted' }] });
    expect(done.isError).toBeUndefined();
  });

  it('approval: the hold passes with no decision: the same question again, then a later round completes', async () => {
    const s = heldServer();
    const { first, question, id } = await askedForApproval(s);
    const retry = acceptAtOnce(s, 'grant_role', first.requestState, 'approval');
    await retry.held;
    await vi.advanceTimersByTimeAsync(HOLD_MS);
    const again = await retry.answer;
    expect(again.resultType).toBe('input_required');
    // The same question: the same key, kind, mode and link (its text counts the rounds, so it is new each round).
    expect(Object.keys(again.inputRequests)).toEqual(['approval']);
    expect(again.inputRequests.approval).toMatchObject({
      method: 'elicitation/create',
      params: { mode: 'url', url: question.params.url },
    });
    expect(again.requestState).not.toBe(first.requestState);
    // The client keeps waiting round by round; bob decides during the second hold.
    const third = acceptAtOnce(s, 'grant_role', again.requestState, 'approval');
    await third.held;
    await vi.advanceTimersByTimeAsync(HOLD_MS - 1_000);
    expect(third.done).toBe(false);
    await bobApproves(s, id);
    expect(await third.answer).toMatchObject({ content: [{ type: 'text', text: 'granted' }] });
  });

  it("the handler's own work still meets the deadline as before", async () => {
    const s = heldServer();
    const busy = s.call('busy');
    let done = false;
    busy.then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(DEADLINE_MS - 1);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await busy).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: `busy did not finish within ${DEADLINE_MS} ms` }],
      isError: true,
    });
  });

  it('the clock resumes with what was left: 3 s of work before the hold and 3 s after it time out', async () => {
    const s = heldServer();
    s.work.before = 3_000;
    s.work.after = 3_000;
    const { first, id } = await askedForApproval(s);
    const retry = acceptAtOnce(s, 'grant_role', first.requestState, 'approval');
    await vi.advanceTimersByTimeAsync(3_000);
    await retry.held;
    await vi.advanceTimersByTimeAsync(10_000);
    await bobApproves(s, id);
    // 2 s of the handler's own time were left when the hold began.
    await vi.advanceTimersByTimeAsync(1_999);
    expect(retry.done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await retry.answer).toMatchObject({
      content: [{ text: `grant_role did not finish within ${DEADLINE_MS} ms` }],
      isError: true,
    });
  });

  it('step-up: accept at once, the code is entered after 12 s: the call completes, not a timeout', async () => {
    const s = heldServer();
    const first = await s.call('recovery');
    const id = new URL(first.inputRequests.step_up.params.url).pathname.split('/')[3]!;
    const retry = acceptAtOnce(s, 'recovery', first.requestState, 'step_up');
    expect(await retry.held).toMatchObject({ control: 'step_up', id });
    await vi.advanceTimersByTimeAsync(12_000);
    expect(retry.done).toBe(false);
    // The page of another instance marks it done (it cannot wake this one): the hold ends at its window.
    const entry = await s.store.get(stepUpKey(id));
    const record = JSON.parse(entry!.value);
    const done = JSON.stringify({ ...record, state: 'done', doneAt: Date.now() });
    expect(await s.store.replace(stepUpKey(id), entry!.version, done, 60_000)).toBe(true);
    await vi.advanceTimersByTimeAsync(HOLD_MS - 12_000);
    expect(await retry.answer).toMatchObject({ content: [{ type: 'text', text: 'codes' }] });
  });

  it('step-up: the hold passes with nothing done: the same question again', async () => {
    const s = heldServer();
    const first = await s.call('recovery');
    const question = first.inputRequests.step_up;
    const retry = acceptAtOnce(s, 'recovery', first.requestState, 'step_up');
    await retry.held;
    await vi.advanceTimersByTimeAsync(HOLD_MS);
    const again = await retry.answer;
    expect(again.resultType).toBe('input_required');
    expect(Object.keys(again.inputRequests)).toEqual(['step_up']);
    expect(again.inputRequests.step_up).toMatchObject({
      method: 'elicitation/create',
      params: { mode: 'url', url: question.params.url },
    });
  });
});
