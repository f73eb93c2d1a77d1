// McpClient and the tasks extension over Streamable HTTP, against a scripted server that answers each request when
// the test says so: what the client declares, the requests it sends (Mcp-Name: taskId), and its public task methods.
import { afterEach, describe, expect, it } from 'vitest';
import {
  capabilitiesFor,
  McpClient,
  type MrtrEvent,
  RemoteError,
  scriptedResolver,
} from '../../src/client/index.js';
import { type TaskServer, taskServer, taskState } from './task-server.js';

let server: TaskServer | undefined;
let client: McpClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

const TASKS = 'io.modelcontextprotocol/tasks';
const capsOf = (params: { _meta: Record<string, unknown> }) =>
  params._meta['io.modelcontextprotocol/clientCapabilities'] as { extensions?: Record<string, unknown> };
const confirm = {
  method: 'elicitation/create',
  params: {
    mode: 'form',
    message: 'Delete a.txt?',
    requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } }, required: ['confirm'] },
  },
};

async function started(
  options: ConstructorParameters<typeof McpClient>[0] extends infer O ? Partial<O> : never,
) {
  server = await taskServer();
  client = new McpClient({
    server: server.url,
    resolvers: [scriptedResolver({ confirm: { action: 'accept', content: { confirm: true } } })],
    ...options,
  });
  return { server, client };
}

describe('what the client declares', () => {
  it('the tasks extension on every request of a call, the task requests included', async () => {
    const { server, client } = await started({});
    const call = client.callTool('slow', { seconds: 1 });
    const c = await server.next('tools/call');
    expect(capsOf(c.params).extensions).toEqual({ [TASKS]: {} });
    c.reply({ resultType: 'task', ...taskState('t1', 'working') });
    const g = await server.next('tasks/get');
    expect(capsOf(g.params).extensions).toEqual({ [TASKS]: {} });
    g.reply({ resultType: 'complete', ...taskState('t1', 'completed', { result: { content: [] } }) });
    expect(await call).toMatchObject({ status: 'complete', rounds: 1 });
    for (const s of server.seen)
      expect(capsOf(s.body.params).extensions, s.body.method).toEqual({ [TASKS]: {} });
  });

  it('a capabilities override keeps its own fields and gains the extension; tasks: false declares none', async () => {
    const { client: withOverride } = await started({ capabilities: capabilitiesFor(['elicitation.form']) });
    expect(withOverride.capabilities).toEqual({ elicitation: { form: {} }, extensions: { [TASKS]: {} } });
    const off = new McpClient({
      server: 'http://127.0.0.1:1/mcp',
      tasks: false,
      capabilities: { extensions: { [TASKS]: {}, 'x.example/other': {} } },
    });
    expect(off.capabilities).toEqual({ extensions: { 'x.example/other': {} } });
    await expect(off.getTask('t1')).rejects.toThrow('tasks: false');
  });

  it('with tasks: false, a server that still answers a task broke the protocol', async () => {
    const { server, client } = await started({ tasks: false });
    const call = client.callTool('slow');
    const c = await server.next('tools/call');
    expect(capsOf(c.params).extensions).toBeUndefined();
    c.reply({ resultType: 'task', ...taskState('t1', 'working') });
    const outcome = await call;
    expect(outcome).toMatchObject({ status: 'protocol_error' });
    expect(server.calls('tasks/get')).toEqual([]);
  });

  it('round() does not declare it: a raw round hands its one answer back and cannot carry a task', async () => {
    const { server, client } = await started({});
    const round = client.round('tools/call', { name: 'slow' });
    const c = await server.next('tools/call');
    expect(capsOf(c.params).extensions).toBeUndefined();
    c.reply({ resultType: 'complete', content: [] });
    await round;
  });
});

describe('following a task over HTTP', () => {
  it('polls, answers its question with tasks/update, completes; every task request names the task in Mcp-Name', async () => {
    const { server, client } = await started({});
    const events: MrtrEvent[] = [];
    const call = client.callTool('confirm_delete', { filename: 'a.txt' }, { onEvent: (e) => events.push(e) });
    (await server.next('tools/call')).reply({ resultType: 'task', ...taskState('t-1/é', 'working') });
    const g1 = await server.next('tasks/get');
    g1.reply({
      resultType: 'complete',
      ...taskState('t-1/é', 'input_required', { inputRequests: { confirm }, statusMessage: 'asking' }),
    });
    const u = await server.next('tasks/update');
    expect(u.params).toMatchObject({
      taskId: 't-1/é',
      inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
    });
    u.reply({ resultType: 'complete' });
    (await server.next('tasks/get')).reply({
      resultType: 'complete',
      ...taskState('t-1/é', 'completed', { result: { content: [{ type: 'text', text: 'a.txt deleted' }] } }),
    });
    expect(await call).toMatchObject({
      status: 'complete',
      rounds: 2,
      result: { content: [{ type: 'text', text: 'a.txt deleted' }] },
    });
    const encoded = `=?base64?${Buffer.from('t-1/é').toString('base64')}?=`;
    for (const method of ['tasks/get', 'tasks/update']) {
      for (const s of server.calls(method)) {
        expect(s.headers['mcp-method']).toBe(method);
        expect(s.headers['mcp-name']).toBe(encoded);
      }
    }
    expect(events.filter((e) => e.type === 'task').map((e) => (e as { status: string }).status)).toEqual([
      'working',
      'input_required',
      'completed',
    ]);
  });

  it('aborting the call sends tasks/cancel (Mcp-Name: taskId) and ends as aborted', async () => {
    const { server, client } = await started({});
    const controller = new AbortController();
    const call = client.callTool('slow', {}, { signal: controller.signal });
    (await server.next('tools/call')).reply({ resultType: 'task', ...taskState('t9', 'working') });
    await server.next('tasks/get'); // held: the poll is in flight when the person gives up
    controller.abort(new Error('interrupted'));
    const cancel = await server.next('tasks/cancel');
    expect(cancel.params.taskId).toBe('t9');
    expect(cancel.headers['mcp-name']).toBe('t9');
    expect(cancel.headers['mcp-method']).toBe('tasks/cancel');
    cancel.reply({ resultType: 'complete' });
    expect(await call).toMatchObject({ status: 'aborted', rounds: 1 });
  });
});

