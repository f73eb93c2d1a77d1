// The one thing a transport needs from whatever answers requests: the dispatcher, or a gateway or bridge that puts
// its own handling behind the same hardened HTTP and stdio fronts.
import type { JsonRpcRequest, JsonRpcResponse } from '../protocol/index.js';
import type { RequestEnvironment } from './environment.js';
import type { HeaderParam } from './header-params.js';

export interface RequestHandler {
  /**
   * Answer one JSON-RPC request. Never throws: failures are JSON-RPC error responses. Returns the response itself
   * when it is ready at once, so a transport on the hot path need not wait a microtask for it.
   */
  handleRequest(request: JsonRpcRequest, env: RequestEnvironment): JsonRpcResponse | Promise<JsonRpcResponse>;
  /**
   * The `x-mcp-header` parameters a tool declares, for the HTTP transport's header ↔ body checks: the tool as this
   * request's caller finds it (undefined for one hidden from the caller, as for an unknown one). The handler may keep
   * what it found for `handleRequest` with the same `env`, so the request resolves its tool once.
   */
  headerParams(
    tool: string,
    env: RequestEnvironment,
  ): HeaderParam[] | undefined | Promise<HeaderParam[] | undefined>;
  /** Stop background work (the tasks' checks and rounds): the HTTP transport calls it when it closes. */
  close?(): void;
}

/** The server's own handler, as `McpServer.core` hands it to custom transports and tests. */
export interface ServerCore extends RequestHandler {
  /** `handleRequest`, always as a promise. */
  handle(request: JsonRpcRequest, env: RequestEnvironment): Promise<JsonRpcResponse>;
}
