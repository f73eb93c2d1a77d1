// The HTTP edge of a server: who may call (bearer auth), the browser sign-in, 2025-era clients and the pages. Set on
// the serving side (`mcpHttp`, `listen`), not on McpServer; the server resolves them against its keyring.
import type { BearerAuth, DevTokens, OidcSignInOptions } from '../auth/index.js';
import type { SharedStore } from '../stores/index.js';
import type { Logger } from './environment.js';
import type { PageRoutes } from './http-wire.js';
import type { AnswerRelay } from './legacy/answer-relay.js';
import type { LegacyBridge } from './legacy/bridge.js';
import type { LegacyHttpOptions } from './legacy/http-front.js';
import type { ServerCore } from './request-handler.js';
import type { RoundObserver } from './round/observer.js';

/** What a serving side names; a name left out keeps the server's own (deprecated) option. */
export interface HttpEdgeSettings {
  auth?: BearerAuth | undefined;
  signIn?: SignInSetup | undefined;
  legacyClients?: boolean | LegacyClientOptions | undefined;
}

/** The edge, resolved: what the endpoint and the routes in front of it are built from. */
export interface ResolvedHttpEdge {
  core: ServerCore;
  logger: Logger;
  auth: BearerAuth | undefined;
  /** The sign-in pages (if any), then the pages added with `server.page()`. */
  pages: PageRoutes[];
  observers: readonly RoundObserver[] | undefined;
  legacy: LegacyBridge | undefined;
  legacyHttp: LegacyHttpOptions;
}

export interface SignInSetup {
  oidc?: OidcSignInOptions;
  devTokens?: DevTokens;
  /** The server's public origin (default: the origin of `auth.resource`). */
  origin?: string;
  sessionTtlMs?: number;
}

/** Tuning for the 2025 bridge. */
export interface LegacyClientOptions {
  /** Where ended sessions and log levels are kept (default: `replayStore`, else this process's memory). */
  store?: SharedStore;
  /** Carries a client's answer to the instance waiting for it, in a fleet (mrtr/stores `RedisAnswerRelay`). */
  relay?: AnswerRelay;
  /** How long a session id stays valid after its handshake (default 24 h). */
  sessionMaxAgeMs?: number;
  /** How long a flow waits for the client's answer to one question (default 10 min). */
  answerTimeoutMs?: number;
  /** The `retry` hint of SSE priming events (default 1 s). */
  retryMs?: number;
  /**
   * Close a 2025-11-25 client's SSE stream still open after this long; it reconnects with Last-Event-ID and the
   * call goes on (SSE polling, for proxies that cut long connections). Default: never.
   */
  pollAfterMs?: number;
  /**
   * Bounds on questions waiting for a 2025 client's answer on this instance, which hold memory until answered or
   * timed out: per principal (default 1 000, and 20 sessions with questions waiting; past them a principal gets 429
   * with Retry-After), per session (default 100) and in all (default 10 000).
   */
  maxPendingPerPrincipal?: number;
  maxSessionsPerPrincipal?: number;
  maxPendingPerSession?: number;
  maxPendingAnswers?: number;
}
