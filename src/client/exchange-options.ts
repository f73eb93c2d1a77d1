// How one request goes out on a connection (connection.ts) or its 2025 session (legacy-session.ts): kept apart so
// neither imports the other for it.
import type {
  ClientCapabilities,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResponse,
} from '../protocol/index.js';

/** How one request goes out: its signal, where its notifications and server requests go, extra headers. */
export interface ExchangeOptions {
  signal: AbortSignal;
  onNotification?: ((n: JsonRpcNotification) => void) | undefined;
  headers?: Record<string, string> | undefined;
  /** Ask for progress notifications (a progressToken equal to the request's id). */
  progress?: boolean | undefined;
  /** Who answers the requests a 2025 server sends on this request's stream. */
  onServerRequest?: ((request: JsonRpcRequest) => Promise<JsonRpcResponse>) | undefined;
  /** Capabilities declared on this request instead of the connection's (a raw round declares no tasks). */
  capabilities?: ClientCapabilities | undefined;
}
