// What a transport tells the core about one request, and where the core writes its log lines. Kept apart from the
// dispatcher so that transports, the round pipeline and handler contexts all depend on this, not on each other.
import { setMaxListeners } from 'node:events';
import type { JsonRpcNotification } from '../protocol/index.js';
import type { Principal } from './context.js';

/** Structured log lines (pino-compatible: fields first, then the message). */
export interface Logger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/** What the transport knows about one request. */
export interface RequestEnvironment {
  principal: Principal | undefined;
  signal: AbortSignal;
  /** Send a notification related to this request (HTTP upgrades the response to SSE on first use). */
  notify(notification: JsonRpcNotification): void;
  /**
   * Answer this request's error with another HTTP status and extra headers than its JSON-RPC code implies (a rate
   * limit's 429 and Retry-After). Transports without HTTP leave it out.
   */
  overrideHttpStatus?(status: number, headers: Readonly<Record<string, string>>): void;
  /** Set when the request came from a 2025 client through the legacy bridge: the revision that client speaks. */
  readonly bridged?: string;
  /**
   * Aborted when the transport stops taking requests (the HTTP server closing, stdin ended): a long-lived request
   * (subscriptions/listen) then ends with its answer instead of being cut.
   */
  readonly closing?: AbortSignal;
  /** Set when the round runs inside a task (the tasks extension) on the server's side: the task's id. */
  readonly taskId?: string;
  /** The request's HTTP headers, read for the caller's trace context (`traceparent`) when tracing is on. */
  readonly traceHeaders?: Readonly<Record<string, string | string[] | undefined>>;
  /** A 2025 client's session, as a digest of its Mcp-Session-Id (never the id itself): the span's mcp.session.id. */
  readonly sessionId?: string;
}

/** Writes one JSON line per event to stderr, so stdout stays clean for the stdio transport. */
export const stderrLogger: Logger = {
  info: (fields, message) =>
    process.stderr.write(`${JSON.stringify({ level: 'info', message, ...fields })}\n`),
  warn: (fields, message) =>
    process.stderr.write(`${JSON.stringify({ level: 'warn', message, ...fields })}\n`),
  error: (fields, message) =>
    process.stderr.write(`${JSON.stringify({ level: 'error', message, ...fields })}\n`),
};

/** A transport's `closing` signal. Every open subscription stream listens to it: many listeners are no leak here. */
export function closingController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}
