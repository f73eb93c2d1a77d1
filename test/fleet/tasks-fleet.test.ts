// Tasks on a fleet: two instances share a keyring and a real SQLite store file. Any instance answers tasks/get and
// takes the answers; a task whose instance died is run again by another once its claim lapses (the clock is moved
// past the lease, never waited for).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { z } from 'zod';
import { elicitationForm } from '../../src/flow/index.js';
import { McpServer, text } from '../../src/server/index.js';
import { generateKeySpec } from '../../src/state/index.js';
import { SqliteStore } from '../../src/stores/index.js';
import { mcp } from '../helpers/mcp-http.js';
import { Happenings } from '../helpers/signals.js';

// biome-ignore lint/suspicious/noExplicitAny: replies are read as loose JSON, checked by the expectations
type Loose = any;

const LEASE_MS = 5_000;
const WITH_TASKS = {
  'io.modelcontextprotocol/clientCapabilities': {
    elicitation: { form: {} },
    extensions: { 'io.modelcontextprotocol/tasks': {} },
  },
};
const Confirm = elicitationForm(z.object({ confirm: z.boolean() }));

afterEach(() => {
  vi.useRealTimers();
});

async function fleet() {
  const dir = mkdtempSync(join(tmpdir(), 'mrtr-tasks-fleet-'));
  const keys = generateKeySpec();
  const happened = new Happenings();
  const instance = async (name: 'a' | 'b') => {
    const store = new SqliteStore(join(dir, 'shared.db'));
    const server = new McpServer({
      name: 'fleet',
      version: '1',
      stateKeys: keys,
      replayStore: store,
      tasks: { leaseMs: LEASE_MS },
      logger: { info() {}, warn() {}, error() {} },
    })
      .tool({ name: 'work', description: 'hangs on a, answers on b', task: 'optional' }, async (_a, ctx) => {
        happened.record(`work:${name}`);
        // Instance a "dies" mid-round: its handler never finishes on its own.
        if (name === 'a') await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
        return text(`done on ${name}`);
      })
      .tool({ name: 'confirm', description: 'asks once', task: 'optional' }, async (_a, ctx) => {
        const answer = await ctx.ask.elicit('Go?', Confirm, { key: 'go' });
        return text(`answered on ${name}: ${answer.action}`);
      });
    const endpoint = await server.http({ port: 0 }).listen();
    return { server, endpoint, store };
  };
  const a = await instance('a');
  const b = await instance('b');
  onTestFinished(async () => {
    await a.endpoint.close();
    await b.endpoint.close();
    await a.store.close();
    await b.store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const on = (which: { endpoint: { url: string } }) => (method: string, params: Record<string, unknown>) =>
    mcp(which.endpoint.url, method, params, { meta: WITH_TASKS }).then((r) => r.response as Loose);
  return { a, b, onA: on(a), onB: on(b), happened };
}

async function until(get: () => Promise<Loose>, done: (t: Loose) => boolean): Promise<Loose> {
  for (let i = 0; i < 2000; i++) {
    const task = (await get()).result;
    if (done(task)) return task;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error('the task never got there');
}

describe('tasks on a fleet of two instances', () => {
  it('a task made on one instance is seen and answered on the other', async () => {
    const { onA, onB } = await fleet();
    const { taskId } = (await onA('tools/call', { name: 'confirm', arguments: {} })).result;
    const asking = await until(
      () => onB('tasks/get', { taskId }),
      (t) => t.status === 'input_required',
    );
    expect(Object.keys(asking.inputRequests)).toEqual(['go']);
    await onB('tasks/update', {
      taskId,
      inputResponses: { go: { action: 'accept', content: { confirm: true } } },
    });
    const done = await until(
      () => onA('tasks/get', { taskId }),
      (t) => t.status === 'completed',
    );
    expect(done.result.content[0].text).toBe('answered on b: accept');
  });

  it('a task whose instance died mid-round is run again by the other once its claim lapses', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { a, onA, onB, happened } = await fleet();
    const { taskId } = (await onA('tools/call', { name: 'work', arguments: {} })).result;
    await happened.seen('work:a');
    // Instance a stops: no more renewals, nothing more written.
    a.server.close();
    expect((await onB('tasks/get', { taskId })).result.status).toBe('working');
    expect(happened.list).toEqual(['work:a']);
    vi.setSystemTime(Date.now() + LEASE_MS + 1);
    const done = await until(
      () => onB('tasks/get', { taskId }),
      (t) => t.status === 'completed',
    );
    expect(done.result.content[0].text).toBe('done on b');
    expect(happened.list).toEqual(['work:a', 'work:b']);
  });

  it('a live instance renews its claim: the other leaves the round alone long past one lease', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'] });
    const { onA, onB, happened } = await fleet();
    const { taskId } = (await onA('tools/call', { name: 'work', arguments: {} })).result;
    await happened.seen('work:a');
    // Three leases go by; the renewal (every third of a lease) keeps a's claim alive each time.
    for (let step = 0; step < 9; step++) {
      vi.advanceTimersByTime(LEASE_MS / 3 + 1);
      for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
      expect((await onB('tasks/get', { taskId })).result.status).toBe('working');
    }
    expect(happened.list).toEqual(['work:a']);
    await onA('tasks/cancel', { taskId });
    expect((await onB('tasks/get', { taskId })).result.status).toBe('cancelled');
  });
});
