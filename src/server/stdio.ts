// stdio transport (basic/transports/stdio.mdx): newline-delimited JSON-RPC on stdin/stdout, same dispatch as HTTP.
import type { Readable, Writable } from 'node:stream';
import {
  classifyMessage,
  ErrorCode,
  errorResponse,
  type JsonObject,
  type JsonRpcResponse,
  LineSplitter,
  META_PROTOCOL_VERSION,
} from '../protocol/index.js';
import type { Principal } from './context.js';
import { SERVER_DEFAULTS } from './defaults.js';
import { closingController, type Logger, stderrLogger } from './environment.js';
import type { LegacyBridge } from './legacy/bridge.js';
import type { LegacySession } from './legacy/session.js';
import { refusalOf, serializeNotification, serializeResponse } from './message.js';
import { checkIntegerOption } from './option-checks.js';
import type { RequestHandler } from './request-handler.js';
import type { RoundObserver } from './round/observer.js';
import { TransportRefusals } from './transport-refusal.js';

export interface StdioOptions {
  input?: Readable;
  output?: Writable;
  /** Largest accepted line in bytes (default 1 MiB): longer lines are answered with an error and dropped. */
  maxLineBytes?: number;
  /** Where transport failures are reported (default: JSON lines on stderr, which stdio leaves free). */
  logger?: Logger;
  /** The caller, taken from the environment (stdio servers get credentials from their environment, not the wire). */
  principal?: Principal;
  /**
   * Told of every line refused before dispatch (too long, not JSON, not JSON-RPC) as a `refused` RoundEvent; the
   * refusal waits for their promises. `McpServer.stdio()` passes the server's own observers.
   */
  observers?: readonly RoundObserver[];
  /**
   * Serve a 2025-era client that opens with `initialize` through this bridge: its requests, and its answers to the
   * server's requests. `McpServer.stdio()` passes the server's own unless `legacyClients: false`.
   */
  legacy?: LegacyBridge;
}

/** Serve until the input ends. Requests run concurrently; each response is one line. */
export function serveStdio(handler: RequestHandler, options: StdioOptions = {}): Promise<void> {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  checkIntegerOption('serveStdio', 'maxLineBytes', options.maxLineBytes);
  const maxLine = options.maxLineBytes ?? SERVER_DEFAULTS.maxLineBytes;
  const inFlight = new Map<string | number, AbortController>();
  const pending = new Set<Promise<void>>();
  /** Aborted when input ends: open subscriptions answer, so the loop can finish. */
  const closing = closingController();
  const write = (message: JsonRpcResponse) => output.write(`${serializeResponse(message)}\n`);
  const refusals = options.observers?.length
    ? new TransportRefusals(options.observers, options.logger ?? stderrLogger, 'stdio', options.principal)
    : undefined;
  /** Send a refusal once the observers (if any) have recorded it. */
  const refuse = (reason: string, response: JsonRpcResponse) => {
    if (!refusals) return void write(response);
    const started = performance.now();
    const recorded = refusals.refuse(
      undefined,
      reason,
      started,
      () => write(response),
      () =>
        write(
          errorResponse(undefined, ErrorCode.InternalError, 'Internal error while recording the refusal'),
        ),
    );
    // The input may end before the refusal is recorded: finishing waits for it, as for a request in flight.
    if (recorded) {
      const task = recorded.finally(() => pending.delete(task));
      pending.add(task);
    }
  };
  const writeNotification = (notification: unknown) => {
    const text = serializeNotification(notification);
    if (text !== undefined) output.write(`${text}\n`);
  };

  // Set once a 2025 client's initialize opened the connection's session: from then on the bridge answers it.
  let legacySession: LegacySession | undefined;
  const legacy = options.legacy;
  const track = (task: Promise<unknown>) => {
    const t = task.finally(() => pending.delete(t)) as Promise<void>;
    pending.add(t);
  };

  const onLine = (line: string) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      refuse(
        'parse_error',
        errorResponse(undefined, ErrorCode.ParseError, 'Parse error: the line is not valid JSON'),
      );
      return;
    }
    const message = classifyMessage(parsed);
    // The 2025 bridge's: a handshake, which opens the connection's session, and once one is open, the client's
    // answers to the bridge's questions (whose ids are strings).
    if (legacy && message.kind === 'request' && message.request.method === 'initialize') {
      track(
        legacy.initialize(message.request, options.principal).then(({ response, session }) => {
          legacySession ??= session;
          write(response);
        }),
      );
      return;
    }
    if (legacy && legacySession && message.kind === 'response' && typeof message.response.id === 'string') {
      const answer = message.response;
      track(
        legacy.deliver(legacySession, answer as unknown as JsonObject).then((delivered) => {
          if (!delivered)
            (options.logger ?? stderrLogger).info({ id: answer.id }, 'answer for no waiting request');
        }),
      );
      return;
    }
    if (message.kind === 'invalid' || message.kind === 'response')
      return void refuse('invalid_message', refusalOf(message));
    if (message.kind === 'notification') {
      // notifications/cancelled is how a stdio client cancels an in-flight request.
      const { method, params } = message.notification;
      if (method === 'notifications/cancelled') {
        const id = params?.requestId;
        if (typeof id === 'string' || typeof id === 'number') inFlight.get(id)?.abort();
      }
      return;
    }
    const { request } = message;
    const abort = new AbortController();
    inFlight.set(request.id, abort);
    // On a connection a 2025 client opened, requests without a 2026 `_meta` are the bridge's.
    const meta = request.params?._meta as JsonObject | undefined;
    const session = meta?.[META_PROTOCOL_VERSION] === undefined ? legacySession : undefined;
    const answer =
      legacy && session
        ? legacy.handle(request, session, options.principal, {
            send: writeNotification,
            signal: abort.signal,
          })
        : handler.handleRequest(request, {
            principal: options.principal,
            signal: abort.signal,
            notify: writeNotification,
            closing: closing.signal,
          });
    const task = Promise.resolve(answer)
      .then((response) => {
        // A cancelled request gets no response (basic/patterns/cancellation.mdx).
        if (!abort.signal.aborted) write(response);
      })
      // handle() never rejects; only writing the answer could throw. Last line of defence, as in http.ts.
      .catch((error: unknown) => {
        (options.logger ?? stderrLogger).error(
          { err: error instanceof Error ? error.stack : String(error) },
          'unexpected transport error',
        );
      })
      .finally(() => {
        inFlight.delete(request.id);
        pending.delete(task);
      });
    pending.add(task);
  };

  // An overlong line is refused as soon as it passes the cap, and never held in memory past it.
  const splitter = new LineSplitter(maxLine, {
    line: onLine,
    overflow: () =>
      refuse(
        'line_too_long',
        errorResponse(undefined, ErrorCode.InvalidRequest, `Message exceeds the limit of ${maxLine} bytes`),
      ),
  });
  return new Promise((resolve) => {
    input.on('data', (chunk: Buffer | string) =>
      splitter.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk),
    );
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      splitter.end();
      // Requests in flight still get their answers; open subscriptions end with theirs.
      closing.abort();
      Promise.allSettled([...pending]).then(() => resolve());
    };
    input.once('end', finish);
    input.once('close', finish);
    input.once('error', finish);
  });
}
