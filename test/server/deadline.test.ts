// Handler time limits: the request is answered when the limit passes, the handler's signal aborts, and whatever
// the handler does afterwards (progress, logs, a late failure) goes nowhere and breaks nothing. The handlers here
// run until the test releases them, so a limit is the only way their requests can be answered in time.
import { getEventListeners } from 'node:events';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { JsonRpcRequest } from '../../src/protocol/index.js';
import { Deadline } from '../../src/server/deadline.js';
import { type HttpEndpoint, McpServer, type McpServerOptions, text } from '../../src/server/index.js';
import { serveStdio } from '../../src/server/stdio.js';
import { META, mcp } from '../helpers/mcp-http.js';
import { type Deferred, deferred, Happenings, track } from '../helpers/signals.js';
import { stdioPipes } from '../helpers/stdio-pipes.js';
import { testServer } from './test-server.js';

const quiet = { info() {}, warn() {}, error() {} };

/** What the handlers did, and the gate they wait at; both fresh for every test. */
let happened: Happenings;
let release: Deferred<void>;
beforeEach(() => {
  happened = new Happenings();
  release = deferred();
});
afterEach(() => {
  release.resolve();
  vi.useRealTimers();
});

/** Only the handler time limit's timer is faked: streams and flow rounds keep their real ticks. */
const fakeClock = () => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });

function overtimeServer(options: Partial<McpServerOptions> = {}): McpServer {
  return testServer(options)
    .tool(
      {
        name: 'overtime',
        description: 'Runs past its 100 ms limit, watching its signal',
        timeoutMs: 100,
        input: z.object({ tag: z.string() }),
      },
      async ({ tag }, ctx) => {
        const [log, gate] = [happened, release];
        ctx.progress({ progress: 0, total: 2 });
        const aborted = new Promise<void>((resolve) =>
          ctx.signal.addEventListener('abort', () => {
            log.record(`${tag}:aborted:${(ctx.signal.reason as Error).name}`);
            resolve();
          }),
        );
        log.record(`${tag}:started`);
        await aborted;
        await gate.promise;
        // Past the limit and already answered: these must go nowhere, and nothing may break.
        ctx.progress({ progress: 1, total: 2 });
        ctx.log('info', 'still here');
        log.record(`${tag}:late progress sent`);
        return text('too late');
      },
    )
    .tool(
      { name: 'overtime_failure', description: 'Fails once released, after its 50 ms limit', timeoutMs: 50 },
      async () => {
        const [log, gate] = [happened, release];
        await gate.promise;
        log.record('late failure thrown');
        throw new Error('failure after the deadline');
      },
    )
    .tool(
      { name: 'overtime_step', description: 'A flow step that outlasts its 50 ms limit', timeoutMs: 50 },
      async (_args, ctx) => {
        const gate = release;
        const n = await ctx.ask.step('slow-step', async () => {
          await gate.promise;
          return 1;
        });
        return text(`step gave ${n}`);
      },
    )
    .prompt(
      {
        name: 'overtime_prompt',
        description: 'Outlasts its 50 ms limit, and so does its completer',
        arguments: [{ name: 'topic' }],
        timeoutMs: 50,
        complete: {
          topic: async () => {
            await release.promise;
            return { values: ['late'] };
          },
        },
      },
      async () => {
        await release.promise;
        return { messages: [] };
      },
    )
    .resource(
      {
        uri: 'test://overtime',
        name: 'overtime-resource',
        description: 'Outlasts its 50 ms limit',
        timeoutMs: 50,
      },
      async () => {
        await release.promise;
        return { contents: [] };
      },
    );
}

const toolCall = (
  id: number,
  name: string,
  args: Record<string, unknown> = {},
  progressToken?: string,
): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args, _meta: progressToken ? { ...META, progressToken } : META },
});

let endpoint: HttpEndpoint;
beforeAll(async () => {
  endpoint = await overtimeServer().listen({ port: 0 });
});
afterAll(() => endpoint.close());

