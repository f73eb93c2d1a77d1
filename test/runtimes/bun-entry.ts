// The fixture under Bun's own HTTP server: `bun bun-entry.ts` prints the address it listens on.
// #region bun
import { openStore } from 'mrtr/stores';
import { fixtureApp } from './fixture-server.js';

// #endregion

declare const Bun: {
  serve(options: {
    hostname: string;
    port: number;
    fetch(
      request: Request,
      server: { requestIP(request: Request): { address: string } | null },
    ): Promise<Response>;
  }): { port: number };
};

// #region bun
// REPLAY_STORE=redis://HOST:PORT/DB: a store the fleet shares, over Bun's TCP sockets.
const store = process.env.REPLAY_STORE;
const app = fixtureApp(store === undefined ? undefined : await openStore(store));
// The server after the request gives the pages the caller's address (the development sign-in is for this machine).
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch: (request, bun) => app.fetch(request, bun),
});
// #endregion
console.log(`listening on http://127.0.0.1:${server.port}`);
