// `mrtr call`'s terminal with a pending approval: the link is shown with its host, opened only when the person
// types o, and once they choose to wait, the same approval asked again is polled — a spinner line with the server's
// "approved by k of n" — instead of asked again. The waits back off; Ctrl-C stops them. Fake timers, no sleeps.
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type ResolveContext, terminalResolver } from '../../src/client/index.js';
import { parseInputRequired } from '../../src/client/input.js';
import { INPUT_KINDS } from '../../src/protocol/index.js';

const URL_ = 'https://mcp.example.com/mrtr/approvals/abcdefghijklmnop/status';
const approvalQuestion = (message: string) =>
  parseInputRequired(
    {
      resultType: 'input_required',
      requestState: 's',
      inputRequests: {
        approval: {
          method: 'elicitation/create',
          params: {
            mode: 'url',
            message,
            url: URL_,
            elicitationId: 'e1',
            _meta: { 'dev.mrtr/humanRequired': 'approval' },
          },
        },
      },
    },
    new Set(INPUT_KINDS),
  ).questions[0]!;

function person(typed: string[], extra: { openUrl?: (u: string) => void } = {}) {
  const input = new PassThrough();
  const output = new PassThrough();
  let printed = '';
  output.on('data', (c: Buffer) => (printed += c.toString()));
  for (const l of typed) input.write(`${l}\n`);
  const r = terminalResolver({ input, output, color: false, pollMs: 5000, ...extra });
  return { r, printed: () => printed, input };
}
const ctx = (signal = new AbortController().signal): ResolveContext => ({
  signal,
  round: 1,
  method: 'tools/call',
  target: 'request_access',
  server: 'example',
  endpoint: 'mcp.example.com:443',
});

afterEach(() => vi.useRealTimers());

describe('a pending approval in the terminal', () => {
  it('shows the host, opens the browser only on o, then polls with "approved by k of n", backing off', async () => {
    const opened: string[] = [];
    const p = person(['o', ''], { openUrl: (u) => opened.push(u) });
    const first = await p.r.resolve(
      approvalQuestion('Still waiting — approved by 0 of 1. Needs a reviewer.'),
      ctx(),
    );
    expect(first).toEqual({ action: 'accept' });
    expect(opened).toEqual([URL_]);
    expect(p.printed()).toContain('opens mcp.example.com');
    expect(p.printed()).toContain('[o]pen/[Enter] wait here for the decision/[d]ecline/[c]ancel');

    vi.useFakeTimers();
    const before = p.printed().length;
    let answered: unknown;
    const poll = p.r
      .resolve(approvalQuestion('Still waiting — approved by 0 of 2. Needs 2 reviewers.'), ctx())
      .then((a) => (answered = a));
    await vi.advanceTimersByTimeAsync(4999);
    expect(answered).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    await poll;
    expect(answered).toEqual({ action: 'accept' });
    const line = p.printed().slice(before);
    expect(line).toContain('⠋ Still waiting — approved by 0 of 2 · checking again in 5 s (Ctrl-C stops)');
    expect(line).not.toContain('Wait for it?');
    // The next wait is twice as long, with the next spinner frame and the new count.
    const again = p.r.resolve(
      approvalQuestion('Still waiting — approved by 1 of 2. Needs 2 reviewers.'),
      ctx(),
    );
    await vi.advanceTimersByTimeAsync(10_000);
    await again;
    expect(p.printed()).toContain('⠙ Still waiting — approved by 1 of 2 · checking again in 10 s');
    p.r.close();
  });

  it('Ctrl-C during a wait stops the call', async () => {
    const p = person(['']);
    await p.r.resolve(approvalQuestion('Still waiting — approved by 0 of 1.'), ctx());
    vi.useFakeTimers();
    const abort = new AbortController();
    const waiting = p.r.resolve(approvalQuestion('Still waiting — approved by 0 of 1.'), ctx(abort.signal));
    abort.abort(new Error('interrupted'));
    await expect(waiting).rejects.toMatchObject({ name: 'RequestAborted' });
    p.r.close();
  });

  it('without a browser opener, o is not offered and nothing is opened', async () => {
    const p = person(['']);
    await p.r.resolve(approvalQuestion('Still waiting — approved by 0 of 1.'), ctx());
    expect(p.printed()).toContain('Nothing is opened for you');
    expect(p.printed()).not.toContain('[o]pen');
    p.r.close();
  });
});
