// The pure steps of a task record: a round's answer read in, the client's answers taken, a cancel — each rule of the
// extension that lives in them (unique keys, partial answers, waiting on a person, terminal states keep nothing).
import { describe, expect, it } from 'vitest';
import {
  afterRound,
  askedAgain,
  cancelled,
  detailedTask,
  nextInputResponses,
  type TaskRecord,
  withAnswers,
} from '../../src/server/tasks/record.js';

const form = (message: string) => ({
  method: 'elicitation/create',
  params: { mode: 'form', message, requestedSchema: { type: 'object', properties: {} } },
});
const link = (url: string, hint?: string, progress?: string) => ({
  method: 'elicitation/create',
  params: {
    mode: 'url',
    message: 'open it',
    url,
    elicitationId: 'e1',
    ...(hint
      ? { _meta: { 'dev.mrtr/humanRequired': hint, ...(progress ? { 'dev.mrtr/progress': progress } : {}) } }
      : {}),
  },
});

function fresh(o: Partial<TaskRecord> = {}): TaskRecord {
  return {
    v: 1,
    id: 'T'.repeat(43),
    principal: null,
    tool: 't',
    arguments: {},
    meta: {},
    status: 'working',
    createdAt: 1000,
    updatedAt: 1000,
    ttlMs: 60_000,
    pollIntervalMs: 500,
    next: { answers: {} },
    asked: {},
    issuedKeys: [],
    waitingKeys: [],
    openedUrls: [],
    rounds: 0,
    lease: { holder: 'h', until: 9999 },
    ...o,
  };
}

describe('a round read into the task', () => {
  it('a result completes it (isError too), an error fails it; both drop the lease, the state and the questions', () => {
    const done = afterRound(
      fresh({ next: { requestState: 's', answers: { a: { action: 'accept' } } } }),
      { result: { resultType: 'complete', content: [] } },
      2000,
    );
    expect(done).toMatchObject({ status: 'completed', updatedAt: 2000, rounds: 1, next: { answers: {} } });
    expect(done.lease).toBeUndefined();
    expect(done.statusMessage).toBeUndefined();
    const toolError = afterRound(
      fresh(),
      { result: { resultType: 'complete', isError: true, content: [] } },
      2000,
    );
    expect(toolError).toMatchObject({ status: 'completed', statusMessage: 'completed with a tool error' });
    const failed = afterRound(fresh(), { error: { code: -32603, message: 'boom' } }, 2000);
    expect(failed).toMatchObject({
      status: 'failed',
      error: { code: -32603, message: 'boom' },
      statusMessage: 'boom',
    });
    expect(detailedTask(failed).result).toBeUndefined();
    expect(detailedTask(done).error).toBeUndefined();
  });

  it('questions for the client make it input_required, under keys never used before in the task', () => {
    let r = afterRound(
      fresh(),
      {
        result: {
          resultType: 'input_required',
          requestState: 's1',
          inputRequests: { q: form('one'), z: form('two') },
        },
      },
      2000,
    );
    expect(r.status).toBe('input_required');
    expect(Object.keys(detailedTask(r).inputRequests!)).toEqual(['q', 'z']);
    expect(r.next.requestState).toBe('s1');
    r = afterRound(
      { ...r, status: 'working' },
      { result: { resultType: 'input_required', requestState: 's2', inputRequests: { q: form('again') } } },
      3000,
    );
    r = afterRound(
      { ...r, status: 'working' },
      {
        result: { resultType: 'input_required', requestState: 's3', inputRequests: { q: form('and again') } },
      },
      4000,
    );
    expect(Object.keys(r.asked)).toEqual(['q~3']);
    expect(r.issuedKeys).toEqual(['q', 'z', 'q~2', 'q~3']);
    expect(r.asked['q~3']!.key).toBe('q');
  });

  it('an approval is waited out on the server side: working, its progress line shown, checked again after the poll interval', () => {
    const r = afterRound(
      fresh(),
      {
        result: {
          resultType: 'input_required',
          requestState: 's',
          inputRequests: { approval: link('https://x/a', 'approval', 'waiting for approval, 0 of 2') },
        },
      },
      2000,
    );
    expect(r).toMatchObject({
      status: 'working',
      statusMessage: 'waiting for approval, 0 of 2',
      waitingKeys: ['approval'],
      checkAt: 2500,
    });
    expect(detailedTask(r).inputRequests).toBeUndefined();
    expect(nextInputResponses(r)).toEqual({ approval: { action: 'accept' } });
    const noHint = afterRound(
      fresh(),
      {
        result: {
          resultType: 'input_required',
          inputRequests: { approval: link('https://x/a', 'approval') },
        },
      },
      2000,
    );
    expect(noHint.statusMessage).toBe('waiting for approval');
  });

  it('a state-only round (nothing asked) checks again after its retry hint', () => {
    const r = askedAgain(
      fresh(),
      {
        resultType: 'input_required',
        requestState: 's',
        inputRequests: {},
        _meta: { 'dev.mrtr/retryAfterMs': 7000 },
      },
      2000,
    );
    expect(r).toMatchObject({ status: 'working', checkAt: 9000 });
  });

  it('a link is asked of the client until it opened it; asked again after that, it is waited out', () => {
    const asked = afterRound(
      fresh(),
      {
        result: {
          resultType: 'input_required',
          inputRequests: { step_up: link('https://x/s', 'second_factor') },
        },
      },
      2000,
    );
    expect(asked.status).toBe('input_required');
    const opened = withAnswers(asked, { step_up: { action: 'accept' } }, 3000)!;
    expect(opened.openedUrls).toEqual(['https://x/s']);
    const again = afterRound(
      { ...opened, status: 'working' },
      {
        result: {
          resultType: 'input_required',
          inputRequests: { step_up: link('https://x/s', 'second_factor', 'waiting for the second factor') },
        },
      },
      4000,
    );
    expect(again).toMatchObject({
      status: 'working',
      statusMessage: 'waiting for the second factor',
      waitingKeys: ['step_up'],
    });
    const declined = withAnswers(asked, { step_up: { action: 'decline' } }, 3000)!;
    expect(declined.openedUrls).toEqual([]);
  });

  it("only a second factor is waited out: any other link asked again is the client's to open again", () => {
    const round = (r: TaskRecord, hint?: string) =>
      afterRound(
        { ...r, status: 'working' },
        { result: { resultType: 'input_required', inputRequests: { go: link('https://x/l', hint) } } },
        2000,
      );
    for (const hint of [undefined, 'consent', 'approval_page']) {
      const opened = withAnswers(round(fresh(), hint), { go: { action: 'accept' } }, 3000)!;
      // Not a second factor: the link is not kept as opened at all.
      expect(opened.openedUrls).toEqual([]);
      const again = round(opened, hint);
      expect(again.status).toBe('input_required');
      expect(again.waitingKeys).toEqual([]);
    }
  });

  it('an ended task keeps neither the arguments nor the _meta of its call (a failure record always fits)', () => {
    const big = fresh({ arguments: { blob: 'x'.repeat(1000) }, meta: { m: 1 }, openedUrls: ['https://x/s'] });
    for (const ended of [
      afterRound(big, { error: { code: -32603, message: 'too large' } }, 2000),
      afterRound(big, { result: { resultType: 'complete', content: [] } }, 2000),
      cancelled(big, 2000)!,
    ]) {
      expect(ended).toMatchObject({ arguments: {}, meta: {}, openedUrls: [], issuedKeys: [] });
    }
  });
});

