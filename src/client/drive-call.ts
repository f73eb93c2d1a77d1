// How McpClient drives one of its calls: a DriverTarget over its connection, handed to the one round loop
// (round-loop.ts). Each round plans its headers, registers who answers a 2025 server's requests that arrive outside
// the round's stream, and sends; the loop does everything else. The extension's task requests are sent from here too.
import type { InputKind, JsonObject, JsonRpcNotification, Result } from '../protocol/index.js';
import type { CallOptions } from './client-options.js';
import type { Connection, RequestOptions } from './connection.js';
import type { DriverOptions, DriverTarget, MrtrOutcome, TaskWire } from './driver.js';
import { abortError, RemoteError } from './errors.js';
import type { InputResolver } from './resolvers.js';
import { driveMrtr } from './round-loop.js';

/** What a call needs of its client. */
export interface CallHost {
  connection: Connection;
  resolvers: readonly InputResolver[];
  declared: ReadonlySet<InputKind>;
  followsTasks: boolean;
  /** The client's `mrtr` defaults (a call's own options win). */
  defaults: Omit<DriverOptions, 'signal' | 'onEvent'> | undefined;
}

/** The call itself: what is called, and for tools/call the headers each round carries. */
export interface CallSpec {
  method: string;
  params: JsonObject;
  /** The tool or prompt name, or the resource URI. */
  target: string | undefined;
  headersFor?: ((signal: AbortSignal) => Promise<Record<string, string>>) | undefined;
  /** Follow this task instead of sending the call (McpClient.followTask). */
  resume?: DriverTarget['resume'];
}

export function driveCall<R extends Result>(
  host: CallHost,
  call: CallSpec,
  options: CallOptions,
): Promise<MrtrOutcome<R>> {
  const { connection } = host;
  const { progress, meta, ...mrtr } = options;
  const endpoint = connection.transport.endpoint ?? connection.transport.label;
  const target: DriverTarget = {
    method: call.method,
    params: meta ? { ...call.params, _meta: meta } : call.params,
    target: call.target,
    declared: host.declared,
    resolvers: host.resolvers,
    server: connection.serverInfo?.name ?? connection.transport.label,
    endpoint,
    // tasks.md "Supported Methods": only tools/call may become a task.
    tasks: call.method === 'tools/call' && host.followsTasks ? taskWire(connection) : undefined,
    resume: call.resume,
    send: async (params, signal, onNotification, onServerRequest) => {
      // The call's own signal (its deadline included) bounds everything a round does, header planning too.
      const headers = call.headersFor ? await call.headersFor(signal) : undefined;
      // A 2025 server may ask on its session's own stream instead (legacy-session.ts): this round answers those too.
      const { activeCalls } = connection.legacy;
      if (onServerRequest) activeCalls.add(onServerRequest);
      try {
        return await connection.exchange(call.method, params, {
          signal,
          onNotification,
          headers,
          progress,
          onServerRequest,
        });
      } finally {
        if (onServerRequest) activeCalls.delete(onServerRequest);
      }
    },
  };
  return driveMrtr<R>(target, { ...host.defaults, ...mrtr });
}

/** The extension's three requests, each with the client's `_meta` (the tasks extension declared) and a new id. */
export function taskWire(
  connection: Connection,
  onNotification?: (n: JsonRpcNotification) => void,
): TaskWire {
  return {
    get: (taskId, signal) => connection.exchange('tasks/get', { taskId }, { signal, onNotification }),
    update: (taskId, inputResponses, signal) =>
      connection.exchange(
        'tasks/update',
        { taskId, inputResponses: inputResponses as JsonObject },
        { signal },
      ),
    cancel: (taskId, signal) => connection.exchange('tasks/cancel', { taskId }, { signal }),
  };
}

/** One tasks/get or tasks/cancel within the request time limit; a JSON-RPC error is thrown as RemoteError. */
export async function taskRequest(
  connection: Connection,
  which: 'get' | 'cancel',
  taskId: string,
  options: RequestOptions | undefined,
): Promise<unknown> {
  const { signal, done } = connection.withTimeout(options);
  try {
    if (signal.aborted) throw abortError(signal);
    const wire = taskWire(connection, which === 'get' ? options?.onNotification : undefined);
    const response = await wire[which](taskId, signal);
    if ('error' in response) throw new RemoteError(response.error);
    return response.result;
  } finally {
    done();
  }
}