describe('handler time limits on a fake clock', () => {
  it("answers a round when its limit passes, not before, and aborts the handler's signal then", async () => {
    fakeClock();
    const notes: unknown[] = [];
    const env = {
      principal: undefined,
      signal: new AbortController().signal,
      notify: (n: unknown) => notes.push(n),
    };
    const answer = track(overtimeServer().core.handle(toolCall(1, 'overtime', { tag: 'clock' }, 'p1'), env));
    await happened.seen('clock:started');
    await vi.advanceTimersByTimeAsync(99);
    expect(answer.settled).toBe(false);
    expect(happened.list).toEqual(['clock:started']);
    await vi.advanceTimersByTimeAsync(1);
    expect(happened.list).toEqual(['clock:started', 'clock:aborted:HandlerTimeoutError']);
    expect(answer.value).toMatchObject({
      id: 1,
      result: {
        resultType: 'complete',
        isError: true,
        content: [{ type: 'text', text: 'overtime did not finish within 100 ms' }],
      },
    });
    // Once answered, its progress and logs go nowhere.
    release.resolve();
    await happened.seen('clock:late progress sent');
    expect(notes).toEqual([
      {
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: 'p1', progress: 0, total: 2 },
      },
    ]);
  });

  it('applies the server-wide handlerTimeoutMs to handlers without their own', async () => {
    fakeClock();
    const untilReleased = (name: string) => async () => {
      const gate = release;
      happened.record(`${name}:started`);
      await gate.promise;
      return text('done');
    };
    const server = new McpServer({ name: 't', version: '1', handlerTimeoutMs: 60, logger: quiet })
      .tool({ name: 'slow', description: 'runs until released' }, untilReleased('slow'))
      .tool(
        { name: 'patient', description: 'runs until released, allowed 1 s', timeoutMs: 1_000 },
        untilReleased('patient'),
      );
    const env = { principal: undefined, signal: new AbortController().signal, notify() {} };
    const slow = track(server.core.handle(toolCall(1, 'slow'), env));
    const patientReply = server.core.handle(toolCall(2, 'patient'), env);
    const patient = track(patientReply);
    await happened.seen('slow:started');
    await happened.seen('patient:started');
    await vi.advanceTimersByTimeAsync(59);
    expect(slow.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(slow.value).toMatchObject({
      result: { isError: true, content: [{ text: 'slow did not finish within 60 ms' }] },
    });
    // Its own limit, not the server's: still running just before 1 s, then it answers for itself.
    await vi.advanceTimersByTimeAsync(939);
    expect(patient.settled).toBe(false);
    release.resolve();
    const done = await patientReply;
    expect(done).toMatchObject({ result: { content: [{ text: 'done' }] } });
    expect((done as { result: { isError?: boolean } }).result.isError).toBeUndefined();
  });
});

