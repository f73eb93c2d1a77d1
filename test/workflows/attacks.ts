// The attacks every workflow must refuse, end to end over HTTP against `mrtr serve --fixture workflows` with the
// replay guard and the audit trail on: each one checks the wire answer, the audit event with its reason, and that
// the workflow's effect did not happen (again).
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { Who, WorkflowsServer } from './workflows-server.js';

export interface AttackPlan {
  tool: string;
  /** Who runs the flow, and who attacks with their state. */
  owner: Who;
  intruder: Who;
  args: Record<string, unknown>;
  /** The same call with an argument that matters changed (another VM, another title, …). */
  changedArgs: Record<string, unknown>;
  /** Answers to the first round's questions, and other answers to them. */
  first: Record<string, unknown>;
  other: Record<string, unknown>;
  /** Answers to a later question only, keyed as that question will be: a step skipped. */
  later: Record<string, unknown>;
  /** Answers to each later round until the call completes (by the keys that round asks). */
  rest: (asked: string[]) => Record<string, unknown>;
  /** How many effects the workflow has made so far (rows in its database); none for a read-only workflow. */
  effects?: () => number;
}

const INVALID = { code: -32602, message: 'Invalid params: invalid requestState' };

/** `{ d: { d: … } }`, `levels` deep: JSON no record of the round could hold past 1,000 levels (canonical JSON). */
export function nestedObject(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 0; i < levels; i++) value = { d: value };
  return value;
}

/** What the front door answers for arguments nested past its limit, and what the trail records of them. */
export const TOO_DEEP = {
  error: {
    code: -32602,
    message: 'Invalid params: arguments nests deeper than 64 levels',
    data: { limit: 'maxInputDepth', member: 'arguments', maxDepth: 64 },
  },
  recorded: { $refused: 'Invalid params: arguments nests deeper than 64 levels' },
} as const;

type Result = Record<string, unknown>;
const asked = (result: Result | undefined) => Object.keys((result?.inputRequests as Result) ?? {});

