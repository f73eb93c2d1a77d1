// The forwarding handler's direct path: a call the upstream answers at once journals nothing and, with no audit trail
// to keep it, hashes nothing; an upstream that asks is journaled from its first reply, so the next round replays it.
import { describe, expect, it, vi } from 'vitest';
import type { RoundResult } from '../../src/client/index.js';
import type { GatewayTool } from '../../src/gateway/catalog.js';
import { forwardingHandler } from '../../src/gateway/forward-call.js';
import type { RequestContext } from '../../src/server/index.js';
import { argumentsDigest } from '../../src/state/index.js';

vi.mock('../../src/state/index.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/state/index.js')>();
  return { ...actual, argumentsDigest: vi.fn(actual.argumentsDigest) };
});
const digest = vi.mocked(argumentsDigest);

const ANSWER = { resultType: 'complete', content: [{ type: 'text', text: 'done' }] } as RoundResult;
const ASKS = {
  resultType: 'input_required',
  inputRequests: { q1: { method: 'elicitation/create', params: { message: 'Sure?', requestedSchema: {} } } },
  requestState: 'held-1',
} as unknown as RoundResult;

/** The tool `echo` on a fake upstream answering each round from `replies`, and a ctx that counts what it is asked. */
function setUp(replies: RoundResult[], { round = 0, recorded = false } = {}) {
  const upstreamRound = vi.fn(async () => replies.shift() as RoundResult);
  const tool = {
    upstream: { name: 'up', round: upstreamRound },
    tool: 'echo',
    name: 'up__echo',
    definition: { name: 'echo', inputSchema: { type: 'object' } },
    digest: 'd',
  } as unknown as Omit<GatewayTool, 'entry'>;
  const steps: string[] = [];
  const note = vi.fn();
  let askTouched = 0;
  const ctx = {
    round,
    principal: { subject: 'alice' },
    signal: new AbortController().signal,
    audit: { recorded, note, decided: vi.fn() },
    get ask() {
      askTouched++;
      return {
        step: async (name: string, run: () => unknown) => {
          steps.push(name);
          return run();
        },
        // The caller's answers: what an answered round brings.
        forward: async () => ({ action: 'accept', content: {} }),
        all: (questions: Promise<unknown>[]) => Promise.all(questions),
      };
    },
  } as unknown as RequestContext;
  const run = () => forwardingHandler(() => undefined)(tool)({ x: 1 }, ctx);
  return { run, upstreamRound, steps, note, askTouched: () => askTouched };
}

describe('a call through the gateway', () => {
  it('answered at once on its first round: nothing journaled, nothing hashed without an audit trail', async () => {
    digest.mockClear();
    const { run, upstreamRound, askTouched, note } = setUp([ANSWER]);
    expect(await run()).toEqual({ content: [{ type: 'text', text: 'done' }] });
    expect(upstreamRound).toHaveBeenCalledTimes(1);
    expect(askTouched()).toBe(0);
    expect(note).not.toHaveBeenCalled();
    expect(digest).not.toHaveBeenCalled();
  });

  it('with an audit trail: its answer is hashed once, into the note', async () => {
    digest.mockClear();
    const { run, note } = setUp([ANSWER], { recorded: true });
    const result = await run();
    expect(digest).toHaveBeenCalledTimes(1);
    expect(note).toHaveBeenCalledWith({
      upstream: expect.objectContaining({ rounds: 1, answerDigest: argumentsDigest(result as never) }),
    });
  });

  it('whose upstream asks: journaled from that first reply, which the upstream is not asked for again', async () => {
    const { run, upstreamRound, steps } = setUp([ASKS, ANSWER]);
    await run();
    // The first reply became step 1 after the fact; the second round was a step from the start.
    expect(steps).toEqual(['mrtr/gateway/upstream-1', 'mrtr/gateway/upstream-2']);
    expect(upstreamRound).toHaveBeenCalledTimes(2);
  });

  it('on a later round of its flow (a control asked first): every upstream round is a step', async () => {
    const { run, steps } = setUp([ANSWER], { round: 1 });
    await run();
    expect(steps).toEqual(['mrtr/gateway/upstream-1']);
  });
});