describe('handler time limits over HTTP', () => {
  it('ends a tool past its limit with an isError result as the last SSE event, after the progress sent in time', async () => {
    const reply = await mcp(
      endpoint.url,
      'tools/call',
      { name: 'overtime', arguments: { tag: 'http' } },
      { meta: { progressToken: 'p1' } },
    );
    expect(reply.status).toBe(200);
    expect(reply.messages).toHaveLength(2);
    expect(reply.messages[0]).toMatchObject({
      method: 'notifications/progress',
      params: { progressToken: 'p1', progress: 0 },
    });
    expect(reply.response.result).toMatchObject({
      resultType: 'complete',
      isError: true,
      content: [{ type: 'text', text: 'overtime did not finish within 100 ms' }],
    });
    // The handler saw why it was stopped before the answer went out; what it sends afterwards breaks nothing.
    expect(happened.list).toEqual(['http:started', 'http:aborted:HandlerTimeoutError']);
    release.resolve();
    await happened.seen('http:late progress sent');
    expect((await mcp(endpoint.url, 'tools/list')).status).toBe(200);
  });

  it('drops a failure that comes after the limit (no unhandled rejection) and keeps serving', async () => {
    const reply = await mcp(endpoint.url, 'tools/call', { name: 'overtime_failure', arguments: {} });
    expect(reply.response.result).toMatchObject({
      isError: true,
      content: [{ text: 'overtime_failure did not finish within 50 ms' }],
    });
    release.resolve();
    await happened.seen('late failure thrown');
    // A request round trip: an unhandled rejection would have surfaced by its end.
    expect((await mcp(endpoint.url, 'tools/list')).status).toBe(200);
  });
  it('counts a flow step against the limit', async () => {
    const reply = await mcp(endpoint.url, 'tools/call', { name: 'overtime_step', arguments: {} });
    expect(reply.response.result).toMatchObject({
      isError: true,
      content: [{ text: 'overtime_step did not finish within 50 ms' }],
    });
  });

  it('answers a prompt, a resource and a completion past their limit with -32603 naming them', async () => {
    const prompt = await mcp(endpoint.url, 'prompts/get', { name: 'overtime_prompt' });
    expect(prompt.status).toBe(500);
    expect(prompt.response.error).toEqual({
      code: -32603,
      message: 'Request timed out: overtime_prompt did not finish within 50 ms',
    });
    const resource = await mcp(endpoint.url, 'resources/read', { uri: 'test://overtime' });
    expect(resource.response.error).toEqual({
      code: -32603,
      message: 'Request timed out: test://overtime did not finish within 50 ms',
    });
    const completion = await mcp(endpoint.url, 'completion/complete', {
      ref: { type: 'ref/prompt', name: 'overtime_prompt' },
      argument: { name: 'topic', value: 'x' },
    });
    expect(completion.response.error).toEqual({
      code: -32603,
      message: 'Request timed out: completion of topic did not finish within 50 ms',
    });
  });

  it('keeps limits and other server-only options out of listed definitions', async () => {
    const prompts = await mcp(endpoint.url, 'prompts/list');
    const resources = await mcp(endpoint.url, 'resources/list');
    const templates = await mcp(endpoint.url, 'resources/templates/list');
    const tools = await mcp(endpoint.url, 'tools/list');
    const listed = JSON.stringify([prompts, resources, templates, tools].map((r) => r.response.result));
    expect(listed).toContain('overtime_prompt');
    expect(listed).toContain('test://overtime');
    for (const key of [
      '"timeoutMs":',
      '"complete":',
      '"maxRounds":',
      '"stateTtlMs":',
      '"unsealedAnswers":',
    ]) {
      expect(listed).not.toContain(key);
    }
  });

  it('refuses a limit that is not a positive whole number of milliseconds, naming the option', () => {
    expect(() => new McpServer({ name: 't', version: '1', handlerTimeoutMs: 0 })).toThrow(
      'McpServer: handlerTimeoutMs must be an integer from 1 to 2147483647, got 0',
    );
    expect(() =>
      new McpServer({ name: 't', version: '1' }).tool({ name: 'x', timeoutMs: 1.5 }, () => text('x')),
    ).toThrow('handler options: timeoutMs must be an integer from 1 to 2147483647, got 1.5');
  });
});