describe('the public task methods', () => {
  it('getTask: one tasks/get, the task as the server shows it', async () => {
    const { server, client } = await started({});
    const got = client.getTask('t2');
    const g = await server.next('tasks/get');
    expect(g.params.taskId).toBe('t2');
    expect(g.headers['mcp-name']).toBe('t2');
    g.reply({ resultType: 'complete', ...taskState('t2', 'working', { statusMessage: 'half way' }) });
    expect(await got).toMatchObject({ taskId: 't2', status: 'working', statusMessage: 'half way' });
  });

  it('getTask of an unknown task: RemoteError -32602; of garbage: a ProtocolViolation', async () => {
    const { server, client } = await started({});
    const unknown = client.getTask('nope');
    (await server.next('tasks/get')).fail({
      code: -32602,
      message: 'Failed to retrieve task: Task not found',
    });
    const error = await unknown.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RemoteError);
    expect(error).toMatchObject({ code: -32602 });
    const garbage = client.getTask('t3');
    (await server.next('tasks/get')).reply({ resultType: 'complete', taskId: 't3', status: 'done' });
    await expect(garbage).rejects.toThrow('unknown task status "done"');
  });

  it('followTask: resumes a task made elsewhere, from a first poll or from the state given', async () => {
    const { server, client } = await started({});
    const followed = client.followTask('t4');
    (await server.next('tasks/get')).reply({
      resultType: 'complete',
      ...taskState('t4', 'input_required', { inputRequests: { confirm } }),
    });
    (await server.next('tasks/update')).reply({ resultType: 'complete' });
    (await server.next('tasks/get')).reply({
      resultType: 'complete',
      ...taskState('t4', 'completed', { result: { content: [] } }),
    });
    expect(await followed).toMatchObject({ status: 'complete', rounds: 1 });

    const seeded = client.followTask('t5', {
      task: taskState('t5', 'completed', { result: { content: [{ type: 'text', text: 'ok' }] } }) as never,
    });
    expect(await seeded).toMatchObject({ status: 'complete', rounds: 0 });
    expect(server.calls('tasks/get').filter((s) => s.body.params.taskId === 't5')).toEqual([]);
  });

  it('followTask with cancelOnAbort: false stops following on abort and sends no tasks/cancel', async () => {
    const { server, client } = await started({});
    const controller = new AbortController();
    const followed = client.followTask('t8', { signal: controller.signal, cancelOnAbort: false });
    await server.next('tasks/get'); // held: the poll is in flight when the watcher leaves
    controller.abort(new Error('interrupted'));
    expect(await followed).toMatchObject({ status: 'aborted' });
    // A cancel would have been sent before the abort resolved the call; a later request comes after it.
    const got = client.getTask('t8');
    (await server.next('tasks/get')).reply({ resultType: 'complete', ...taskState('t8', 'working') });
    await got;
    expect(server.calls('tasks/cancel')).toEqual([]);
    expect(() => client.followTask('t8', { cancelOnAbort: 'no' as never })).toThrow(
      'followTask: cancelOnAbort must be a boolean',
    );
  });

  it('followTask of an unknown task ends as server_error -32602; cancelTask sends tasks/cancel', async () => {
    const { server, client } = await started({});
    const followed = client.followTask('gone');
    (await server.next('tasks/get')).fail({ code: -32602, message: 'Task has expired' });
    expect(await followed).toMatchObject({ status: 'server_error', error: { code: -32602 } });
    const cancelled = client.cancelTask('t6');
    const c = await server.next('tasks/cancel');
    expect(c.params.taskId).toBe('t6');
    c.reply({ resultType: 'complete' });
    await cancelled;
    const refused = client.cancelTask('t7');
    (await server.next('tasks/cancel')).fail({ code: -32602, message: 'Task not found' });
    await expect(refused).rejects.toMatchObject({ code: -32602 });
    await expect(client.cancelTask('')).rejects.toThrow('taskId must be a non-empty string');
  });
});