describe("the client's answers", () => {
  const asking = () =>
    afterRound(
      fresh(),
      {
        result: {
          resultType: 'input_required',
          requestState: 's',
          inputRequests: { a: form('A'), b: form('B') },
        },
      },
      2000,
    );

  it('a partial answer keeps it input_required with only the unanswered key; the last one makes it working', () => {
    const partial = withAnswers(asking(), { a: { action: 'accept', content: {} } }, 3000)!;
    expect(partial.status).toBe('input_required');
    expect(Object.keys(detailedTask(partial).inputRequests!)).toEqual(['b']);
    const all = withAnswers(partial, { b: { action: 'decline' } }, 4000)!;
    expect(all).toMatchObject({ status: 'working', statusMessage: 'working on the answers' });
    expect(nextInputResponses(all)).toEqual({
      a: { action: 'accept', content: {} },
      b: { action: 'decline' },
    });
  });

  it('keys not asked (never issued, or answered already) are ignored: nothing is taken', () => {
    expect(withAnswers(asking(), { c: { action: 'accept' } }, 3000)).toBeUndefined();
    const partial = withAnswers(asking(), { a: { action: 'accept' } }, 3000)!;
    expect(withAnswers(partial, { a: { action: 'decline' } }, 4000)).toBeUndefined();
    expect(withAnswers(fresh(), { a: { action: 'accept' } }, 3000)).toBeUndefined();
  });

  it('the flow hears its own keys, not the task keys', () => {
    let r = afterRound(
      fresh({ issuedKeys: ['q'] }),
      { result: { resultType: 'input_required', inputRequests: { q: form('x') } } },
      2000,
    );
    r = withAnswers(r, { 'q~2': { action: 'accept' } }, 3000)!;
    expect(nextInputResponses(r)).toEqual({ q: { action: 'accept' } });
  });
});

describe('a cancel', () => {
  it('cancels what has not ended, and changes nothing once it has', () => {
    const c = cancelled(fresh({ next: { requestState: 's', answers: {} } }), 5000)!;
    expect(c).toMatchObject({
      status: 'cancelled',
      statusMessage: 'cancelled by the client',
      updatedAt: 5000,
    });
    expect(c.next.requestState).toBeUndefined();
    expect(cancelled(c, 6000)).toBeUndefined();
    expect(cancelled(fresh({ status: 'completed' }), 6000)).toBeUndefined();
    expect(cancelled(fresh({ status: 'failed' }), 6000)).toBeUndefined();
  });
});

describe('what tasks/get shows', () => {
  it('ISO times, ttlMs and pollIntervalMs as integers, and only the payload of the status', () => {
    const t = detailedTask(fresh());
    expect(t).toEqual({
      taskId: 'T'.repeat(43),
      status: 'working',
      createdAt: new Date(1000).toISOString(),
      lastUpdatedAt: new Date(1000).toISOString(),
      ttlMs: 60_000,
      pollIntervalMs: 500,
    });
  });
});

describe('task ids', () => {
  it('are 43 base64url characters and never start with "-" (a person pastes them after mrtr task get)', async () => {
    const { newTaskId, looksLikeTaskId } = await import('../../src/server/tasks/task-book.js');
    const ids = Array.from({ length: 2000 }, () => newTaskId());
    expect(ids.every(looksLikeTaskId)).toBe(true);
    expect(ids.filter((id) => id.startsWith('-'))).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