describe('handler time limits over stdio', () => {
  it('answers a timed-out call, writes nothing after it, and still sends nothing for a cancelled one', async () => {
    fakeClock();
    const { input, output, messages: lines } = stdioPipes();
    const done = serveStdio(overtimeServer().core, { input, output });
    const call = (id: number) => `${JSON.stringify(toolCall(id, 'overtime', { tag: `t${id}` }, `t${id}`))}\n`;
    input.write(call(1));
    input.write(call(2));
    await happened.seen('t1:started');
    await happened.seen('t2:started');
    input.write(
      `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2 } })}\n`,
    );
    await happened.seen('t2:aborted:AbortError');
    // Both limits pass: the first call is answered with its timeout, the cancelled one still gets nothing.
    await vi.advanceTimersByTimeAsync(100);
    await happened.seen('t1:aborted:HandlerTimeoutError');
    release.resolve();
    await happened.seen('t1:late progress sent');
    await happened.seen('t2:late progress sent');
    input.end();
    await done;
    const forOne = lines.filter(
      (l) => l.id === 1 || (l.params as { progressToken?: string })?.progressToken === 't1',
    );
    expect(forOne.map((l) => l.method ?? 'response')).toEqual(['notifications/progress', 'response']);
    expect(forOne[1]).toMatchObject({ result: { isError: true } });
    expect(lines.filter((l) => l.id === 2)).toEqual([]);
    // Only the progress sent before the cancellation: nothing after it.
    expect(
      lines.filter((l) => (l.params as { progressToken?: string })?.progressToken === 't2'),
    ).toHaveLength(1);
  });
});

describe('Deadline and a long-lived transport signal', () => {
  it('leaves no abort listener behind on a signal shared by every request', async () => {
    const shutdown = new AbortController();
    const env = { principal: undefined, signal: shutdown.signal, notify() {} };
    const core = testServer().core;
    const call = (id: number, wait: boolean): JsonRpcRequest => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'signal_reader', arguments: { wait }, _meta: META },
    });
    for (let i = 0; i < 20; i++) {
      const reply = await core.handle(call(i, i % 2 === 0), env);
      expect(reply).toMatchObject({ result: { content: [{ text: 'false' }] } });
    }
    // Handlers that read the signal and then fail, synchronously or not, release it too.
    for (let i = 0; i < 6; i++) {
      const failing = call(100 + i, i % 2 === 0);
      (failing.params as { arguments: Record<string, unknown> }).arguments.fail = true;
      const reply = await core.handle(failing, env);
      expect(reply).toMatchObject({ error: { code: -32603 } });
    }
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
  });
});

describe('Deadline: a wait on a person stops the clock (issue 37, item 7)', () => {
  /** A Deadline of `ms` racing `work`, on a fake clock; `answer` is the race's outcome once it settles. */
  function raced(ms: number, work: Promise<string>) {
    const deadline = new Deadline(ms);
    const box: { answer?: string } = {};
    void deadline
      .race(work, () => 'timed out')
      .then((answer) => {
        box.answer = answer;
      });
    return { deadline, box };
  }

  it('resumes with the time that was left, across overlapping waits, and not before the last one ends', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const work = deferred<string>();
    const { deadline, box } = raced(1_000, work.promise);
    await vi.advanceTimersByTimeAsync(400);
    const [first, second] = [deferred(), deferred()];
    const waits = [deadline.paused(first.promise), deadline.paused(second.promise)];
    await vi.advanceTimersByTimeAsync(10_000);
    first.resolve();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(box.answer).toBeUndefined();
    second.resolve();
    await Promise.all(waits);
    await vi.advanceTimersByTimeAsync(599);
    expect(box.answer).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(box.answer).toBe('timed out');
    expect(deadline.expired).toBe(true);
  });

  it('a wait begun before the race holds the clock from the start; one after the round ended passes through', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const person = deferred();
    const work = deferred<string>();
    const deadline = new Deadline(100);
    const waited = deadline.paused(person.promise);
    const box: { answer?: string } = {};
    void deadline
      .race(work.promise, () => 'timed out')
      .then((a) => {
        box.answer = a;
      });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(box.answer).toBeUndefined();
    person.resolve();
    await waited;
    work.resolve('done');
    await vi.advanceTimersByTimeAsync(0);
    expect(box.answer).toBe('done');
    // The round is over: a late wait neither arms a timer nor holds anything.
    expect(await deadline.paused(Promise.resolve('late'))).toBe('late');
    expect(vi.getTimerCount()).toBe(0);
  });
});
