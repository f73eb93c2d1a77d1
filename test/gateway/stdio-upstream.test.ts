// A 2025 upstream over stdio, as the gateway reaches it: calls that wait on a question at once each get a process of
// their own, so one call's question never blocks another's; a process that died is replaced before the next call;
// one that keeps dying is started again ever more slowly, with an error naming the upstream meanwhile.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RoundResult } from '../../src/client/index.js';
import { Upstream } from '../../src/gateway/index.js';
import type { InputRequiredResult } from '../../src/protocol/index.js';

const SERVER = join(import.meta.dirname, 'fixtures/asking-stdio-server.mjs');
const noEgress = { perCaller: false, tokenFor: async () => undefined };

let upstream: Upstream | undefined;
let dir: string | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await upstream?.close();
  upstream = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** The upstream, with its log lines and the file where each process start is written. */
function start(env: Record<string, string> = {}) {
  dir = mkdtempSync(join(tmpdir(), 'mrtr-stdio-upstream-'));
  const startLog = join(dir, 'starts');
  const lines: string[] = [];
  const listeners: Array<(line: string) => void> = [];
  upstream = new Upstream(
    { name: 'asking', command: [process.execPath, SERVER], env: { START_LOG: startLog, ...env } },
    {
      egress: noEgress,
      log: (line) => {
        lines.push(line);
        for (const l of listeners) l(line);
      },
      timeoutMs: 20_000,
      maxCallers: 10,
    },
  );
  const starts = () => readFileSync(startLog, 'utf8').split('\n').filter(Boolean).length;
  /** Resolves with the first log line from now on that contains `text`. */
  const logged = (text: string) =>
    new Promise<string>((resolve) => listeners.push((line) => line.includes(text) && resolve(line)));
  return { upstream, lines, starts, logged };
}

const alice = { subject: 'alice' };
const bob = { subject: 'bob' };
const call = (up: Upstream, who: { subject: string }, name: string, args = {}, more = {}) =>
  up.round(who, { name, arguments: args }, { holder: who.subject, ...more });

function held(r: RoundResult): InputRequiredResult & { requestState: string } {
  expect(r.resultType).toBe('input_required');
  return r as InputRequiredResult & { requestState: string };
}
const textOf = (r: RoundResult) => (r as { content?: Array<{ text?: string }> }).content?.[0]?.text;
const accept = { q1: { action: 'accept', content: {} } };

describe('a 2025 stdio upstream', () => {
  it('serves several waiting calls at once: a second call asks and completes while the first waits', async () => {
    const { upstream: up } = start();
    const a = held(await call(up, alice, 'ask', { tag: 'a' }));
    // Alice's call waits on her answer; Bob's call asks its own question and is answered first.
    const b = held(await call(up, bob, 'ask', { tag: 'b' }));
    expect(b.inputRequests?.q1).toMatchObject({
      method: 'elicitation/create',
      params: { message: 'Go on with b?' },
    });
    const bDone = await call(
      up,
      bob,
      'ask',
      { tag: 'b' },
      { requestState: b.requestState, inputResponses: accept },
    );
    expect(textOf(bDone)).toBe('b: {"action":"accept","content":{}}');
    const decline = { q1: { action: 'decline' } };
    const aDone = await call(
      up,
      alice,
      'ask',
      { tag: 'a' },
      { requestState: a.requestState, inputResponses: decline },
    );
    expect(textOf(aDone)).toBe('a: {"action":"decline"}');
  });

  it('a held call refused for an answer of the wrong kind still waits for a right one', async () => {
    const { upstream: up } = start();
    const a = held(await call(up, alice, 'ask', { tag: 's', kind: 'sample' }));
    const again = (answer: unknown) =>
      call(
        up,
        alice,
        'ask',
        { tag: 's', kind: 'sample' },
        { requestState: a.requestState, inputResponses: { q1: answer } },
      );
    await expect(again({ action: 'accept', content: {} })).rejects.toMatchObject({
      code: 'ERR_INVALID_ARGUMENT',
    });
    const sampled = { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm' };
    expect(textOf(await again(sampled))).toBe(`s: ${JSON.stringify(sampled)}`);
  });

  it('more calls at once than its share: the rest wait for a running call to end, none is refused', async () => {
    const { upstream: up, starts } = start();
    await call(up, alice, 'echo', { tag: 'warm' });
    // 20 calls of one caller at once, 8 in her share: 12 wait for a place and take the process it frees.
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call(up, alice, 'echo', { tag: `c${i}` })),
    );
    expect(answers.map(textOf)).toEqual(Array.from({ length: 20 }, (_, i) => `c${i}`));
    expect(starts()).toBeLessThanOrEqual(1 + 8);
  });

  it('a share full of calls waiting on a person is refused at once with 429, not held up', async () => {
    const { upstream: up } = start();
    for (let i = 0; i < 8; i++) held(await call(up, alice, 'ask', { tag: `h${i}` }));
    await expect(call(up, alice, 'echo', { tag: 'ninth' })).rejects.toMatchObject({
      httpStatus: 429,
    });
    // Another caller still has her own share.
    expect(textOf(await call(up, bob, 'echo', { tag: 'bob' }))).toBe('bob');
  });

  it('is started again before the next call once its process died: that call succeeds', async () => {
    const { upstream: up, logged } = start();
    const pid = Number(textOf(await call(up, alice, 'pid')));
    const exited = logged('it is started again on the next request');
    process.kill(pid, 'SIGKILL');
    expect(await exited).toMatch(/^upstream asking: server process exited \(signal SIGKILL\)/);
    expect(textOf(await call(up, alice, 'echo', { tag: 'after' }))).toBe('after');
    expect(up.restarts).toBe(1);
  });

  it('a process that keeps dying is started again ever more slowly, with an error naming the upstream', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { upstream: up, starts } = start({ FAIL_TO_START: '1' });
    // The first death is restarted at once; the second waits a second, the third two.
    await expect(call(up, alice, 'echo', { tag: '1' })).rejects.toMatchObject({ name: 'TransportFailure' });
    await expect(call(up, alice, 'echo', { tag: '2' })).rejects.toMatchObject({ name: 'TransportFailure' });
    expect(starts()).toBe(2);
    await expect(call(up, alice, 'echo', { tag: '3' })).rejects.toThrow(
      'upstream asking cannot start: its process ended 2 times in a row without answering (last: server process exited (code 3)); the next start is tried in 1 s',
    );
    expect(starts()).toBe(2);
    vi.setSystemTime(Date.now() + 1000);
    await expect(call(up, alice, 'echo', { tag: '4' })).rejects.toMatchObject({ name: 'TransportFailure' });
    expect(starts()).toBe(3);
    await expect(call(up, alice, 'echo', { tag: '5' })).rejects.toThrow('the next start is tried in 2 s');
    expect(starts()).toBe(3);
  });
});
