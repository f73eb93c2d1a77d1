// McpClient.callTool: a tools/call driven by the round loop, with the Mcp-Param-* headers its tool's x-mcp-header
// annotations ask for, and streamable-http.mdx's one retry after a HeaderMismatch (the schema may have changed),
// all within one deadline.
import { type CallToolResult, ErrorCode, type JsonObject } from '../protocol/index.js';
import type { CallOptions } from './client-options.js';
import type { Connection } from './connection.js';
import { type CallHost, driveCall } from './drive-call.js';
import { CLIENT_DEFAULTS, type MrtrOutcome } from './driver.js';
import type { KnownTools } from './known-tools.js';

export interface ToolCallHost extends CallHost {
  tools: KnownTools;
  /** tools/list, which teaches `tools` each tool's headers. */
  listTools(options: { signal?: AbortSignal | undefined; timeoutMs?: number }): Promise<unknown>;
}

/**
 * The Mcp-Param-* headers a tools/call of `name` with `args` carries: Streamable HTTP and 2026-07-28 only (other
 * transports may ignore x-mcp-header). `refresh` lists the tools when the tool is not known yet.
 */
export function toolCallHeaders(
  connection: Connection,
  tools: KnownTools,
  name: string,
  args: JsonObject,
  signal: AbortSignal,
  refresh: (signal: AbortSignal) => Promise<void>,
): Promise<Record<string, string>> {
  if (connection.transport.kind !== 'http' || connection.generation === 'legacy') return Promise.resolve({});
  return tools.headersFor(name, args, signal, refresh);
}

export async function callTool(
  host: ToolCallHost,
  name: string,
  args: JsonObject,
  options: CallOptions,
): Promise<MrtrOutcome<CallToolResult>> {
  const { tools } = host;
  const excluded = (rounds: number): MrtrOutcome<CallToolResult> => ({
    status: 'protocol_error',
    rounds,
    message: `tool "${name}" was excluded: ${tools.rejection(name)}`,
  });
  if (tools.rejection(name) !== undefined) return excluded(0);
  // One deadline for the whole call: a tools/list refresh inside it, and the retry after HeaderMismatch, count too.
  const timeoutMs = options.timeoutMs ?? host.defaults?.timeoutMs ?? CLIENT_DEFAULTS.timeoutMs;
  const endsAt = Date.now() + timeoutMs;
  const left = () => Math.max(1, endsAt - Date.now());
  let refreshed = false;
  const refresh = (signal: AbortSignal | undefined) =>
    host.listTools({ signal, timeoutMs: left() }).then(
      () => undefined,
      (error: unknown) => {
        // Only the call's own end (abort, deadline) stops it; a list that fails just leaves the headers unplanned.
        if (signal?.aborted) throw error;
      },
    );
  const headersFor = (signal: AbortSignal) =>
    toolCallHeaders(host.connection, tools, name, args, signal, async () => {
      if (refreshed) return;
      refreshed = true;
      await refresh(signal);
    });
  const call = { method: 'tools/call', params: { name, arguments: args }, target: name, headersFor };
  const outcome = await driveCall<CallToolResult>(host, call, { ...options, timeoutMs });
  // streamable-http.mdx: on HeaderMismatch, refresh tools/list (the schema may have changed) and retry once.
  if (outcome.status !== 'server_error' || outcome.error.code !== ErrorCode.HeaderMismatch || refreshed)
    return outcome;
  refreshed = true;
  tools.forget(name);
  if (Date.now() >= endsAt) return { status: 'timeout', rounds: outcome.rounds, timeoutMs };
  try {
    await refresh(options.signal);
  } catch {
    return options.signal?.aborted
      ? { status: 'aborted', rounds: outcome.rounds, reason: options.signal.reason }
      : { status: 'timeout', rounds: outcome.rounds, timeoutMs };
  }
  if (tools.rejection(name) !== undefined) return excluded(outcome.rounds);
  const again = await driveCall<CallToolResult>(host, call, { ...options, timeoutMs: left() });
  return { ...again, rounds: again.rounds + outcome.rounds } as MrtrOutcome<CallToolResult>;
}