export function attackSuite(server: () => WorkflowsServer, plan: () => AttackPlan): void {
  const start = async () => {
    const s = server();
    const p = plan();
    p.effects ??= () => 0;
    const r0 = await s.call(p.owner, { name: p.tool, arguments: p.args });
    expect(r0.response.result?.resultType).toBe('input_required');
    return { s, p, state: r0.response.result?.requestState as string, keys: asked(r0.response.result) };
  };
  /** The outcome event of request `id` (a round that ran has its intent before it, which must be there too). */
  const eventOf = async (s: WorkflowsServer, id: string) => {
    const all = (await s.audit()).filter((e) => e.requestId === id);
    const found = all.filter((e) => e.outcome !== 'proposed');
    expect(found).toHaveLength(1);
    const intents = all.filter((e) => e.outcome === 'proposed');
    // Refused before it ran: no intent; ran: exactly one, the one its outcome names.
    if (found[0]!.intentSeq === undefined) expect(intents).toEqual([]);
    else expect(intents.map((e) => e.seq)).toEqual([found[0]!.intentSeq]);
    return found[0]!;
  };

  it('refuses an extra argument nested 1,000 levels deep before the round runs (-32602 naming the limit), and audits it', async () => {
    // The attack of issue 22: the tool's schema drops the extra key, so the handler would run — and no record of
    // the round could be made. The front door stops it first, and the refusal is in the trail.
    const s = server();
    const p = plan();
    const before = p.effects?.() ?? 0;
    const id = randomUUID();
    const r = await s.call(
      p.owner,
      { name: p.tool, arguments: { ...p.args, extra: nestedObject(1000) } },
      id,
    );
    expect(r.response.error).toEqual(TOO_DEEP.error);
    const event = await eventOf(s, id);
    expect(event).toMatchObject({ outcome: 'refused', reason: 'code -32602', target: p.tool });
    expect(event.arguments).toEqual(TOO_DEEP.recorded);
    expect(event.intentSeq).toBeUndefined();
    expect(p.effects?.() ?? 0).toBe(before);
  });

  it('refuses a changed argument between rounds, and audits why', async () => {
    const { s, p, state } = await start();
    const before = p.effects!();
    const id = randomUUID();
    const r = await s.call(
      p.owner,
      { name: p.tool, arguments: p.changedArgs, requestState: state, inputResponses: p.first },
      id,
    );
    expect(r.response.error).toEqual(INVALID);
    const event = await eventOf(s, id);
    expect(event).toMatchObject({ outcome: 'refused', reason: 'wrong_request', target: p.tool });
    expect(p.effects!()).toBe(before);
  });

  it("refuses another principal's state, and audits why", async () => {
    const { s, p, state } = await start();
    const before = p.effects!();
    const id = randomUUID();
    const r = await s.call(
      p.intruder,
      { name: p.tool, arguments: p.args, requestState: state, inputResponses: p.first },
      id,
    );
    expect(r.response.error).toEqual(INVALID);
    const event = await eventOf(s, id);
    expect(event).toMatchObject({ outcome: 'refused', reason: 'wrong_principal' });
    expect(event.principal?.sub).not.toBe(p.owner);
    expect(p.effects!()).toBe(before);
  });

  it('refuses a replayed older round once the flow went on (an identical retry before that gets the same answer); one effect', async () => {
    const { s, p, state } = await start();
    const before = p.effects!();
    const first = await s.call(p.owner, {
      name: p.tool,
      arguments: p.args,
      requestState: state,
      inputResponses: p.first,
    });
    // Until the flow goes on, the same round with the same answers is a safe retry (a lost answer): same bytes.
    const retry = await s.call(p.owner, {
      name: p.tool,
      arguments: p.args,
      requestState: state,
      inputResponses: p.first,
    });
    expect(JSON.stringify(retry.response.result)).toBe(JSON.stringify(first.response.result));
    let result = first.response.result;
    let later = 0;
    for (; result?.resultType === 'input_required' && later < 5; later++) {
      const next = await s.call(p.owner, {
        name: p.tool,
        arguments: p.args,
        requestState: result.requestState,
        inputResponses: p.rest(asked(result)),
      });
      result = next.response.result;
    }
    expect(result?.resultType).toBe('complete');
    expect(result?.isError).toBeFalsy();
    expect(p.effects!()).toBe(before + (plan().effects ? 1 : 0));
    // The first round again, with other answers: the flow has finished, the old state is dead.
    const id = randomUUID();
    const replay = await s.call(
      p.owner,
      { name: p.tool, arguments: p.args, requestState: state, inputResponses: p.other },
      id,
    );
    expect(replay.response.error).toEqual(INVALID);
    expect(await eventOf(s, id)).toMatchObject({ outcome: 'refused', reason: 'flow_completed' });
    // The same answers again: an older round of a finished flow is never answered; the last round's is (its answer
    // may have been lost), byte for byte, without running again.
    const again = await s.call(p.owner, {
      name: p.tool,
      arguments: p.args,
      requestState: state,
      inputResponses: p.first,
    });
    if (later > 0) expect(again.response.error).toEqual(INVALID);
    else expect(JSON.stringify(again.response.result)).toBe(JSON.stringify(first.response.result));
    expect(p.effects!()).toBe(before + (plan().effects ? 1 : 0));
  });

  it('does not let a later answer skip an earlier question: it is ignored, the earlier one asked again, nothing done', async () => {
    const { s, p, state, keys } = await start();
    const before = p.effects!();
    const id = randomUUID();
    const r = await s.call(
      p.owner,
      { name: p.tool, arguments: p.args, requestState: state, inputResponses: p.later },
      id,
    );
    expect(r.response.result?.resultType).toBe('input_required');
    expect(asked(r.response.result)).toEqual(keys);
    const event = await eventOf(s, id);
    // The audit shows the round asked the same questions again and that no answer reached the handler.
    expect(event.outcome).toBe('input_required');
    expect(event.answers ?? {}).toEqual({});
    expect(event.asked?.map((a) => a.key)).toEqual(keys);
    expect(event.steps).toEqual([]);
    expect(p.effects!()).toBe(before);
  });
}
