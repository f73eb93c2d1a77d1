// The HTTP edge of a server: who may call (bearer auth), the browser sign-in, 2025-era clients and the pages. Set on
// the serving side (`mcpHttp`, `listen`), not on McpServer; the server resolves them against its keyring.
import type { BearerAuth } from '../../auth/index.js';
import type { Logger } from '../environment.js';
import type { PageRoutes } from '../http.js';
import type { LegacyBridge } from '../legacy/bridge.js';
import type { LegacyHttpOptions } from '../legacy/http-front.js';
import type { ServerCore } from '../request-handler.js';
import type { RoundObserver } from '../round/observer.js';
import type { LegacyClientOptions, SignInSetup } from '../server.js';

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
